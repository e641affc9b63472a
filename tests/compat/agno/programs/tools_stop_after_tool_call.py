"""A tool whose result ends the run (cookbook: tools/stop_after_tool_call)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool


@tool(stop_after_tool_call=True, show_result=True)
def get_answer(question: str) -> str:
    """Look an answer up."""
    return f"The answer to {question!r} is 42."


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_answer])
run = agent.run("What is the answer to life?")
print(run.content)
