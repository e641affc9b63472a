"""Agno's media (`ferrule.media`: Image, Audio, Video, File) passed to a run as ``images=``,
``audio=`` and ``files=``, checked by the content parts the model receives on the OpenAI
Chat Completions wire (`wire`: conftest); what ferrule cannot send is refused, naming it."""

from __future__ import annotations

import base64
import io
import json
import wave

import pytest
from ferrule.agent import Agent
from ferrule.media import Audio, File, Image, Video
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError
from PIL import Image as PillowImage


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    PillowImage.new("RGB", (4, 3), (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def wav_bytes() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\x00\x00" * 800)
    return buffer.getvalue()


def user_content(body: dict) -> list[dict]:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def errors_of(refused: pytest.ExceptionInfo[InvalidInputError]) -> str:
    return refused.value.details["errors"][0]["path"]


def test_images_by_url_path_and_bytes(wire, tmp_path):
    wire.says("A red square, twice, and a bridge.")
    path = tmp_path / "red.png"
    path.write_bytes(png_bytes())
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    run = agent.run(
        "Describe these images",
        images=[
            Image(url="https://example.com/GoldenGateBridge-001.jpg"),
            Image(filepath=path),
            Image(content=png_bytes()),
        ],
    )
    assert run.content == "A red square, twice, and a bridge."
    content = user_content(wire.last)
    assert content[0] == {"type": "text", "text": "Describe these images"}
    urls = [part["image_url"]["url"] for part in content[1:]]
    assert urls[0] == "https://example.com/GoldenGateBridge-001.jpg"
    sent = "data:image/png;base64," + base64.b64encode(png_bytes()).decode("ascii")
    assert urls[1:] == [sent, sent]


def test_audio_and_file_through_print_response(wire, tmp_path, capsys):
    wire.says("A short silence, and a note.")
    note = tmp_path / "note.txt"
    note.write_text("Meet at noon.")
    agent = Agent(model=OpenAIChat(id="gpt-4o-audio-preview"))
    agent.print_response(
        "What is in the recording and the note?",
        audio=[Audio(content=wav_bytes(), format="wav")],
        files=[File(filepath=note)],
    )
    assert "A short silence, and a note." in capsys.readouterr().out
    content = user_content(wire.last)
    kinds = [part["type"] for part in content]
    assert kinds[:2] == ["text", "input_audio"]
    assert content[1]["input_audio"] == {
        "data": base64.b64encode(wav_bytes()).decode("ascii"),
        "format": "wav",
    }
    assert "Meet at noon." in json.dumps(content[2:])


def test_media_refused_naming_what(wire, tmp_path):
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    with pytest.raises(InvalidInputError) as refused:
        agent.run("Watch", videos=[Video(filepath=tmp_path / "clip.mp4")])
    assert "no video parts" in refused.value.message
    with pytest.raises(InvalidInputError) as refused:
        agent.run("Listen", audio=[Audio(url="https://example.com/a.wav")])
    assert errors_of(refused).endswith(".url")
    with pytest.raises(InvalidInputError) as refused:
        agent.run("Look", images=[Audio(content=wav_bytes(), format="wav")])
    assert errors_of(refused) == "images[0]"
    with pytest.raises(InvalidInputError) as refused:
        Image(url="https://example.com/a.png", content=png_bytes())
    assert errors_of(refused) == "content"
    with pytest.raises(InvalidInputError) as refused:
        Image(content="not bytes")
    assert errors_of(refused) == "content"
    assert wire.requests == []
