"""Ailoy 0.1 `test_runtime_async.py`: a named in-process AsyncRuntime, operators, and a
language model component under Ailoy's component type name."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ferrule.runtime import AsyncRuntime


@pytest.fixture(scope="module")
def runtime() -> Iterator[AsyncRuntime]:
    with AsyncRuntime("inproc://async") as rt:
        yield rt


async def test_async_echo(runtime: AsyncRuntime) -> None:
    assert (await runtime.call("echo", {"text": "hello world"}))["text"] == "hello world"


async def test_async_spell(runtime: AsyncRuntime) -> None:
    letters = [out["text"] async for out in runtime.call_iter("spell", {"text": "abcdefghijk"})]
    assert letters == list("abcdefghijk")


async def test_async_infer_language_model(runtime: AsyncRuntime) -> None:
    await runtime.define("tvm_language_model", "lm0", {"model": "Qwen/Qwen3-0.6B"})
    request = {
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Who are you?"}]}]
    }
    text = ""
    finish = None
    async for out in runtime.call_iter_method("lm0", "infer", request):
        for part in out.get("message", {}).get("content", []):
            text += part.get("text", "")
        finish = out.get("finish_reason") or finish
    await runtime.delete("lm0")
    assert text.strip(), "the offline model answered"
    assert finish in ("stop", "length")
