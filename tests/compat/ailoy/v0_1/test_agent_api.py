"""Ailoy 0.1 `test_agent_openai.py`, `test_agent_claude.py`, `test_agent_gemini.py` and
`test_agent_grok.py`: the same Agent calls on each API model, here against a loopback
server speaking the provider's wire (found through its usual base-URL variable), each
test parametrized by the providers whose Ailoy file has that case."""

from __future__ import annotations

import base64
import io
import json
import wave
from collections.abc import Iterator

import ferrule as ai
import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer
from PIL import Image

from ..conftest import TEST_KEY, Provider

IMAGE_URL = "https://images.example.com/jensen-huang.jpg"


@pytest.fixture
def agent(loopback_provider: tuple[Provider, LoopbackServer]) -> Iterator[ai.Agent]:
    provider, _ = loopback_provider
    with ai.Runtime() as rt, ai.Agent(rt, ai.APIModel(provider.model, api_key=TEST_KEY)) as agent:
        agent.clear_messages()
        agent.clear_tools()
        yield agent


def request_text(server: LoopbackServer, index: int = -1) -> str:
    return json.dumps(server.requests[index].json)


def query(agent: ai.Agent, content, capsys) -> str:
    for resp in agent.query(content):
        assert resp.type != "error", resp.content
        agent.print(resp)
    return capsys.readouterr().out


@pytest.mark.parametrize("loopback_provider", ["openai", "claude", "gemini", "grok"], indirect=True)
def test_tool_call_calculator(agent: ai.Agent, loopback_provider, capsys) -> None:
    provider, server = loopback_provider
    formula = "floor(ln(exp(e))+cos(2*pi))"
    server.script(
        reply(
            provider.dialect,
            tool_calls=(ToolCall("call_1", "calculator", {"expression": formula}),),
        ),
        reply(provider.dialect, "The result is 3."),
    )
    agent.add_tools_from_preset("calculator")
    out = query(agent, f"Please calculate this formula: {formula}", capsys)
    assert "The result is 3." in out and '"value": 3' in out
    first, second = (r.json for r in server.requests)
    assert "calculator" in json.dumps(first)  # the tool was offered
    assert '\\"value\\": 3' in json.dumps(second) or '"value": 3' in json.dumps(second)


@pytest.mark.parametrize("loopback_provider", ["openai", "grok"], indirect=True)
def test_image_input_from_url(agent: ai.Agent, loopback_provider, capsys) -> None:
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A man in a leather jacket."))
    for resp in agent.query(["What is in this image", ai.ImageContent.from_url(IMAGE_URL)]):
        resp.print()
    assert "leather jacket" in capsys.readouterr().out
    assert IMAGE_URL in request_text(server)


def _image() -> Image.Image:
    image = Image.new("RGB", (8, 8), (200, 30, 30))
    image.putpixel((0, 0), (0, 0, 255))
    return image


@pytest.mark.parametrize("loopback_provider", ["openai", "claude", "gemini", "grok"], indirect=True)
def test_image_input_from_pillow(agent: ai.Agent, loopback_provider, capsys) -> None:
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A red square."))
    buffer = io.BytesIO()
    _image().save(buffer, "PNG")
    image = Image.open(io.BytesIO(buffer.getvalue()))
    for resp in agent.query(["What is in this image", image]):
        resp.print()
    assert "A red square." in capsys.readouterr().out
    sent = request_text(server)
    assert base64.b64encode(buffer.getvalue()).decode()[:40] in sent


def _wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x01" * 800)
    return buffer.getvalue()


@pytest.mark.parametrize("loopback_provider", ["openai", "gemini"], indirect=True)
def test_audio_input_from_base64(agent: ai.Agent, loopback_provider, capsys) -> None:
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "Someone says hello."))
    audio = _wav()
    query(
        agent,
        ["What's in these recording?", ai.AudioContent.from_bytes(data=audio, format="wav")],
        capsys,
    )
    assert base64.b64encode(audio).decode()[:40] in request_text(server)
