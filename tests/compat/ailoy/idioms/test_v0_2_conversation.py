"""Ailoy 0.2.5's README and its conversation guides, as programs: the quick starts
(README, bindings/python/README.md, tutorial/getting-started), multi-turn conversation,
system message, streaming and thinking. Each is the guide's code with ``ailoy`` ->
``ferrule``; on the offline SmolLM2 where a 135M model can do what is checked, else on a
scripted model (recording what reached it) or a loopback provider."""

from __future__ import annotations

import asyncio
import json

import ferrule as ai
import pytest
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

from ..conftest import TEST_KEY, Provider
from .conftest import Script

# -- quick starts -------------------------------------------------------------------------


def test_python_readme_sync_quickstart(capsys: pytest.CaptureFixture[str]) -> None:
    """bindings/python/README.md, synchronous: ``LangModel.new_local_sync``, ``Agent(model)``,
    ``for resp in agent.run_sync("What is your name?"): print(resp)`` on the local model."""

    def main() -> list[ai.MessageOutput]:
        model = ai.LangModel.new_local_sync("Qwen/Qwen3-0.6B")
        agent = ai.Agent(model)
        outputs = []
        for resp in agent.run_sync("What is your name?"):
            print(resp)
            outputs.append(resp)
        return outputs

    outputs = main()
    # one assistant message, ended by the model itself, printed with its text
    assert [o.message.role for o in outputs] == ["assistant"]
    assert outputs[0].finish_reason == ai.FinishReason.Stop()
    text = outputs[0].message.contents[0].text
    assert text.strip() and text in capsys.readouterr().out


def test_python_readme_async_quickstart(capsys: pytest.CaptureFixture[str]) -> None:
    """bindings/python/README.md, asynchronous: ``await LangModel.new_local``, then
    ``async for resp in agent.run("What is your name?")``, under ``asyncio.run(main())``."""
    outputs: list[ai.MessageOutput] = []

    async def main() -> None:
        model = await ai.LangModel.new_local("Qwen/Qwen3-0.6B")
        agent = ai.Agent(model)
        async for resp in agent.run("What is your name?"):
            print(resp)
            outputs.append(resp)

    asyncio.run(main())
    assert [o.message.role for o in outputs] == ["assistant"]
    assert outputs[0].finish_reason == ai.FinishReason.Stop()
    assert outputs[0].message.contents[0].text in capsys.readouterr().out


