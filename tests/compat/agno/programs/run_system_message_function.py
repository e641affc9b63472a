"""A system message made by a function of the run's context."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.run import RunContext


def system_message(run_context: RunContext) -> str:
    return f"You answer {run_context.user_id} in one sentence."


agent = Agent(model=OpenAIChat(id="gpt-4o"), system_message=system_message, user_id="ada")
run = agent.run("Who are you?")
print(run.content)
