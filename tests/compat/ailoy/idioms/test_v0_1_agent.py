"""Ailoy 0.1.0's README and agent guides, as programs: ``Runtime()`` / ``Agent(rt, model)``
/ ``query`` / ``print`` (README, bindings/python/README.md, tutorial/getting-started),
concepts/agent (system message, ``delete``, API models by id, images, audio, reasoning,
the response format, the message history) and tutorial/managing-conversation and
tutorial/reasoning. On the offline SmolLM2 where a 135M model does what is checked, else on
a scripted model (recording what reached it) or a loopback provider."""

from __future__ import annotations

import base64
import io
import wave
from collections.abc import Iterator

import ferrule as ai
import pytest
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer
from PIL import Image

from ..conftest import TEST_KEY, Provider
from .conftest import Script

PIRATE = "You are a friendly chatbot who always responds in the style of a pirate."


@pytest.fixture
def rt() -> Iterator[ai.Runtime]:
    rt = ai.Runtime()
    yield rt
    rt.stop()


# -- the quick start ----------------------------------------------------------------------


@pytest.mark.parametrize("printer", ["resp.print()", "agent.print(resp)"])
def test_readme_quickstart(printer: str, capsys: pytest.CaptureFixture[str]) -> None:
    """README: ``rt = Runtime()``, ``with Agent(rt, LocalModel("Qwen/Qwen3-0.6B")) as
    agent``, each response of ``agent.query(...)`` printed (``resp.print()`` in the README,
    ``agent.print(resp)`` in bindings/python/README.md), ``rt.stop()``."""
    rt = ai.Runtime()
    responses = []
    with ai.Agent(rt, ai.LocalModel("Qwen/Qwen3-0.6B")) as agent:
        for resp in agent.query("Hello world!"):
            resp.print() if printer == "resp.print()" else agent.print(resp)
            responses.append(resp)
        component = agent._component
        assert component in rt.kernel.components()
    assert component not in rt.kernel.components()  # leaving the with deleted the model
    rt.stop()
    assert {r.type for r in responses} == {"output_text"}
    text = "".join(r.content for r in responses)
    assert text.strip()
    # the text as it streamed, after the newline Ailoy prints where the type switches
    assert capsys.readouterr().out == "\n" + text


# -- concepts/agent -----------------------------------------------------------------------


def test_system_message(rt: ai.Runtime) -> None:
    """``Agent(rt, model, system_message=...)``: the model is given it first, and it heads
    ``get_messages()``."""
    script = Script(["Arr, AI be a clever parrot."])
    with ai.Agent(rt, script.model(), system_message=PIRATE) as agent:
        answer = "".join(r.content for r in agent.query("Please give me a short poem about AI"))
        assert answer == "Arr, AI be a clever parrot."
        assert script.seen_text() == f"system: {PIRATE}\nuser: Please give me a short poem about AI"
        assert [(m.role, m.text) for m in agent.get_messages()] == [
            ("system", PIRATE),
            ("user", "Please give me a short poem about AI"),
            ("assistant", "Arr, AI be a clever parrot."),
        ]


def test_agent_delete(rt: ai.Runtime) -> None:
    """``agent = Agent(rt, LocalModel(...))`` then ``agent.delete()``: the model's component
    goes with it."""
    agent = ai.Agent(rt, ai.LocalModel("Qwen/Qwen3-0.6B"))
    agent.load()
    component = agent._component
    assert component in rt.kernel.components()
    agent.delete()
    assert component not in rt.kernel.components()


#: concepts/agent's API models, by the id alone: each goes to its provider.
API_MODEL_IDS = {
    "openai": "gpt-4o",
    "gemini": "gemini-2.5-flash",
    "claude": "claude-sonnet-4-20250514",
    "grok": "grok-4",
}


