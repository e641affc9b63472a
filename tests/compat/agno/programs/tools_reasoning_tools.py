"""The model thinks in steps with ReasoningTools (cookbook: reasoning/tools/reasoning_tools)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools.reasoning import ReasoningTools

reasoning_agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    tools=[ReasoningTools(enable_think=True, enable_analyze=True, add_instructions=True)],
    instructions="Use tables where possible",
    markdown=True,
)
run = reasoning_agent.run("Which is bigger, 9.11 or 9.9?")
print(run.content)
