from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
agent = Agent(
    name="Assistant",
    model=OpenAIChat(id="gpt-4"),
    description="A helpful AI assistant"
)
response = agent.run("What is machine learning?")
print(response.content)
