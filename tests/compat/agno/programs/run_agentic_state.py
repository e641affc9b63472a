"""A shopping list the model keeps in the session state itself (cookbook: agentic state)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat

agent = Agent(
    model=OpenAIChat(id="gpt-4o-mini"),
    session_state={"shopping_list": []},
    enable_agentic_state=True,
    add_session_state_to_context=True,
    instructions="Keep the shopping list in the session state.",
)

run = agent.run("Add milk, eggs, and bread to the shopping list")
print(run.content)
print(f"Final session state: {agent.get_session_state()}")
