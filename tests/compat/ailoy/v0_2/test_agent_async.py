"""Ailoy 0.2 `test_agent_async.py`: ``Agent(model)`` with ``run_delta`` / ``run`` under an
`AgentConfig`, on the offline model (Qwen3's id by alias) and on each API provider as a
loopback server (`LangModel.new_stream_api`, the endpoint from the provider's variable).
A loopback provider answers as scripted, so the outcome checked there is what the agent
did: the requests it sent (history, tool results, settings) and what it streamed."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import ferrule as ai
import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

from ..conftest import TEST_KEY, Provider

#: Ailoy's spec name and model id for each provider of its tests.
SPECS = {
    "openai": ("OpenAI", "gpt-4o"),
    "gemini": ("Gemini", "gemini-2.5-flash"),
    "claude": ("Claude", "claude-haiku-4-5"),
    "grok": ("Grok", "grok-4-fast"),
}
PROVIDERS = list(SPECS)
CONFIG = ai.AgentConfig(inference=ai.LangModelInferConfig(temperature=0.0, think_effort="disable"))

SIMPLE_CHAT_MESSAGES = [
    "What is your name?",
    [
        ai.Message(role="system", contents="You are a helpful assistant with name 'Ailoy'."),
        ai.Message(role="user", contents="What is your name?"),
    ],
    [
        ai.Message(
            role="system",
            contents=[ai.Part.Text(text="You are a helpful assistant with name 'Ailoy'.")],
        ),
        ai.Message(role="user", contents=[ai.Part.Text(text="What is your name?")]),
    ],
]


@pytest.fixture
def runtime():
    with ai.Runtime() as rt:
        yield rt


@pytest.fixture
def api_agent(loopback_provider: tuple[Provider, LoopbackServer], runtime: ai.Runtime):
    provider, server = loopback_provider
    spec, model = SPECS[provider.name]
    lm = ai.LangModel.new_stream_api(spec, model_name=model, api_key=TEST_KEY, runtime=runtime)
    return ai.Agent(lm), provider, server


async def run_delta(agent: ai.Agent, messages, config=CONFIG):
    """Ailoy's loop: accumulate deltas, finish a message at each finish reason."""
    acc = ai.MessageDelta()
    results, reasons = [], []
    async for resp in agent.run_delta(messages, config=config):
        acc += resp.delta
        if resp.finish_reason is not None:
            reasons.append(resp.finish_reason)
            results.append(acc.finish())
            acc = ai.MessageDelta()
        else:
            for content in resp.delta.contents:
                assert isinstance(content, (ai.PartDelta.Text, ai.PartDelta.Value))
    return results, reasons


@pytest.mark.parametrize("messages", SIMPLE_CHAT_MESSAGES, ids=["str", "text", "parts"])
async def test_simple_chat_qwen3(messages, monkeypatch) -> None:
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "Qwen/Qwen3-4B=SmolLM2-135M-Instruct")
    with ai.Runtime() as rt:
        lm = await ai.LangModel.new_local("Qwen/Qwen3-4B", runtime=rt)
        results, reasons = await run_delta(ai.Agent(lm), messages)
    assert reasons == [ai.FinishReason.Stop()]
    assert results[0].role == "assistant" and results[0].contents[0].text.strip()


@pytest.mark.parametrize("loopback_provider", PROVIDERS, indirect=True)
@pytest.mark.parametrize("messages", SIMPLE_CHAT_MESSAGES, ids=["str", "text", "parts"])
async def test_simple_chat(api_agent, messages) -> None:
    agent, provider, server = api_agent
    server.script(reply(provider.dialect, "My name is Ailoy."))
    results, reasons = await run_delta(agent, messages)
    assert reasons == [ai.FinishReason.Stop()]
    assert results[0].contents[0].text == "My name is Ailoy."
    sent = json.dumps(server.requests[0].json)
    assert "What is your name?" in sent
    assert ("name 'Ailoy'" in sent) == (not isinstance(messages, str))


