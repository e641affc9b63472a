"""A tool changing the session state through its run_context (cookbook: session state)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext


def add_item(run_context: RunContext, item: str) -> str:
    """Add an item to the shopping list."""
    run_context.session_state["shopping_list"].append(item)
    return f"The shopping list is now {run_context.session_state['shopping_list']}"


agent = Agent(
    model=OpenAIChat(id="gpt-4o-mini"),
    tools=[add_item],
    session_state={"shopping_list": []},
)
run = agent.run("Add milk to my list")
print(run.content)
print(f"Final session state: {agent.get_session_state()}")