@pytest.mark.parametrize("loopback_provider", list(API_MODEL_IDS), indirect=True)
def test_api_model_by_id(
    loopback_provider: tuple[Provider, LoopbackServer], rt: ai.Runtime
) -> None:
    """``Agent(rt, APIModel("gpt-4o", api_key=...))`` (and Gemini's, Claude's, Grok's ids):
    the provider is known from the id, and the request goes to it with the key."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "Hello from the API."))
    model = ai.APIModel(API_MODEL_IDS[provider.name], api_key=TEST_KEY)
    with ai.Agent(rt, model) as agent:
        answer = "".join(r.content for r in agent.query("Please give me a short poem about AI"))
    assert answer == "Hello from the API."
    (request,) = server.requests
    assert API_MODEL_IDS[provider.name] in request.path + str(request.json.get("model"))
    assert TEST_KEY in str(request.headers)


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_api_model_with_provider(
    loopback_provider: tuple[Provider, LoopbackServer], rt: ai.Runtime
) -> None:
    """``APIModel("gpt-4o-audio-preview", provider="openai", api_key=...)``: an id the
    provider is not known from, named explicitly."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "Hi."))
    model = ai.APIModel("gpt-4o-audio-preview", provider="openai", api_key=TEST_KEY)
    with ai.Agent(rt, model) as agent:
        assert "".join(r.content for r in agent.query("Hi")) == "Hi."
    assert server.requests[0].json["model"] == "gpt-4o-audio-preview"


def _png() -> Image.Image:
    image = Image.new("RGB", (8, 8), (30, 160, 60))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return Image.open(io.BytesIO(buffer.getvalue()))


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
@pytest.mark.parametrize("form", ["from_url", "pillow", "from_pillow"])
def test_image_inputs(
    loopback_provider: tuple[Provider, LoopbackServer], rt: ai.Runtime, form: str
) -> None:
    """concepts/agent's images: ``agent.query(["What is in this image?", image])`` where the
    image is ``ImageContent.from_url(url)``, a Pillow image as is, or
    ``ImageContent.from_pillow(image)``: the image reaches the model beside the text."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A boardwalk through a marsh."))
    url = "https://images.example.com/boardwalk.jpg"
    image = _png()
    given = {
        "from_url": lambda: ai.ImageContent.from_url(url),
        "pillow": lambda: image,
        "from_pillow": lambda: ai.ImageContent.from_pillow(image),
    }[form]()
    with ai.Agent(rt, ai.APIModel("gpt-4o", api_key=TEST_KEY)) as agent:
        answer = "".join(r.content for r in agent.query(["What is in this image?", given]))
    assert answer == "A boardwalk through a marsh."
    text, picture = server.requests[0].json["messages"][-1]["content"]
    assert text == {"type": "text", "text": "What is in this image?"}
    sent = picture["image_url"]["url"]
    if form == "from_url":
        assert sent == url
    else:
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        assert sent == "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_audio_input(loopback_provider: tuple[Provider, LoopbackServer], rt: ai.Runtime) -> None:
    """``AudioContent.from_bytes(data=data, format="wav")`` beside a question: the recording
    reaches the model as OpenAI's ``input_audio``."""
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A short beep."))
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x10" * 400)
    data = buffer.getvalue()
    model = ai.APIModel("gpt-4o-audio-preview", provider="openai", api_key=TEST_KEY)
    with ai.Agent(rt, model) as agent:
        query = ["What's in these recording?", ai.AudioContent.from_bytes(data=data, format="wav")]
        answer = "".join(r.content for r in agent.query(query))
    assert answer == "A short beep."
    _, audio = server.requests[0].json["messages"][-1]["content"]
    assert audio == {
        "type": "input_audio",
        "input_audio": {"data": base64.b64encode(data).decode(), "format": "wav"},
    }


