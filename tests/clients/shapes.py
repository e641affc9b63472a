"""What the client tests ask the server for: the weather tool (in OpenAI's and Anthropic's
shapes) and the ``City`` structured output."""

from __future__ import annotations

from pydantic import BaseModel

CITY_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}

#: The weather tool as Chat Completions takes it.
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": CITY_SCHEMA,
    },
}

#: The same tool as Anthropic's Messages API takes it.
ANTHROPIC_WEATHER = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "input_schema": CITY_SCHEMA,
}


class City(BaseModel):
    name: str
    population: int
