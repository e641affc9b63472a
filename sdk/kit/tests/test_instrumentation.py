"""`observed_model_stream`: the span of a passed-on ``infer`` stream ends exactly once, with
the reply when the stream ends, with the exception when it fails or is closed early."""

from __future__ import annotations

from typing import Any

import pytest
from ferrule_kit.errors import ProviderUnavailableError
from ferrule_kit.instrumentation import observed_model_stream
from ferrule_kit.models.lm import Usage, finish, text_delta
from ferrule_kit.models.lmspec import ModelRoute


class Recorder:
    """An instrumentation that keeps what each model-call span finished with."""

    def __init__(self) -> None:
        self.finished: list[dict[str, Any]] = []

    def start_model_call(self, *, route: ModelRoute, inputs: Any) -> Recorder:
        return self

    def finish(self, **kwargs: Any) -> None:
        self.finished.append(kwargs)


async def _items(fail: bool = False):
    yield text_delta("Hel")
    yield text_delta("lo")
    if fail:
        raise ProviderUnavailableError("overloaded", provider="loopback")
    yield finish("stop", Usage(input_tokens=3, output_tokens=2))


def _observed(recorder: Recorder, items: Any) -> Any:
    return observed_model_stream(recorder, ModelRoute("m", {}), {"messages": []}, items)  # type: ignore[arg-type]


async def test_a_stream_that_ends_finishes_its_span_with_the_reply():
    recorder = Recorder()
    items = [item async for item in _observed(recorder, _items())]
    assert len(items) == 3
    (done,) = recorder.finished
    assert done["exception"] is None and done["message"].text == "Hello"
    assert done["finish_reason"] == "stop" and done["time_to_first_token"] is not None


async def test_a_stream_that_fails_finishes_its_span_with_the_error():
    recorder = Recorder()
    with pytest.raises(ProviderUnavailableError):
        async for _ in _observed(recorder, _items(fail=True)):
            pass
    (done,) = recorder.finished
    assert isinstance(done["exception"], ProviderUnavailableError) and done["message"] is None


async def test_a_stream_closed_early_finishes_its_span_once():
    recorder = Recorder()
    stream = _observed(recorder, _items())
    assert (await stream.__anext__())["message"]["content"][0]["text"] == "Hel"
    await stream.aclose()
    (done,) = recorder.finished
    assert isinstance(done["exception"], GeneratorExit) and done["message"] is None
