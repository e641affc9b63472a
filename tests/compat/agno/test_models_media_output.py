"""Agno's media output, as a program coming from Agno uses it: ``OpenAIChat(modalities=...,
audio=...)`` and ``Gemini(response_modalities=..., speech_config=...)`` answer with a sound
or a picture, on loopback servers speaking each provider's wire (checked). The sound and
the pictures arrive where Agno puts them (``RunOutput.response_audio`` / ``images``, the
streamed ``RunContentEvent.response_audio`` / ``image``), stay in stored runs, and a later
turn still works; bad settings are refused naming the field."""

from __future__ import annotations

import base64
import sys
import wave
from pathlib import Path

import pytest
from ferrule.agent import Agent, RunContentEvent
from ferrule.db.in_memory import InMemoryDb
from ferrule.media import Audio, Image
from ferrule.models.google import Gemini
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.utils.audio import pcm_to_wav_bytes, write_audio_to_file, write_wav_audio_to_file
from ferrule_gemini.testing import validator as gemini_validator
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing import chat_completions as chat
from ferrule_kit.testing import tiny_png
from ferrule_kit.testing.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from loopback_media import TRANSCRIPT, media_answer, pcm16, wav  # a module beside this file


def answered(server: LoopbackServer, times: int) -> None:
    for _ in range(times):
        server.script(lambda request: media_answer(request.path, request.json))


@pytest.fixture
def openai_server():
    with LoopbackServer(validate=chat.validator()) as server:
        yield server
        server.check()


@pytest.fixture
def gemini_server():
    with LoopbackServer(validate=gemini_validator) as server:
        yield server
        server.check()


def speaking(server: LoopbackServer, audio_format: str) -> OpenAIChat:
    return OpenAIChat(
        id="gpt-audio",
        api_key="sk-loopback",
        base_url=server.url + "/v1",
        modalities=["text", "audio"],
        audio={"voice": "sage", "format": audio_format},
    )


def test_an_audio_reply_is_response_audio_and_a_later_turn_names_it(openai_server, tmp_path):
    answered(openai_server, 2)
    agent = Agent(
        model=speaking(openai_server, "wav"), db=InMemoryDb(), add_history_to_context=True
    )
    first = agent.run("Tell me a 5 second scary story")
    audio = first.response_audio
    assert isinstance(audio, Audio) and first.content == TRANSCRIPT
    assert (audio.id, audio.transcript, audio.format) == (chat.AUDIO_ID, TRANSCRIPT, "wav")
    assert isinstance(audio.content, str)  # base64, as OpenAI's SDK gives it
    write_audio_to_file(audio=audio.content, filename=str(tmp_path / "story.wav"))
    with wave.open(str(tmp_path / "story.wav")) as sound:
        assert sound.getframerate() == 24000 and sound.readframes(10**6) == pcm16()
    sent = openai_server.requests[0].json
    assert sent["modalities"] == ["text", "audio"] and sent["stream"] is False
    assert (first.metrics.audio_output_tokens, first.metrics.audio_total_tokens) == (8, 8)

    agent.run("What would be in a sequel of this story?")
    history = openai_server.requests[1].json["messages"]
    assert history[1] == {"role": "assistant", "content": "", "audio": {"id": chat.AUDIO_ID}}
    reply = first.messages[-1]  # Agno's Message: the text its content, the sound beside
    assert (reply.role, reply.content) == ("assistant", TRANSCRIPT)
    assert reply.audio_output.id == chat.AUDIO_ID
    stored = agent.get_last_run_output()
    assert stored.response_audio.id == chat.AUDIO_ID and stored.response_audio.transcript
    (earlier,) = [r for r in agent.get_session().runs if r.run_id == first.run_id]
    assert base64.b64decode(earlier.response_audio.content) == wav(pcm16())


def test_pcm16_streams_its_transcript_and_samples_piece_by_piece(openai_server):
    answered(openai_server, 1)
    agent = Agent(model=speaking(openai_server, "pcm16"), db=InMemoryDb())
    pieces = [
        event.response_audio
        for event in agent.run("Tell me a 10 second story", stream=True)
        if isinstance(event, RunContentEvent) and event.response_audio is not None
    ]
    transcript = "".join(p.transcript or "" for p in pieces)
    samples = b"".join(base64.b64decode(p.content) for p in pieces if p.content)
    assert transcript == TRANSCRIPT and samples == pcm16()
    whole = agent.get_last_run_output().response_audio
    assert whole.transcript == TRANSCRIPT and base64.b64decode(whole.content) == pcm16()


def test_a_text_modality_alone_answers_in_text(openai_server):
    openai_server.script(chat.reply(chat.ScriptedTurn(text=("Plain text.",))))
    model = OpenAILike(id="m", api_key="k", base_url=openai_server.url + "/v1", modalities=["text"])
    out = Agent(model=model).run("Hi")
    assert out.content == "Plain text." and out.response_audio is None and out.images is None
    assert openai_server.requests[0].json["modalities"] == ["text"]


