"""Instructions from the agent and the session state, taken by name."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat


def instructions(agent: Agent, session_state: dict) -> list[str]:
    return [f"You are {agent.name}.", f"The user's city is {session_state['city']}."]


agent = Agent(
    name="Tour Guide",
    model=OpenAIChat(id="gpt-4o"),
    instructions=instructions,
    session_state={"city": "Lisbon"},
)
run = agent.run("What should I see today?")
print(run.content)
