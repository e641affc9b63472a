"""Ailoy 0.1's raw API-model components (the case ``run-openai-infer`` of its Node
``runtime.spec.ts``, which the Python runtime speaks the same way): ``define("openai", ...)``
with ``{api_key, model}``, then ``call_iter_method(name, "infer", {messages})`` yielding ONE
item, ``{message, finish_reason}`` with the message's content a string. Ailoy asks the real
gpt-4o; here a loopback server speaking OpenAI's wire answers (``OPENAI_BASE_URL``), in this
process and over ``ferrule serve``. The same types for Claude, Gemini and Grok answer the
same shape from their own wires (ferrule-ailoy's types over each provider's model; the
suite of `ferrule_ailoy.testing` runs ``claude`` and ``gemini`` here, against their
providers' own request validators)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ferrule import AsyncRuntime, Runtime
from ferrule.server import ServerThread
from ferrule_ailoy.testing import APIModelSuite, APIModelUnderTest
from ferrule_anthropic.testing import validator as anthropic_wire
from ferrule_gemini.testing import validator as gemini_wire
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

from ..conftest import PROVIDERS, TEST_KEY, Provider

# the claude and gemini types, each against its provider's own wire validator (ferrule-ailoy's
# own tests run openai and grok, against OpenAI's)


class TestClaude(APIModelSuite):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=anthropic_wire) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
            yield APIModelUnderTest(rt, server, "claude", "claude-sonnet-4-20250514", ANTHROPIC)


class TestGemini(APIModelSuite):
    @pytest.fixture
    async def ailoy(self, monkeypatch):
        async with LoopbackServer(validate=gemini_wire) as server, AsyncRuntime() as rt:
            monkeypatch.setenv("GEMINI_BASE_URL", server.url + "/v1beta")
            yield APIModelUnderTest(rt, server, "gemini", "gemini-2.5-flash", GEMINI)


QUESTION = "Who is the president of US in 2021? Just answer in two words."


@pytest.fixture(params=["in_process", "served"])
def openai_runtime(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Runtime, LoopbackServer]]:
    """Ailoy's ``new Runtime("inproc://openai")`` (or a client of ``ferrule serve``) with
    OpenAI moved to a loopback server."""
    with LoopbackServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        if request.param == "in_process":
            rt = Runtime("inproc://openai")
            try:
                yield rt, server
            finally:
                rt.stop()
        else:
            with ServerThread() as url, Runtime(url=url) as rt:
                yield rt, server


def test_run_openai_infer(openai_runtime: tuple[Runtime, LoopbackServer]) -> None:
    rt, server = openai_runtime
    server.script(reply(PROVIDERS["openai"].dialect, "Joe Biden."))
    rt.define("openai", "oai", {"api_key": TEST_KEY, "model": "gpt-4o"})
    items = list(
        rt.call_iter_method("oai", "infer", {"messages": [{"role": "user", "content": QUESTION}]})
    )
    assert len(items) == 1  # Ailoy's API models answer in one piece
    for resp in items:
        assert resp["finish_reason"] == "stop"
        assert resp["message"]["role"] == "assistant"
        assert isinstance(resp["message"]["content"], str)
        assert "Joe Biden" in resp["message"]["content"]
    sent = server.requests[-1]
    assert sent.json["model"] == "gpt-4o" and sent.json["messages"][-1]["content"] == QUESTION
    assert sent.headers["authorization"] == f"Bearer {TEST_KEY}"
    rt.delete("oai")


@pytest.mark.parametrize("provider", ["openai", "claude", "gemini", "grok"])
def test_run_api_model_infer_with_a_tool_call(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of Ailoy's four types, a request with tools whose answer calls one, then the
    turn with the tool's result (OpenAI's history: arguments a JSON string)."""
    spec: Provider = PROVIDERS[provider]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_exchange_rate",
                "description": "The rate between two currencies.",
                "parameters": {
                    "type": "object",
                    "properties": {"base": {"type": "string"}, "target": {"type": "string"}},
                    "required": ["base", "target"],
                },
            },
        }
    ]
    question = {"role": "user", "content": "How many KRW is one USD?"}
    call = ToolCall("call_1", "get_exchange_rate", {"base": "USD", "target": "KRW"})
    with LoopbackServer() as server:
        monkeypatch.setenv(spec.base_url_variable, server.url + spec.suffix)
        server.script(reply(spec.dialect, tool_calls=(call,)), reply(spec.dialect, "1391.5 KRW"))
        rt = Runtime(f"inproc://{provider}")
        try:
            rt.define(provider, "m", {"api_key": TEST_KEY, "model": spec.model})
            (first,) = rt.call_iter_method("m", "infer", {"messages": [question], "tools": tools})
            assert first["finish_reason"] == "tool_calls"
            (called,) = first["message"]["tool_calls"]
            assert called["function"] == {
                "name": "get_exchange_rate",
                "arguments": {"base": "USD", "target": "KRW"},
            }
            history = [
                question,
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": called["id"],
                            "type": "function",
                            "function": {
                                "name": "get_exchange_rate",
                                "arguments": '{"base": "USD", "target": "KRW"}',
                            },
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": called["id"], "content": "1391.5"},
            ]
            (second,) = rt.call_iter_method("m", "infer", {"messages": history, "tools": tools})
            assert second["finish_reason"] == "stop"
            assert second["message"] == {"role": "assistant", "content": "1391.5 KRW"}
            assert "1391.5" in server.requests[-1].body.decode()  # the tool's result went along
        finally:
            rt.stop()


def test_run_openai_define_without_a_key_names_it() -> None:
    rt = Runtime("inproc://openai_refused")
    try:
        with pytest.raises(InvalidInputError) as refused:
            rt.define("openai", "oai", {"model": "gpt-4o"})
        assert [e["path"] for e in refused.value.errors] == ["$.api_key"]
    finally:
        rt.stop()
