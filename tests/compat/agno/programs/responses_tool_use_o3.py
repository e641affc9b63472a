"""A reasoning model calling a tool with nothing stored at OpenAI: its reasoning item
comes back encrypted and goes back with the tool's result
(cookbook: models/openai/responses/tool_use_o3)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

looked_up = []


def get_population(country: str) -> int:
    """Get the population of a country.

    Args:
        country: The country's name.
    """
    looked_up.append(country)
    return 83_000_000


agent = Agent(model=OpenAIResponses(id="o3", store=False), tools=[get_population])

run = agent.run("How many people live in Germany?")
print(run.content)
