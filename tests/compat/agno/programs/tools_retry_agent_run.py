"""A tool that makes the model try again until it has enough (cookbook: retry_tool_call)."""

from ferrule.agent import Agent
from ferrule.exceptions import RetryAgentRun
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext


def add_item(run_context: RunContext, item: str) -> str:
    """Add an item to the shopping list."""
    run_context.session_state["shopping_list"].append(item)
    if len(run_context.session_state["shopping_list"]) < 2:
        raise RetryAgentRun(
            f"Shopping list is: {run_context.session_state['shopping_list']}. "
            "Minimum 2 items in the shopping list. Add another item."
        )
    return f"The shopping list is now {run_context.session_state['shopping_list']}"


agent = Agent(
    model=OpenAIChat(id="gpt-4o-mini"),
    session_state={"shopping_list": []},
    tools=[add_item],
)
run = agent.run("Add milk")
print(run.content)
