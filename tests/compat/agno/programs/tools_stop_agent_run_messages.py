"""A tool that ends the run with a message for the user in the conversation (Agno's
StopAgentRun with agent_message)."""

from ferrule.agent import Agent
from ferrule.exceptions import StopAgentRun
from ferrule.models.openai import OpenAIChat


def transfer_money(amount: int) -> str:
    """Transfer money to the user's savings."""
    if amount > 1000:
        raise StopAgentRun(
            "Transfers over 1000 need a human.",
            agent_message="A colleague will call you to confirm the transfer.",
        )
    return "done"


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[transfer_money])
run = agent.run("Move 5000 to my savings")
print(run.status, run.content)
