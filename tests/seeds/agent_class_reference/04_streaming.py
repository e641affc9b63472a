from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
agent = Agent(
    name="Streaming Assistant",
    model=OpenAIChat(id="gpt-4"),
    stream=True
)
for chunk in agent.run("Write a short story"):
    if hasattr(chunk, 'content') and chunk.content:
        print(chunk.content, end="", flush=True)
