"""Ailoy 0.2 `test_multimodal.py`: an image part (``Part.image_from_base64``, or
``Part.image_from_url``) and a question, sent by ``Agent(model).run`` to each API provider,
here a loopback server. Ailoy's base64 case downloads a photo from the internet first; a
small PNG made here stands in for it. The check is the image as each provider's wire has it."""

from __future__ import annotations

import base64
import io
import json

import ferrule as ai
import pytest
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer
from PIL import Image

from ..conftest import TEST_KEY, Provider

IMAGE_URL = "https://images.example.com/jensen-huang.jpg"
SPECS = {
    "openai": ("OpenAI", "gpt-4o"),
    "gemini": ("Gemini", "gemini-2.5-flash"),
    "claude": ("Claude", "claude-haiku-4-5"),
    "grok": ("Grok", "grok-4-fast"),
}


@pytest.fixture
def agent(loopback_provider: tuple[Provider, LoopbackServer]):
    provider, server = loopback_provider
    spec, model = SPECS[provider.name]
    with ai.Runtime() as rt:
        lm = ai.LangModel.new_stream_api(spec, model_name=model, api_key=TEST_KEY, runtime=rt)
        yield ai.Agent(lm), provider, server


@pytest.fixture
def img_b64() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode("utf-8")


async def ask(agent: ai.Agent, image: object) -> list[ai.MessageOutput]:
    question = ai.Message("user", contents=[image, ai.Part.Text("What is shown in this image?")])
    return [resp async for resp in agent.run([question])]


@pytest.mark.parametrize("loopback_provider", ["openai", "gemini", "claude", "grok"], indirect=True)
async def test_image_base64_input(agent, img_b64: str) -> None:
    agent, provider, server = agent
    server.script(reply(provider.dialect, "A red square."))
    part = ai.Part.image_from_base64(img_b64)
    assert part.mime_type == "image/png"
    outputs = await ask(agent, part)
    assert outputs[-1].message.text == "A red square."
    assert img_b64 in json.dumps(server.requests[0].json)  # the image itself was sent


@pytest.mark.parametrize("loopback_provider", ["openai", "claude", "grok"], indirect=True)
async def test_image_url_input(agent) -> None:
    agent, provider, server = agent
    server.script(reply(provider.dialect, "A man in a leather jacket."))
    outputs = await ask(agent, ai.Part.image_from_url(IMAGE_URL))
    assert outputs[-1].message.text == "A man in a leather jacket."
    assert IMAGE_URL in json.dumps(server.requests[0].json)


def test_image_from_base64_refuses_what_is_not_an_image() -> None:
    with pytest.raises(ai.InvalidInputError, match="base64"):
        ai.Part.image_from_base64("not base64!")
    with pytest.raises(ai.InvalidInputError, match="image format"):
        ai.Part.image_from_base64(base64.b64encode(b"plain text").decode())
