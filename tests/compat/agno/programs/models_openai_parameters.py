"""Sampling parameters on the model class: each one goes with every request."""

from ferrule.agent import Agent
from ferrule.models.openai.chat import OpenAIChat

agent = Agent(
    model=OpenAIChat(
        id="gpt-4o-mini",
        temperature=0.2,
        top_p=0.9,
        max_tokens=256,
        seed=42,
        frequency_penalty=0.3,
        presence_penalty=0.1,
        stop=["\n\n\n"],
        user="cookbook-user",
        request_params={"parallel_tool_calls": False},
    ),
)

response = agent.run("Name three prime numbers.")
print(response.content)