def test_readme_one_line_agent_is_a_stream() -> None:
    """The README's first example reads ``response = agent.run(...)`` then
    ``response.contents[0].text``: Ailoy 0.2.5's ``run`` returns an iterator (its
    ``_core.pyi``), so that line fails on Ailoy too. ferrule's ``Agent(lm).run`` is the same
    stream, and the error says how to read it; the README's intent is one loop away."""
    agent = ai.Agent(ai.LangModel.new_local_sync("Qwen/Qwen3-8B"))
    response = agent.run("Explain quantum computing in one sentence")
    with pytest.raises(AttributeError, match=r"for resp in agent\.run_sync"):
        print(response.contents[0].text)  # type: ignore[attr-defined]

    answers = [resp.message for resp in agent.run_sync("Explain quantum computing in one sentence")]
    assert answers[-1].role == "assistant" and answers[-1].contents[0].text.strip()


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_getting_started_api_model(
    loopback_provider: tuple[Provider, LoopbackServer], capsys: pytest.CaptureFixture[str]
) -> None:
    """tutorial/getting-started, the API tab: ``LangModel.new_stream_api(spec="OpenAI",
    model_name="gpt-4o", api_key=...)`` by keyword, ``isinstance(resp.message.contents[0],
    ai.Part.Text)``."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "Silicon dreams in quiet code."))

    async def main() -> None:
        lm = ai.LangModel.new_stream_api(spec="OpenAI", model_name="gpt-4o", api_key=TEST_KEY)
        agent = ai.Agent(lm)
        async for resp in agent.run("Please give me a short poem about AI."):
            if isinstance(resp.message.contents[0], ai.Part.Text):
                print(resp.message.contents[0].text)

    asyncio.run(main())
    assert capsys.readouterr().out == "Silicon dreams in quiet code.\n"
    (request,) = server.requests
    assert request.json["model"] == "gpt-4o"
    assert request.json["messages"][-1]["content"] in (
        "Please give me a short poem about AI.",
        [{"type": "text", "text": "Please give me a short poem about AI."}],
    )
    assert request.headers["authorization"] == f"Bearer {TEST_KEY}"


def test_getting_started_local_model_progress(capsys: pytest.CaptureFixture[str]) -> None:
    """tutorial/getting-started, the local tab: ``LangModel.new_local(model_name=...,
    progress_callback=print)`` prints each step of making the model ready (the last is
    "Initialized"), then the agent answers."""
    texts: list[str] = []

    async def main() -> None:
        lm = await ai.LangModel.new_local(model_name="Qwen/Qwen3-0.6B", progress_callback=print)
        agent = ai.Agent(lm)
        async for resp in agent.run(
            "Please give me a short poem about AI.",
            ai.AgentConfig(inference=ai.LangModelInferConfig(max_tokens=24)),
        ):
            if isinstance(resp.message.contents[0], ai.Part.Text):
                texts.append(resp.message.contents[0].text)

    asyncio.run(main())
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1].startswith("CacheProgress(") and "Initialized" in printed[-1]
    assert texts and texts[0].strip()


# -- multi-turn ---------------------------------------------------------------------------


async def test_multi_turn_given_history(runtime: ai.Runtime) -> None:
    """tutorial/multi-turn-conversation: the previous turns are given as messages (the
    assistant's too, contents a plain string) and the model answers from them."""
    script = Script(["John's favorite color is blue."])
    lm = await ai.LangModel.new(script.model(), runtime=runtime)
    agent = ai.Agent(lm)
    messages = [
        ai.Message(role="user", contents="John's favorite color is blue. Please remember that."),
        ai.Message(role="assistant", contents="Great to hear that John's favorite color is blue."),
        ai.Message(role="user", contents="What\u2019s John's favorite color?"),
    ]
    printed = []
    async for resp in agent.run(messages):
        if isinstance(resp.message.contents[0], ai.Part.Text):
            printed.append(resp.message.contents[0].text)
    assert printed == ["John's favorite color is blue."]
    # the whole conversation, in order, reached the model; the agent kept none of it
    assert [(m.role, m.text) for m in script.seen()] == [(m.role, m.text) for m in messages]
    assert agent.get_messages() == []


async def test_multi_turn_chat_loop(runtime: ai.Runtime) -> None:
    """The guide's chat loop: each user line is appended to ``messages``, each output's
    ``resp.message`` too, and the next run is given the list so far."""
    script = Script(["Hello John.", "Your name is John."])
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime))
    messages: list[ai.Message] = []
    said = []
    for user_message in ["My name is John.", "What is my name?"]:
        messages.append(ai.Message(role="user", contents=user_message))
        async for resp in agent.run(messages):
            if isinstance(resp.message.contents[0], ai.Part.Text):
                said.append("Agent: " + resp.message.contents[0].text)
            messages.append(resp.message)
    assert said == ["Agent: Hello John.", "Agent: Your name is John."]
    assert [(m.role, m.text) for m in script.seen(1)] == [
        ("user", "My name is John."),
        ("assistant", "Hello John."),
        ("user", "What is my name?"),
    ]


async def test_multi_turn_on_the_local_model() -> None:
    """The same loop on the local model: the second run's prompt holds the first answer."""
    agent = ai.Agent(await ai.LangModel.new_local("Qwen/Qwen3-0.6B"))
    config = ai.AgentConfig(inference=ai.LangModelInferConfig(max_tokens=16, temperature=0.0))
    messages: list[ai.Message] = []
    for user_message in ["Say the word harbour.", "Say it again."]:
        messages.append(ai.Message(role="user", contents=user_message))
        async for resp in agent.run(messages, config):
            messages.append(resp.message)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert all(m.contents[0].text.strip() for m in messages[1::2])


# -- system message -----------------------------------------------------------------------


async def test_system_message(runtime: ai.Runtime) -> None:
    """tutorial/system-message: a system message (contents one string) and a user message
    (contents a list of ``Part.Text(text=...)``); the model is given both, system first."""
    script = Script(["Arr, Rust frees memory when its owner goes out of scope, matey."])
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime))
    messages = [
        ai.Message(role="system", contents="You are an assistant who always speaks like a pirate."),
        ai.Message(
            role="user",
            contents=[ai.Part.Text(text="Explain how memory management works in Rust.")],
        ),
    ]
    texts = []
    async for resp in agent.run(messages):
        if isinstance(resp.message.contents[0], ai.Part.Text):
            texts.append(resp.message.contents[0].text)
    assert texts == ["Arr, Rust frees memory when its owner goes out of scope, matey."]
    assert script.seen_text() == (
        "system: You are an assistant who always speaks like a pirate.\n"
        "user: Explain how memory management works in Rust."
    )


