"""The @tool decorator names and describes a tool (cookbook: tools/tool_decorator)."""

import random

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.tools import tool

rolled = []


@tool(name="roll_dice", description="Roll a number of six-sided dice and return each face.")
def roll(count: int) -> list[int]:
    faces = [random.Random(count).randint(1, 6) for _ in range(count)]
    rolled.extend(faces)
    return faces


agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[roll])
run = agent.run("Roll two dice for me.")
print(run.content)
