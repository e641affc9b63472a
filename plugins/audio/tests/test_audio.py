"""AudioContent: format names, bytes checked against the format, limits, files; the audio
part type in the registry; and the parts reaching every provider's wire through a Runtime
(the providers are installed by the test extra, never imported)."""

from __future__ import annotations

import io
import wave

import pytest
from ferrule import AsyncRuntime
from ferrule_audio import AudioContent, AudioPart, sniff_audio_format
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, Part, TextPart
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.testing.dialects import PROVIDERS, send
from ferrule_kit.testing.loopback import LoopbackServer
from hypothesis import given
from hypothesis import strategies as st


def wav_bytes(frames: int = 80, rate: int = 8000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x01\x00" * frames)
    return out.getvalue()


# Stream headers as the formats define them (an ID3v2.3 tag, an MPEG-1 layer III frame
# header, FLAC's marker, an Ogg page header), followed by filler.
MP3_ID3 = b"ID3\x03\x00\x00\x00\x00\x00\x00" + b"\x00" * 32
MP3_FRAME = b"\xff\xfb\x90\x64" + b"\x00" * 32
FLAC = b"fLaC\x00\x00\x00\x22" + b"\x00" * 34
OGG = b"OggS\x00\x02" + b"\x00" * 40


@pytest.mark.parametrize(
    ("data", "format"),
    [
        (wav_bytes(), "wav"),
        (MP3_ID3, "mp3"),
        (MP3_FRAME, "mp3"),
        (FLAC, "flac"),
        (OGG, "ogg"),
        (wav_bytes(), "WAVE"),
        (MP3_ID3, ".mp3"),
    ],
)
def test_from_bytes(data, format):
    part = AudioContent.from_bytes(data=data, format=format)
    assert isinstance(part, AudioPart) and part.to_bytes() == data
    assert part.format == sniff_audio_format(data)


def test_format_must_match_the_bytes():
    with pytest.raises(
        InvalidInputError, match="format says mp3 but the bytes are wav audio"
    ) as info:
        AudioContent.from_bytes(data=wav_bytes(), format="mp3")
    assert info.value.errors[0]["path"] == "format"
    with pytest.raises(InvalidInputError, match="not a recognised audio format"):
        AudioContent.from_bytes(data=b"hello there, not audio", format="wav")


@pytest.mark.parametrize(
    ("kwargs", "path", "words"),
    [
        ({"data": wav_bytes(), "format": "midi"}, "format", "unknown audio format"),
        ({"data": b"", "format": "wav"}, "data", "empty"),
        ({"data": "text", "format": "wav"}, "data", "expected bytes"),
        ({"data": wav_bytes(), "format": 3}, "format", "expected a format name"),
    ],
)
def test_bad_input_names_the_field(kwargs, path, words):
    with pytest.raises(InvalidInputError, match=words) as info:
        AudioContent.from_bytes(**kwargs)
    assert info.value.errors[0]["path"] == path


def test_size_limit():
    data = wav_bytes()
    with pytest.raises(InvalidInputError, match="limit"):
        AudioContent.from_bytes(data=data, format="wav", max_bytes=len(data) - 1)


def test_from_path(tmp_path):
    path = tmp_path / "clip.wav"
    path.write_bytes(wav_bytes())
    assert AudioContent.from_path(path).format == "wav"
    bare = tmp_path / "clip"
    bare.write_bytes(wav_bytes())
    with pytest.raises(InvalidInputError, match="no extension"):
        AudioContent.from_path(bare)
    assert AudioContent.from_path(bare, format="wav").format == "wav"
    with pytest.raises(InvalidInputError, match="cannot read"):
        AudioContent.from_path(tmp_path / "missing.wav")


@given(st.integers(1, 4000), st.sampled_from([8000, 16000, 44100]))
def test_wav_round_trips_through_the_wire(frames, rate):
    part = AudioContent.from_bytes(data=wav_bytes(frames, rate), format="wav")
    message = Message(role="user", contents=[TextPart("listen"), part])
    assert Message.from_dict(message.to_dict()) == message


def wire(part: AudioPart) -> dict:
    return Message("user", [part]).to_dict()["content"][0]


def test_the_plugin_registers_the_audio_part_type():
    assert registry.source("audio") == "ferrule-audio"
    assert Part.Audio is AudioPart
    import ferrule

    assert ferrule.AudioContent is AudioContent and ferrule.AudioPart is AudioPart


@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "input_audio"}, "$.content[0].input_audio"),
        (
            {"type": "input_audio", "input_audio": {"format": "wav"}},
            "$.content[0].input_audio.data",
        ),
        (
            {"type": "input_audio", "input_audio": {"data": "AAAA"}},
            "$.content[0].input_audio.format",
        ),
        (
            {"type": "input_audio", "input_audio": {"data": 1, "format": "wav"}},
            "$.content[0].input_audio.data",
        ),
        ({"type": "input_audio", "input_audio": {}, "x": 1}, "$.content[0].x"),
    ],
)
def test_bad_wire_audio_names_the_field(part, path):
    with pytest.raises(InvalidInputError) as info:
        Message.from_dict({"role": "user", "content": [part]})
    assert path in [e["path"] for e in info.value.errors]


#: How each provider that takes audio carries a wav clip; the others refuse it.
SHAPES = {
    "openai": lambda part: {
        "type": "input_audio",
        "input_audio": {"data": part.data, "format": "wav"},
    },
    "openai-compatible": lambda part: {
        "type": "input_audio",
        "input_audio": {"data": part.data, "format": "wav"},
    },
    "gemini": lambda part: {"inlineData": {"mimeType": "audio/wav", "data": part.data}},
}
#: Where each refusal sends the user.
ELSEWHERE = {"xai": "openai and gemini", "anthropic": "(OpenAI, Gemini)"}


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_audio_reaches_every_provider_that_takes_it(provider, monkeypatch):
    part = AudioContent.from_bytes(data=wav_bytes(), format="wav")
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        if provider.name in SHAPES:
            sent = await send(rt, server, provider, [wire(part)], monkeypatch)
            assert sent == [SHAPES[provider.name](part)]
            assert len(server.requests) == 1
        else:
            with pytest.raises(UnsupportedContentError) as info:
                await send(rt, server, provider, [wire(part)], monkeypatch)
            assert info.value.details == {
                **info.value.details,
                "provider": provider.name,
                "content_type": "audio",
            }
            assert ELSEWHERE[provider.name] in info.value.message
            assert server.requests == []


async def test_formats_are_each_providers(monkeypatch):
    by_name = {p.name: p for p in PROVIDERS}
    flac = wire(AudioContent.from_bytes(data=FLAC, format="flac"))
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        with pytest.raises(UnsupportedContentError, match="flac") as info:  # OpenAI: wav, mp3
            await send(rt, server, by_name["openai"], [flac], monkeypatch)
        assert "wav" in info.value.message and "openai" in info.value.message
        sent = await send(rt, server, by_name["gemini"], [flac], monkeypatch)
        assert sent[0]["inlineData"]["mimeType"] == "audio/flac"
    assert len(server.requests) == 1