@pytest.mark.parametrize("loopback_provider", PROVIDERS, indirect=True)
async def test_simple_multiturn(api_agent) -> None:
    agent, provider, server = api_agent
    qna = [
        ("John's favorite color is blue. Please remember that.", ""),
        ("What\u2019s John's favorite color?", "blue"),
        ("Actually, John's favorite color is gray now. Don't forget this.", ""),
        ("What\u2019s John's favorite color?", "gray"),
    ]
    server.script(*(reply(provider.dialect, f"Noted: {a or 'ok'}.") for _, a in qna))
    messages: list[ai.Message] = []
    for question, answer in qna:
        messages.append(ai.Message(role="user", contents=[ai.Part.Text(text=question)]))
        outputs = [resp async for resp in agent.run(messages, config=CONFIG)]
        result = outputs[-1].message
        assert outputs[-1].finish_reason == ai.FinishReason.Stop()
        messages.append(result)
        assert answer in "".join(part.text for part in result.contents).lower()
    # each request carried the whole conversation so far
    for index, request in enumerate(server.requests):
        sent = json.dumps(request.json)
        assert all(json.dumps(q)[1:-1] in sent for q, _ in qna[: index + 1])


@pytest.mark.parametrize("loopback_provider", PROVIDERS, indirect=True)
async def test_python_async_function_tool(api_agent) -> None:
    agent, provider, server = api_agent
    called: list[tuple[str, str]] = []

    async def tool_temperature(
        location: str, unit: Literal["Celsius", "Fahrenheit"] = "Celsius"
    ) -> int:
        """
        Get temperature of the provided location
        Args:
            location: The city name
            unit: The unit of temperature
        Returns:
            int: The temperature
        """
        await asyncio.sleep(0.01)
        called.append((location, unit))
        return 35 if unit == "Celsius" else 95

    agent.add_tool(tool_temperature)
    call = ToolCall("call_1", "tool_temperature", {"location": "Seoul"})
    server.script(
        reply(provider.dialect, tool_calls=(call,)), reply(provider.dialect, "It is 35 degrees.")
    )
    results, reasons = await run_delta(agent, "What is the temperature in Seoul now?")
    assert reasons == [ai.FinishReason.ToolCall(), ai.FinishReason.Stop(), ai.FinishReason.Stop()]
    assert results[0].tool_calls[0].function.name == "tool_temperature"
    assert results[1].role == "tool" and results[1].contents[0].value == 35
    assert results[2].contents[0].text == "It is 35 degrees."
    assert called == [("Seoul", "Celsius")]
    assert "35" in json.dumps(server.requests[1].json)  # the result went back to the model
    agent.remove_tools(["tool_temperature"])
    assert agent.tools == []


async def test_run_config_reaches_the_model() -> None:
    """The run's config is the model's settings for that run only (Ailoy's
    ``AgentConfig.inference``): a three-token cap ends the reply by length."""
    with ai.Runtime() as rt:
        agent = ai.Agent(await ai.LangModel.new_local(runtime=rt))
        capped = ai.AgentConfig(inference=ai.LangModelInferConfig(max_tokens=3))
        outputs = [o async for o in agent.run([ai.Message("user", "Tell a story")], config=capped)]
        assert outputs[-1].finish_reason == ai.FinishReason.Length()
        _results, reasons = await run_delta(agent, "Tell a story", config=capped)
        assert reasons == [ai.FinishReason.Length()]


async def test_run_delta_refuses_a_bad_config() -> None:
    with ai.Runtime() as rt:
        agent = ai.Agent(await ai.LangModel.new_local(runtime=rt))
        with pytest.raises(ai.InvalidInputError, match="AgentConfig"):
            agent.run_delta("Hi", config={"inference": {}})  # type: ignore[arg-type]