@pytest.mark.parametrize("loopback_provider", ["openai", "claude", "gemini"], indirect=True)
async def test_system_message_on_each_provider(
    loopback_provider: tuple[Provider, LoopbackServer],
) -> None:
    """The same program on an API model: the system message is in the provider's own place
    (OpenAI's system role, Anthropic's ``system``, Gemini's ``systemInstruction``)."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "Arr."))
    spec = {"openai": "OpenAI", "claude": "Claude", "gemini": "Gemini"}[provider.name]
    agent = ai.Agent(ai.LangModel.new_stream_api(spec, provider.model, TEST_KEY))
    messages = [
        ai.Message(role="system", contents="Speak like a pirate."),
        ai.Message(role="user", contents=[ai.Part.Text(text="Hello.")]),
    ]
    outputs = [resp async for resp in agent.run(messages)]
    assert outputs[-1].message.contents[0].text == "Arr."
    body = server.requests[0].json
    where = {
        "openai": lambda b: b["messages"][0],
        "claude": lambda b: b["system"],
        "gemini": lambda b: b["systemInstruction"],
    }[provider.name](body)
    assert "Speak like a pirate." in json.dumps(where)


# -- streaming ----------------------------------------------------------------------------


async def test_streaming_text_deltas(capsys: pytest.CaptureFixture[str]) -> None:
    """tutorial/streaming: ``run_delta`` on the local model, printing each
    ``PartDelta.Text`` as it comes; the pieces make the whole reply."""
    lm = await ai.LangModel.new_local("Qwen/Qwen3-0.6B")
    agent = ai.Agent(lm)
    pieces = []
    async for resp in agent.run_delta(
        "Please give me a short poem about AI.",
        ai.AgentConfig(inference=ai.LangModelInferConfig(max_tokens=24)),
    ):
        if resp.delta.contents and isinstance(resp.delta.contents[0], ai.PartDelta.Text):
            print(resp.delta.contents[0].text, end="")
            pieces.append(resp.delta.contents[0].text)
    print()
    assert len(pieces) > 1  # streamed, not one block
    assert capsys.readouterr().out == "".join(pieces) + "\n"


async def test_streaming_accumulated_into_messages(runtime: ai.Runtime) -> None:
    """The guide's accumulation: ``acc += resp.delta`` until a ``finish_reason``, then the
    whole message (``acc.to_message()`` in the guide; Ailoy's own name is ``finish()``,
    and both are ferrule's), and a new ``MessageDelta()``. A run that calls a tool streams
    three messages: the call, the tool's result, the answer."""

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: The first.
            b: The second.
        """
        return a + b

    script = Script(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
            {"text": "It is 5.", "chunk_size": 3},
        ]
    )
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime), [add])
    acc = ai.MessageDelta()
    messages, text_pieces = [], []
    async for resp in agent.run_delta("What is 2 + 3?"):
        if resp.delta.contents and isinstance(resp.delta.contents[0], ai.PartDelta.Text):
            text_pieces.append(resp.delta.contents[0].text)
        acc += resp.delta
        if resp.finish_reason is not None:
            messages.append((acc.to_message(), resp.finish_reason))
            acc = ai.MessageDelta()
    roles = [(m.role, reason) for m, reason in messages]
    assert roles == [
        ("assistant", ai.FinishReason.ToolCall()),
        ("tool", ai.FinishReason.Stop()),
        ("assistant", ai.FinishReason.Stop()),
    ]
    assert messages[0][0].tool_calls[0].function.name == "add"
    assert messages[1][0].contents[0].value == 5
    assert messages[2][0].contents[0].text == "It is 5."
    assert text_pieces[-3:] == ["It ", "is ", "5."]
    with pytest.raises(ai.InvalidInputError, match="role"):
        ai.MessageDelta().to_message()


# -- thinking -----------------------------------------------------------------------------


async def test_thinking(runtime: ai.Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    """tutorial/thinking: ``config=AgentConfig(inference=LangModelInferConfig(
    think_effort="enable"))`` asks the model to reason; ``resp.delta.thinking`` streams it,
    before the answer's text."""
    turn = {"reasoning": "Subtract 3x+3y=9 from 4x+3y=12: x=3, so y=0.", "text": "x=3, y=0"}
    script = Script([turn, turn])
    agent = ai.Agent(await ai.LangModel.new(script.model(), runtime=runtime))
    thinking, text = [], []
    async for resp in agent.run_delta(
        "Please solve me a simultaneous equation: x+y=3, 4x+3y=12",
        config=ai.AgentConfig(inference=ai.LangModelInferConfig(think_effort="enable")),
    ):
        if resp.delta.thinking:
            print(resp.delta.thinking, end="")
            thinking.append(resp.delta.thinking)
        if resp.delta.contents and isinstance(resp.delta.contents[0], ai.PartDelta.Text):
            print(resp.delta.contents[0].text, end="")
            text.append(resp.delta.contents[0].text)
    assert "".join(thinking) == turn["reasoning"]
    assert "".join(text) == turn["text"]
    assert capsys.readouterr().out == turn["reasoning"] + turn["text"]
    assert script.requests[0].reasoning is True

    # without the config the model is not asked to think, and no thinking streams
    outputs = [resp async for resp in agent.run("x+y=3, 4x+3y=12")]
    assert script.requests[1].reasoning is False
    assert outputs[-1].message.thinking in (None, "")
    assert outputs[-1].message.contents[0].text == "x=3, y=0"