def drawing(server: LoopbackServer) -> Gemini:
    return Gemini(
        id="gemini-2.5-flash-image",
        api_key="k",
        base_url=server.url + "/v1beta",
        response_modalities=["Text", "Image"],
    )


def test_gemini_draws_into_run_output_images_and_edits_them_later(gemini_server):
    answered(gemini_server, 3)
    agent = Agent(model=drawing(gemini_server), db=InMemoryDb(), add_history_to_context=True)
    drawn = agent.run("Make me an image of a cat in a tree.")
    (image,) = drawn.images
    assert isinstance(image, Image) and image.content == tiny_png()
    assert image.mime_type == "image/png" and drawn.content == "Here is the picture."
    assert gemini_server.requests[0].json["generationConfig"]["responseModalities"] == [
        "TEXT",
        "IMAGE",
    ]
    reply = drawn.messages[-1]
    assert reply.content == "Here is the picture." and reply.images[0].content == tiny_png()
    edited = agent.run("Add a rainbow in the sky.", images=[Image(content=image.content)])
    assert edited.images[0].content == tiny_png()
    model_turn = gemini_server.requests[1].json["contents"][1]
    assert model_turn["role"] == "model" and "inlineData" in model_turn["parts"][1]
    events = [e for e in agent.run("Once more", stream=True) if getattr(e, "image", None)]
    assert [e.image.content for e in events] == [tiny_png()]
    assert agent.get_last_run_output().images[0].content == tiny_png()


def test_gemini_speaks_raw_samples_into_response_audio(gemini_server, tmp_path):
    answered(gemini_server, 1)
    model = Gemini(
        id="gemini-2.5-flash-preview-tts",
        api_key="k",
        base_url=gemini_server.url + "/v1beta",
        response_modalities=["AUDIO"],
        speech_config={"voice_config": {"prebuilt_voice_config": {"voice_name": "Kore"}}},
    )
    out = Agent(model=model).run("Say cheerfully: Have a wonderful day!")
    assert out.response_audio.content == pcm16()
    assert out.metrics.audio_output_tokens == 12 and out.metrics.output_tokens == 12
    assert out.response_audio.mime_type == "audio/L16;codec=pcm;rate=24000"
    config = gemini_server.requests[0].json["generationConfig"]
    assert config == {
        "responseModalities": ["AUDIO"],
        "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": "Kore"}}},
    }
    write_wav_audio_to_file(str(tmp_path / "hi.wav"), out.response_audio.content)
    with wave.open(str(tmp_path / "hi.wav")) as sound:
        assert sound.readframes(10**6) == pcm16()
    assert pcm_to_wav_bytes(out.response_audio.content) == (tmp_path / "hi.wav").read_bytes()


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"modalities": ["text", "video"]}, "modalities[1]"),
        ({"modalities": "audio"}, "modalities"),
        ({"modalities": ["text", "audio"]}, "audio"),
        ({"audio": {"voice": "sage", "format": "wav"}}, "audio"),
        ({"modalities": ["audio"], "audio": {"voice": "sage", "format": "ogg"}}, "audio.format"),
        ({"modalities": ["audio"], "audio": {"voice": "", "format": "wav"}}, "audio.voice"),
        ({"modalities": ["audio"], "audio": {"voice": "x", "format": "wav", "s": 1}}, "audio.s"),
    ],
)
def test_bad_chat_audio_settings_are_refused_naming_the_field(keywords, field):
    with pytest.raises(InvalidInputError) as raised:
        OpenAIChat(id="gpt-audio", **keywords)
    assert raised.value.to_dict()["details"]["errors"][0]["path"] == field


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"response_modalities": ["TEXT", "VIDEO"]}, "response_modalities[1]"),
        ({"response_modalities": []}, "response_modalities"),
        ({"speech_config": "Kore"}, "speech_config"),
        ({"speech_config": {"voice": "Kore"}}, "speech_config.voice"),
    ],
)
def test_bad_gemini_output_settings_are_refused_naming_the_field(keywords, field):
    with pytest.raises(InvalidInputError) as raised:
        Gemini(**keywords)
    assert raised.value.to_dict()["details"]["errors"][0]["path"] == field


def test_llama_cpp_in_process_takes_text_only_and_a_server_takes_audio():
    from ferrule.models.llama_cpp import LlamaCpp

    assert "modalities" not in LlamaCpp(modalities=["text"]).route(None).attributes
    with pytest.raises(InvalidInputError) as raised:
        LlamaCpp(modalities=["text", "audio"], audio={"voice": "sage", "format": "wav"})
    assert raised.value.to_dict()["details"]["errors"][0]["path"] == "audio"
    served = LlamaCpp(
        base_url="http://127.0.0.1:8081/v1",
        modalities=["text", "audio"],
        audio={"voice": "sage", "format": "wav"},
    )
    assert served.options["extra_body"]["audio"] == {"voice": "sage", "format": "wav"}
