"""Ailoy 0.2 `test_langmodel.py`: a local model (Qwen3's id, run as the offline SmolLM2
through ``$FERRULE_MODEL_ALIASES``) made with a progress callback, then asked without an
agent: deltas accumulated with ``MessageDelta`` ``+=``, a whole reply with `infer`, and a
reply with thinking asked for."""

from __future__ import annotations

from collections.abc import AsyncIterator

import ferrule as ai
import pytest
import pytest_asyncio

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRESS: list[ai.CacheProgress] = []


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def model() -> AsyncIterator[ai.LangModel]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FERRULE_MODEL_ALIASES", "Qwen/Qwen3-0.6B=SmolLM2-135M-Instruct")
        lm = await ai.LangModel.new_local("Qwen/Qwen3-0.6B", progress_callback=PROGRESS.append)
    yield lm
    await lm.adelete()


async def collect(stream: AsyncIterator[ai.MessageDeltaOutput]) -> list[ai.MessageDeltaOutput]:
    return [out async for out in stream]


async def test_new_local_progress(model: ai.LangModel) -> None:
    # The steps that happened: the packaged weights file found, then the model loaded.
    assert PROGRESS == [
        ai.CacheProgress("SmolLM2-135M-Instruct.Q4_1.gguf ready", 1, 2),
        ai.CacheProgress("Initialized", 2, 2),
    ]
    assert model.route.attributes["model"] == "SmolLM2-135M-Instruct"


async def test_simple_chat_delta(model: ai.LangModel) -> None:
    outputs = await collect(model.infer_delta("Hello"))
    msg_d = ai.MessageDelta()
    for out in outputs:
        assert out.delta.thinking is None  # SmolLM2 does not think
        assert all(isinstance(p, ai.PartDelta.Text) for p in out.delta.contents)
        msg_d += out.delta
    assert [o.finish_reason is not None for o in outputs].count(True) == 1
    assert outputs[-1].finish_reason in (ai.FinishReason.Stop(), ai.FinishReason.Length())
    message = msg_d.finish()
    assert message.role == "assistant" and message.text.strip()
    assert message.text == "".join(
        p.text for o in outputs for p in o.delta.contents if isinstance(p, ai.PartDelta.Text)
    )


async def test_simple_chat(model: ai.LangModel) -> None:
    msg = ai.Message("user", contents="Hello")
    out = await model.infer([msg])
    assert out.message.role == "assistant" and out.message.text.strip()
    assert out.finish_reason in (ai.FinishReason.Stop(), ai.FinishReason.Length())


async def test_chat_with_think(model: ai.LangModel) -> None:
    msg = ai.Message("user", contents=[ai.Part.Text(text="Hello")])
    config = ai.LangModelInferConfig(think_effort="enable", max_tokens=3)
    msg_d = ai.MessageDelta()
    outputs = await collect(model.infer_delta([msg], config=config))
    for out in outputs:
        msg_d += out.delta
    message = msg_d.finish()
    # the config reached the model: three tokens, then the length limit
    assert outputs[-1].finish_reason == ai.FinishReason.Length()
    assert message.text.strip()


async def test_infer_sync_twins(model: ai.LangModel) -> None:
    import asyncio

    def both() -> tuple[ai.MessageOutput, list[ai.MessageDeltaOutput]]:
        config = ai.LangModelInferConfig(temperature=0.0, max_tokens=8)
        whole = model.infer_sync("Say hi", config=config)
        pieces = list(model.infer_delta_sync("Say hi", config=config))
        return whole, pieces

    whole, pieces = await asyncio.to_thread(both)
    acc = ai.MessageDelta()
    for out in pieces:
        acc += out.delta
    assert acc.finish().text == whole.message.text  # greedy: the same reply both ways
