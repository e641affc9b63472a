"""Mistakes a type checker must catch: each line marked ``# error`` must be reported, and
nothing else. Were a public call typed ``Any``, these lines would pass unnoticed."""

from __future__ import annotations

import attrs
from ferrule import Agent, AgentConfig, LangModel, Runtime, tool
from ferrule_testmodel import TestModel


@attrs.define
class Weather:
    city: str
    degrees: float


@tool
def get_weather(city: str, days: int = 1) -> str:
    """Current weather."""
    return city


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return path


get_weather(3)  # error
get_weather("Oslo", days="two")  # error
delete_file()  # error
too_long: int = get_weather("Oslo")  # error
_ = get_weather.requires_confirmaton  # error

rt = Runtime()
rt.call(3)  # error
_ = rt.call("echo", {"text": "x"}).text  # error

agent = Agent(rt, TestModel())
_ = agent.run("Hi").content + 1  # error
agent.run("Hi", sesion_id="s")  # error
typed = Agent(rt, TestModel(), output_schema=Weather)
_ = typed.run("Weather?").content.temperature  # error
degrees: str = typed.run("Weather?").content.degrees  # error
for event in agent.run("Hi", stream=True):
    _ = event.tool  # error
for response in agent.query("Hi"):
    _ = response.message  # error

# an Agent option misspelt, and one of the wrong type (the keywords come from its settings
# groups: ferrule.agent.settings)
Agent(rt, TestModel(), markdwn=True)  # error
Agent(rt, TestModel(), tool_call_limit="3")  # error
Agent(model=TestModel(), tool_timeout="60")  # error

# each form's run misused: Agno's returns the finished run, Ailoy 0.2's streams (at run
# time, each mistake's message names the other's way too)
for _chunk in agent.run("Hi"):  # error
    pass
agent.run("Hi", AgentConfig())  # error


async def ailoy_form(lm: LangModel) -> None:
    ailoy = Agent(lm)
    _ = ailoy.run("What is your name?").content  # error
    ailoy.run("Hi", stream=True)  # error
    async for _output in Agent(model=lm).run("Hi"):  # error
        pass
