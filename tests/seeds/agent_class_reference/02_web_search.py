from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools.duckduckgo import DuckDuckGoTools
agent = Agent(
    name="Research Assistant",
    model=OpenAIChat(id="gpt-4"),
    tools=[DuckDuckGoTools()],
    instructions=["Search the web for current information"]
)
response = agent.run("What are the latest developments in AI?")
print(response.content)
