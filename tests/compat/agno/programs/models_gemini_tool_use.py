"""A function tool on Gemini (cookbook: models/google/gemini/tool_use)."""

from ferrule.agent import Agent
from ferrule.models.google.gemini import Gemini

converted = []


def to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit.

    Args:
        celsius: The temperature in degrees Celsius.
    """
    converted.append(celsius)
    return celsius * 9 / 5 + 32


agent = Agent(model=Gemini(id="gemini-2.5-flash"), tools=[to_fahrenheit])
run = agent.run("What is 25 degrees Celsius in Fahrenheit?")
print(run.content)
