"""A tool that ends the run cleanly (cookbook: exceptions/stop_agent_run)."""

from ferrule.agent import Agent
from ferrule.exceptions import StopAgentRun
from ferrule.models.openai import OpenAIChat


def transfer_money(amount: int) -> str:
    """Transfer money to the user's savings."""
    if amount > 1000:
        raise StopAgentRun("Transfers over 1000 need a human: the run stops here.")
    return "done"


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[transfer_money])
run = agent.run("Move 5000 to my savings")
print(run.status, run.content)
