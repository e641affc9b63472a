"""``strict_output`` on the Chat Completions classes (OpenAIChat, OpenAILike, xAI, VLLM,
LlamaCpp against a llama-server): False sends the structured-output schema with
``strict: false``, True strict; checked on the loopback wire (`wire`: conftest)."""

from __future__ import annotations

import pytest
from ferrule.agent import Agent
from ferrule.models.llama_cpp import LlamaCpp
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.models.vllm import VLLM
from ferrule.models.xai import xAI
from ferrule_kernel import InvalidInputError
from pydantic import BaseModel


class City(BaseModel):
    name: str
    country: str


def test_chat_structured_output_guided(wire, program):
    wire.says('{"name": "Tokyo", "country": "Japan"}', '{"name": "Paris", "country": "France"}')
    scope = program("chat_structured_output_guided")
    assert scope["strict"].content.model_dump() == {"name": "Tokyo", "country": "Japan"}
    assert scope["guided"].content.model_dump() == {"name": "Paris", "country": "France"}
    strict, guided = (body["response_format"] for body in wire.bodies)
    assert strict["type"] == guided["type"] == "json_schema"
    # A pydantic schema allows other properties, so it is not sent as strict by default
    # (a closed one is: the plugins' own tests); False says so outright.
    assert "strict" not in strict["json_schema"]
    assert guided["json_schema"]["strict"] is False
    # The same schema either way: only the flag differs, as in Agno.
    assert guided["json_schema"]["schema"] == strict["json_schema"]["schema"]
    assert guided["json_schema"]["schema"]["required"] == ["name", "country"]


@pytest.mark.parametrize(
    "make",
    [
        lambda url: OpenAILike(id="m", base_url=url, strict_output=False),
        lambda url: xAI(id="grok-4-fast-non-reasoning", strict_output=False),
        lambda url: VLLM(id="Qwen/Qwen3-8B", base_url=url, strict_output=False),
        lambda url: LlamaCpp(id="qwen3", base_url=url, strict_output=False),
    ],
    ids=["OpenAILike", "xAI", "VLLM", "LlamaCpp"],
)
def test_every_chat_class_sends_strict_false(wire, make):
    wire.says('{"name": "Lima", "country": "Peru"}')
    agent = Agent(model=make(wire.server.url + "/v1"), output_schema=City)
    assert agent.run("The capital of Peru").content == City(name="Lima", country="Peru")
    assert wire.last["response_format"]["json_schema"]["strict"] is False


def test_a_closed_schema_is_strict_unless_told_otherwise(wire):
    closed = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "additionalProperties": False,
    }
    wire.says('{"name": "Lima"}', '{"name": "Quito"}')
    for strict_output in (True, False):
        Agent(model=OpenAIChat(id="gpt-4o", strict_output=strict_output), output_schema=closed).run(
            "A capital"
        )
    assert [b["response_format"]["json_schema"]["strict"] for b in wire.bodies] == [True, False]
    assert all(b["response_format"]["json_schema"]["schema"] == closed for b in wire.bodies)


def test_strict_output_must_be_a_bool():
    with pytest.raises(InvalidInputError) as info:
        OpenAIChat(id="gpt-4o", strict_output="no")  # type: ignore[typeddict-item]
    assert info.value.errors[0]["path"].endswith("strict_output")


def test_in_process_llama_cpp_takes_strict_output():
    """In process the schema is a grammar whatever the flag, as llama-server's is: the
    component is not handed an attribute it does not take."""
    from ferrule_kernel import Kernel

    model = LlamaCpp(id="qwen3", strict_output=False)
    assert "strict_output" not in model.route(Kernel()).attributes
