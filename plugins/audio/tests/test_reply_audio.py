"""Audio a model answers with, as the kit folds it (`MessageAccumulator`): pieces of one
sound (each whole base64 of its own, as OpenAI streams them) become one audio part with
the bytes and transcript joined, its id and expiry kept, and back again on the wire."""

from __future__ import annotations

import base64
import itertools

import pytest
from ferrule_audio.part import AudioPart
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import MessageAccumulator, finish, media_delta, text_delta
from hypothesis import given
from hypothesis import strategies as st


def piece(**audio: object) -> dict:
    return media_delta({"type": "input_audio", "input_audio": {"format": "pcm16", **audio}})


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


@given(st.binary(min_size=1, max_size=300), st.lists(st.integers(0, 300), max_size=6))
def test_pieces_of_one_sound_are_joined_whatever_the_split(data, cuts):
    accumulator = MessageAccumulator()
    accumulator.add(piece(id="audio_1", data=""))
    for chunk in split(data, cuts):
        accumulator.add(piece(data=base64.b64encode(chunk).decode()))
    accumulator.add(piece(data="", expires_at=1700000000))
    accumulator.add(finish("stop"))
    (audio,) = accumulator.message().contents[1:]
    assert isinstance(audio, AudioPart) and audio.to_bytes() == data
    assert (audio.id, audio.expires_at, audio.format) == ("audio_1", 1700000000, "pcm16")


def test_the_transcript_is_the_text_and_the_sounds_and_round_trips_the_wire():
    accumulator = MessageAccumulator()
    for words in ("Once ", "upon."):
        item = piece(transcript=words, data="")
        item["message"]["content"][0]["text"] = words
        accumulator.add(item)
    accumulator.add(piece(data=base64.b64encode(b"\x00\x01").decode()))
    message = accumulator.message()
    assert message.text == "Once upon."
    audio = message.contents[1]
    assert audio.transcript == "Once upon." and audio.to_bytes() == b"\x00\x01"
    again = Message.from_dict(message.to_dict())
    assert again.contents[1] == audio


def test_two_sounds_of_different_ids_stay_two():
    accumulator = MessageAccumulator()
    accumulator.add(piece(id="a", data=base64.b64encode(b"1").decode()))
    accumulator.add(piece(id="b", data=base64.b64encode(b"2").decode()))
    accumulator.add(text_delta(""))
    assert [p.id for p in accumulator.message().contents[1:]] == ["a", "b"]


def test_a_bad_field_of_a_reply_audio_is_refused_naming_it():
    with pytest.raises(InvalidInputError) as raised:
        Message.from_dict(
            {
                "role": "assistant",
                "content": [
                    {"type": "input_audio", "input_audio": {"data": "", "format": "wav", "id": 7}}
                ],
            }
        )
    assert "input_audio.id" in str(raised.value.to_dict())
