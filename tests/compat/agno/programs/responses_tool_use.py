"""A Python function as a tool of a Responses agent
(cookbook: models/openai/responses/tool_use, with a local tool instead of web search)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

calls = []


def get_weather(city: str) -> str:
    """Get the current weather of a city.

    Args:
        city: The city's name.
    """
    calls.append(city)
    return f"It is 21 degrees and sunny in {city}."


agent = Agent(model=OpenAIResponses(id="gpt-4o"), tools=[get_weather], markdown=True)

run = agent.run("What is the weather in Paris?")
print(run.content)
