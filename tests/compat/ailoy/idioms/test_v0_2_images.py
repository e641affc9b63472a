"""Ailoy 0.2.5's tutorial/image-inputs, as programs: a user `Message` of an image part
(``Part.image_from_url`` or ``Part.image_from_bytes`` of a file read with pathlib) and a
``Part.Text`` question, run by ``Agent(lm).run([message])`` on OpenAI's API (a loopback
server). The outcome: the image as the provider's wire carries it, and the answer."""

from __future__ import annotations

import asyncio
import base64
import io
from pathlib import Path

import ferrule as ai
import pytest
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer
from PIL import Image

from ..conftest import TEST_KEY, Provider

DOG = "https://images.example.com/golden-retriever.jpg"


def ask(message: ai.Message) -> list[str]:
    """The guide's ``main()``: an agent on gpt-4o, the message run, the texts printed."""
    texts = []

    async def main() -> None:
        lm = ai.LangModel.new_stream_api(spec="OpenAI", model_name="gpt-4o", api_key=TEST_KEY)
        agent = ai.Agent(lm)
        async for resp in agent.run([message]):
            if isinstance(resp.message.contents[0], ai.Part.Text):
                texts.append(resp.message.contents[0].text)

    asyncio.run(main())
    return texts


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_image_from_url(loopback_provider: tuple[Provider, LoopbackServer]) -> None:
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A golden retriever on grass."))
    message = ai.Message(
        role="user",
        contents=[ai.Part.image_from_url(DOG), ai.Part.Text("What do you see in this image?")],
    )
    assert ask(message) == ["A golden retriever on grass."]
    (sent,) = server.requests[0].json["messages"]
    assert sent["content"] == [
        {"type": "image_url", "image_url": {"url": DOG}},
        {"type": "text", "text": "What do you see in this image?"},
    ]


@pytest.mark.parametrize("loopback_provider", ["openai"], indirect=True)
def test_image_from_bytes(
    loopback_provider: tuple[Provider, LoopbackServer], tmp_path: Path
) -> None:
    provider, server = loopback_provider
    server.script(reply(provider.dialect, "A brown square."))
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (140, 90, 40)).save(buffer, "JPEG")
    (tmp_path / "dog.jpg").write_bytes(buffer.getvalue())

    data = Path(tmp_path / "dog.jpg").read_bytes()
    message = ai.Message(
        role="user",
        contents=[ai.Part.image_from_bytes(data), ai.Part.Text("What do you see in this image?")],
    )
    assert ask(message) == ["A brown square."]
    (sent,) = server.requests[0].json["messages"]
    image, text = sent["content"]
    assert image["image_url"]["url"] == "data:image/jpeg;base64," + base64.b64encode(data).decode()
    assert text == {"type": "text", "text": "What do you see in this image?"}
