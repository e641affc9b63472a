"""Gemini answering with images and speech (``generationConfig.responseModalities``) on the
loopback server: its ``inlineData`` parts become media items, images (and their
signatures) go back to the model in a later turn, speech does not."""

from __future__ import annotations

import base64

from ferrule_gemini.testing import media_records, stream_reply
from ferrule_gemini.wire import build_request
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import InferInput, MessageAccumulator
from ferrule_kit.testing import tiny_png
from ferrule_kit.testing.providers import USER

SIGNATURE = base64.b64encode(b"image-signature").decode()
SAMPLES = b"\x01\x00\xff\x7f" * 50
PCM = "audio/L16;codec=pcm;rate=24000"


def folded(items: list[dict]) -> Message:
    accumulator = MessageAccumulator()
    for item in items:
        accumulator.add(item)
    return accumulator.message()


async def test_an_image_and_its_text_stream_as_a_media_item_and_text(server, gemini):
    server.script(
        stream_reply(
            media_records([("image/png", tiny_png())], text=["A cat."], signature=SIGNATURE)
        )
    )
    items = await gemini.collect({"messages": [USER]})
    media = [p for item in items for p in item["message"].get("media", ())]
    assert media == [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(tiny_png()).decode()},
        }
    ]
    message = folded(items)
    assert message.text == "A cat."
    image = message.contents[1]
    assert image.type == "image" and image.to_bytes() == tiny_png()
    assert image.mime_type == "image/png"
    assert message.signature == f"inlineData.0:{SIGNATURE}"


async def test_speech_is_an_audio_item_of_its_mime_type(server, gemini):
    server.script(stream_reply(media_records([(PCM, SAMPLES)])))
    message = folded(await gemini.collect({"messages": [USER]}))
    (audio,) = [p for p in message.contents if p.type == "audio"]
    assert audio.to_bytes() == SAMPLES and audio.format == PCM
    assert message.text == ""


async def test_a_later_turn_sends_the_image_back_signed_and_leaves_the_speech_out(server, gemini):
    server.script(
        stream_reply(
            media_records([("image/png", tiny_png())], text=["A cat."], signature=SIGNATURE)
        ),
        stream_reply(media_records([(PCM, SAMPLES)])),
    )
    drawn = folded(await gemini.collect({"messages": [USER]}))
    said = folded(await gemini.collect({"messages": [USER]}))
    history = [USER, drawn.to_dict(), {"role": "user", "content": "Again"}, said.to_dict(), USER]
    server.script(stream_reply(media_records([], text=["Done."])))
    await gemini.collect({"messages": history})
    contents = server.requests[-1].json["contents"]
    drawn_parts = contents[1]["parts"]
    assert drawn_parts[0] == {"text": "A cat."}
    assert drawn_parts[1]["inlineData"]["mimeType"] == "image/png"
    assert drawn_parts[1]["thoughtSignature"] == SIGNATURE
    # the speech turn had nothing else: no model turn is sent for it
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    server.check()


def test_speech_and_image_models_get_no_thinking_config():
    inputs = InferInput(messages=[Message("user", "Say hi")])
    assert "generationConfig" not in build_request(inputs, model="gemini-2.5-flash-preview-tts")
    assert "generationConfig" not in build_request(inputs, model="gemini-2.5-flash-image")
    assert build_request(inputs, model="gemini-2.5-flash")["generationConfig"] == {
        "thinkingConfig": {"thinkingBudget": 0}
    }


async def test_an_inline_part_without_data_is_a_protocol_error(server, gemini):
    record = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"inlineData": {"mimeType": "image/png"}}]}}
        ]
    }
    server.script(stream_reply([record]))
    _items, error = await gemini.collect_until_error({"messages": [USER]})
    assert error.kind == "provider_protocol_error" and "inlineData" in error.message