@pytest.fixture
def knowledge(runtime: ai.Runtime, tmp_path):
    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb

    kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"), runtime=runtime)
    kb.add_content(
        text_content="Ailoy is an awesome AI agent framework supporting Rust, Python, Nodejs "
        "and WebAssembly.",
        name="ailoy",
    )
    kb.add_content(text_content="The ferry to Holm leaves at nine.", name="ferry")
    yield kb
    kb.close()


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
async def test_knowledge_with_polyfill(api_agent, knowledge) -> None:
    """Ailoy's case: the knowledge is searched for the question and the top document goes
    to the model in Qwen3's polyfill (a Knowledges section in the system message, the
    documents after the question); without knowledge nothing is added."""
    agent, provider, server = api_agent
    server.script(*(reply(provider.dialect, "A framework.") for _ in range(2)))
    agent.set_knowledge(knowledge)
    config = ai.AgentConfig.from_dict(
        {"inference": {"document_polyfill": "Qwen3"}, "knowledge": {"top_k": 1}}
    )
    results, reasons = await run_delta(agent, "What is Ailoy?", config=config)
    assert reasons == [ai.FinishReason.Stop()] and results[0].text == "A framework."
    system, user = server.requests[0].json["messages"]
    assert system["role"] == "system" and "# Knowledges" in json.dumps(system)
    sent_user = json.dumps(user)
    assert "What is Ailoy?<documents>" in sent_user and "WebAssembly" in sent_user
    assert "ferry" not in sent_user  # top_k 1: the best match only

    agent.remove_knowledge()
    await run_delta(agent, "What is Ailoy?", config=config)
    assert [m["role"] for m in server.requests[1].json["messages"]] == ["user"]
    assert "<documents>" not in json.dumps(server.requests[1].json)


async def test_knowledge_with_polyfill_qwen3() -> None:
    """Ailoy's case as it runs there: on the local model (Qwen3-4B, the offline SmolLM2 by
    alias), through its module's one agent, which still holds the tools the earlier cases
    added (terminal, web search, web fetch, a Python function), with a FAISS store of
    1024-wide bge-m3 embeddings: the run answers (the tools are offered in SmolLM2's
    format, not refused) and ends."""

    async def tool_temperature(location: str, unit: Literal["Celsius", "Fahrenheit"] = "Celsius"):
        """
        Get temperature of the provided location
        Args:
            location: The city name
            unit: The unit of temperature
        """
        return 35 if unit == "Celsius" else 95

    agent = ai.Agent(ai.LangModel.new_local_sync("Qwen/Qwen3-4B"))
    agent.add_tools(
        [
            ai.Tool.new_builtin("terminal"),
            ai.Tool.new_builtin("web_search_duckduckgo"),
            ai.Tool.new_builtin("web_fetch"),
            ai.Tool.new_py_function(tool_temperature),
        ]
    )
    vs = ai.VectorStore.new_faiss(1024)
    emb = await ai.EmbeddingModel.new_local("BAAI/bge-m3")
    doc0 = "Ailoy is an awesome AI agent framework supporting Rust, Python, Nodejs and WebAssembly."
    vs.add_vector(ai.VectorStoreAddInput(embedding=await emb.infer(doc0), document=doc0))
    agent.set_knowledge(ai.Knowledge.new_vector_store(vs, emb))
    # A reply cap keeps the 135M model's answer short; Ailoy's config is otherwise this one.
    config = ai.AgentConfig.from_dict(
        {"inference": {"document_polyfill": "Qwen3", "max_tokens": 48, "temperature": 0.0}}
    )
    results, reasons = await run_delta(agent, "What is Ailoy?", config=config)
    assert reasons[-1] in (ai.FinishReason.Stop(), ai.FinishReason.Length())
    assert results[-1].contents and results[-1].contents[0].text.strip()
    agent.remove_knowledge()


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_run_sync_and_run_delta_sync(api_agent) -> None:
    """Ailoy's synchronous twins: the same outputs, read with ``for``."""
    agent, provider, server = api_agent
    server.script(reply(provider.dialect, "One."), reply(provider.dialect, "Two."))
    outputs = list(agent.run_sync("Count", config=CONFIG))
    assert [o.message.text for o in outputs] == ["One."]
    assert outputs[0].finish_reason == ai.FinishReason.Stop()
    acc = ai.MessageDelta()
    for out in agent.run_delta_sync("Count"):
        acc += out.delta
    assert acc.finish().text == "Two."
    assert server.requests[0].json["temperature"] == 0.0  # the config reached the wire
