"""A function tool on OpenAIChat (cookbook: models/openai/chat/tool_use)."""

import json

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat

calls = []


def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
        city: The city to look up.
    """
    calls.append(city)
    return json.dumps({"city": city, "temperature_c": 21, "sky": "clear"})


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[get_weather], markdown=True)
run = agent.run("What's the weather in Lisbon?")
print(run.content)
