"""ferrule-openai answering with audio (``modalities: ["text", "audio"]``) on a loopback
server speaking OpenAI's Chat Completions wire: a format OpenAI does not stream comes in
one reply (``message.audio``), pcm16 in ``delta.audio`` pieces; either way the reply is an
audio part of the assistant message (id, transcript, bytes), which a later turn names by
its ``id`` until it expires."""

from __future__ import annotations

import pytest
import pytest_asyncio
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import MessageAccumulator
from ferrule_kit.testing import ScriptedTurn, tiny_wav
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.loopback import Reply, server_fixture
from ferrule_kit.testing.providers import USER, Definer, collect

server = server_fixture(wire.validator())
SPEAKS = {"modalities": ["text", "audio"]}


@pytest_asyncio.fixture
async def runtime():
    async with AsyncRuntime() as rt:
        yield rt


@pytest.fixture
def define(runtime, server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-audio")
    return Definer(runtime, "openai_language_model", "lm", {"model": "gpt-audio"})


def folded(items: list[dict]) -> Message:
    accumulator = MessageAccumulator()
    for item in items:
        accumulator.add(item)
    return accumulator.message()


async def test_wav_comes_whole_in_one_reply(define, runtime, server):
    name = await define(extra_body={**SPEAKS, "audio": {"voice": "sage", "format": "wav"}})
    server.script(wire.audio_completion("Once upon a time.", tiny_wav()))
    message = folded(await collect(runtime, name, {"messages": [USER]}))
    sent = server.requests[-1].json
    assert sent["stream"] is False and "stream_options" not in sent
    assert sent["audio"] == {"voice": "sage", "format": "wav"}
    assert message.text == "Once upon a time."
    (audio,) = [p for p in message.contents if p.type == "audio"]
    assert audio.to_bytes() == tiny_wav() and audio.format == "wav"
    assert (audio.id, audio.transcript) == (wire.AUDIO_ID, "Once upon a time.")
    assert audio.expires_at == wire.AUDIO_EXPIRES_AT
    server.check()


async def test_pcm16_streams_in_pieces_joined_into_one_sound(define, runtime, server):
    name = await define(extra_body={**SPEAKS, "audio": {"voice": "alloy", "format": "pcm16"}})
    pieces = [b"\x01\x02" * 7, b"\x03\x04" * 5]  # each its own base64, padding and all
    server.script(Reply.sse(wire.audio_chunks(["Once ", "upon."], pieces)))
    items = await collect(runtime, name, {"messages": [USER]})
    assert server.requests[-1].json["stream"] is True
    media = [p for item in items for p in item["message"].get("media", ())]
    assert len(media) == 6  # the id, two transcript pieces, two sound pieces, expires_at
    message = folded(items)
    assert message.text == "Once upon."
    (audio,) = [p for p in message.contents if p.type == "audio"]
    assert audio.to_bytes() == b"".join(pieces)
    assert (audio.id, audio.transcript, audio.format) == (wire.AUDIO_ID, "Once upon.", "pcm16")
    server.check()


async def test_a_later_turn_names_the_audio_by_id_until_it_expires(define, runtime, server):
    name = await define(extra_body={**SPEAKS, "audio": {"voice": "sage", "format": "mp3"}})
    server.script(wire.audio_completion("Boo.", b"ID3-not-really-mp3"))
    said = folded(await collect(runtime, name, {"messages": [USER]})).to_dict()
    follow = {"role": "user", "content": "And then?"}
    server.script(wire.audio_completion("The end.", b"ID3-again"))
    await collect(runtime, name, {"messages": [USER, said, follow]})
    assert server.requests[-1].json["messages"][1] == {
        "role": "assistant",
        "content": "",
        "audio": {"id": wire.AUDIO_ID},
    }
    said["content"][1]["input_audio"]["expires_at"] = 1000  # long past: OpenAI forgot it
    server.script(wire.audio_completion("The end.", b"ID3-again"))
    await collect(runtime, name, {"messages": [USER, said, follow]})
    assert server.requests[-1].json["messages"][1] == {"role": "assistant", "content": "Boo."}
    server.check()


async def test_text_only_replies_are_untouched_by_the_text_modality(define, runtime, server):
    name = await define(extra_body={"modalities": ["text"]})
    server.script(wire.reply(ScriptedTurn(text=("Hi.",))))
    message = folded(await collect(runtime, name, {"messages": [USER]}))
    assert message.text == "Hi." and [p.type for p in message.contents] == ["text"]
    assert server.requests[-1].json["stream"] is True
    server.check()


async def test_a_reply_whose_audio_is_not_base64_fails_naming_it(define, runtime, server):
    name = await define(extra_body={**SPEAKS, "audio": {"voice": "sage", "format": "pcm16"}})
    chunks = wire.audio_chunks(["Hi"], [b"x"])
    chunks[3] = wire.chunk({"audio": {"data": "not base64!"}})
    server.script(Reply.sse(chunks))
    items = await collect(runtime, name, {"messages": [USER]})
    with pytest.raises(InvalidInputError) as raised:
        folded(items)
    assert raised.value.to_dict()["details"]["errors"][0]["path"] == "media.input_audio.data"
