"""A tool that tells the model, in the conversation, why it must try again (Agno's
RetryAgentRun with user_message / agent_message / messages)."""

from ferrule.agent import Agent
from ferrule.exceptions import RetryAgentRun
from ferrule.models.openai import OpenAIChat


def book_table(people: int) -> str:
    """Book a table for a number of people."""
    if people > 8:
        raise RetryAgentRun(
            "Tables seat at most 8.",
            user_message="Then split us over two tables.",
            agent_message="I will book two tables instead.",
            messages=[{"role": "user", "content": "Both near the window, please."}],
        )
    return f"Booked a table for {people}."


agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[book_table])
run = agent.run("Book a table for 10")
print(run.content)