def test_reasoning(rt: ai.Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    """tutorial/reasoning: ``agent.query(..., reasoning=True)`` asks the model to reason;
    its reasoning streams as ``reasoning`` responses, then the answer as ``output_text``,
    ``is_type_switched`` on the first of each, and ``agent.print`` shows both."""
    turn = {"reasoning": "From x+y=3, 4x+3y=12 gives x=3.", "text": "x=3, y=0"}
    script = Script([turn, turn])
    with ai.Agent(rt, script.model()) as agent:
        question = "Please solve me a simultaneous equation: x+y=3, 4x+3y=12"
        responses = list(agent.query(question, reasoning=True))
        for resp in responses:
            agent.print(resp)
        assert script.requests[0].reasoning is True
        types = [r.type for r in responses]
        assert types == sorted(types, key=["reasoning", "output_text"].index)
        assert "".join(r.content for r in responses if r.type == "reasoning") == turn["reasoning"]
        assert "".join(r.content for r in responses if r.type == "output_text") == turn["text"]
        assert [r.is_type_switched for r in responses].count(True) == 2
        printed = capsys.readouterr().out
        assert turn["reasoning"] in printed and printed.rstrip().endswith(turn["text"])

        plain = list(agent.query(question))  # without reasoning=True: not asked
        assert script.requests[1].reasoning is False
        assert {r.type for r in plain} == {"output_text"}


def test_tool_responses_as_the_guide_reads_them(rt: ai.Runtime) -> None:
    """tutorial/using-tools' loop: ``resp.type`` is ``output_text``, ``tool_call`` (its
    ``content.function.name`` and ``content.function.arguments``, a dict) or
    ``tool_call_result`` (its ``content.content``, the result as the model got it)."""
    arguments = {"location": "Seoul, Korea", "unit": "celsius"}
    script = Script(
        [{"tool_calls": [{"name": "get_current_temperature", "arguments": arguments}]}, "25."]
    )

    def get_current_temperature(location: str, unit: str) -> int:
        """Get the current temperature at a location.

        Args:
            location: The location, in the format "City, Country"
            unit: The unit, "celsius" or "fahrenheit"
        """
        return 25 if unit == "celsius" else 77

    printed = []
    with ai.Agent(rt, script.model()) as agent:
        agent.add_py_function_tool(get_current_temperature)
        for resp in agent.query("How warm is it in Seoul?"):
            if resp.type == "output_text":
                printed.append(resp.content)
            elif resp.type == "tool_call":
                tool_name = resp.content.function.name
                tool_arguments = resp.content.function.arguments
                shown = ", ".join(f'{k}="{v}"' for k, v in tool_arguments.items())
                printed.append(f"Tool call: {tool_name}({shown})")
            elif resp.type == "tool_call_result":
                tool_result = resp.content
                printed.append(f"Tool result: {tool_result.content[0].text}")
            else:
                raise TypeError("Unexpected response type.")
    assert printed == [
        'Tool call: get_current_temperature(location="Seoul, Korea", unit="celsius")',
        "Tool result: 25",
        "25.",
    ]


def test_conversation_history(rt: ai.Runtime) -> None:
    """tutorial/managing-conversation: successive ``query`` calls share the conversation
    (the model is sent it all); ``get_messages()`` returns it, ``clear_messages()``
    forgets it."""
    script = Script(["Hello, Jo.", "You are Jo.", "I do not know."])
    with ai.Agent(rt, script.model()) as agent:
        for query in ["My name is Jo.", "Who am I?"]:
            for resp in agent.query(query):
                agent.print(resp)
        assert [(m.role, m.text) for m in script.seen(1)] == [
            ("user", "My name is Jo."),
            ("assistant", "Hello, Jo."),
            ("user", "Who am I?"),
        ]
        messages = agent.get_messages()
        assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
        agent.clear_messages()
        assert agent.get_messages() == []
        list(agent.query("Who am I?"))
        assert [m.text for m in script.seen(2)] == ["Who am I?"]


def test_chat_loop_on_the_local_model(
    rt: ai.Runtime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guide's ``while True`` loop over ``input()``, ending at "exit", skipping empty
    lines, on the local model."""
    lines = iter(["Hi!", "", "Say bye.", "exit"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(lines))
    with ai.Agent(rt, ai.LocalModel("Qwen/Qwen3-0.6B")) as agent:
        while True:
            query = input("\nUser: ")
            if query == "exit":
                break
            if query == "":
                continue
            for resp in agent.query(query):
                agent.print(resp)
        roles = [m.role for m in agent.get_messages()]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert capsys.readouterr().out.strip()
