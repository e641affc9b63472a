"""The instrumentation seam: observers of agent runs, model calls and tool calls.

A plugin that traces or measures (ferrule-otel: OpenTelemetry spans) answers the kit's
hook ``ferrule_instrumentation`` with an `Instrumentation`. The top layer asks a kernel's
plugins once (`instrumentation_of`) and keeps the answer; with no instrumentation
installed it is None, and the sites in ``ferrule.agent`` and ``ferrule serve`` test that
one value and do nothing else.

Each ``start_*`` call returns a span whose ``finish`` is called exactly once, in the same
asyncio task, when the thing ends; spans started in between (a run's model calls and tool
calls) nest inside it, so an implementation may make its span the current one (a context
variable) from start to finish. Everything passed is read-only and may be kept only until
``finish`` returns. Message content is passed as ferrule's objects: an implementation that
does not record content pays nothing for it.

An instrumentation that raises never fails the run it observes: `instrumentation_of`
wraps what the plugins return so that an exception is logged (``instrumentation_failed``)
and that plugin's observation is dropped.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ferrule_kernel import FerruleError, get_logger

if TYPE_CHECKING:
    import pluggy

    from .content.messages import Message, ToolCall
    from .models.lmspec import ModelRoute

log = get_logger("ferrule.instrumentation")


class RunSpan(Protocol):
    """One agent run (one leg of it: a paused run that continues starts another)."""

    def finish(
        self,
        *,
        status: str,
        output: Message | None,
        input_tokens: int,
        output_tokens: int,
        exception: BaseException | None,
    ) -> None:
        """The run ended: ``status`` is ``completed``, ``paused``, ``cancelled`` or
        ``error`` (then ``exception`` is the typed error it ended with); ``output`` is its
        last assistant message, if any; the token counts are the run's totals so far."""


class ModelCallSpan(Protocol):
    """One request to a language model (an ``infer`` stream)."""

    def finish(
        self,
        *,
        message: Message | None,
        finish_reason: str | None,
        usage: Mapping[str, int] | None,
        time_to_first_token: float | None,
        exception: BaseException | None,
    ) -> None:
        """The stream ended: ``message`` is the reply as accumulated (None on failure),
        ``usage`` the backend's (``input_tokens``, ``output_tokens``, ...),
        ``time_to_first_token`` seconds from the request to its first item (None when
        nothing came), ``exception`` what it failed with."""


class ToolCallSpan(Protocol):
    """One tool call of a run."""

    def finish(self, *, result: str | None, error: str | None) -> None:
        """The call ended: ``result`` is the text the model is sent; ``error`` the failure
        the model is told about (a raising tool, a timeout, ...), or None."""


class Instrumentation(Protocol):
    """What a ``ferrule_instrumentation`` hook returns."""

    def start_run(
        self,
        *,
        run_id: str,
        agent_name: str | None,
        agent_id: str | None,
        conversation_id: str | None,
        route: ModelRoute,
        messages: Sequence[Message],
    ) -> RunSpan:
        """An agent run starts on the model of ``route``; ``messages`` are the run's
        messages as it starts (its input; a session's history is added later, and each
        model call's ``inputs`` carry all the model sees)."""

    def start_model_call(self, *, route: ModelRoute, inputs: Mapping[str, Any]) -> ModelCallSpan:
        """A model request starts: ``inputs`` is the ``infer`` input on ferrule's wire
        (``messages``, ``tools``, ``temperature``, ``max_tokens``, ...)."""

    def start_tool_call(self, *, call: ToolCall) -> ToolCallSpan:
        """A tool call starts (``call.name``, ``call.id``, ``call.arguments``)."""


class _Guarded:
    """The plugins' instrumentations as one: each call goes to every one of them, and one
    that raises is logged and left out of that run, call or span."""

    def __init__(self, parts: Sequence[tuple[str, Instrumentation]]) -> None:
        self.parts = list(parts)

    def _start(self, method: str, kwargs: dict[str, Any]) -> _GuardedSpan:
        spans = []
        for name, part in self.parts:
            try:
                spans.append((name, getattr(part, method)(**kwargs)))
            except Exception as exc:
                log.warning("instrumentation_failed", plugin=name, call=method, error=repr(exc))
        return _GuardedSpan(spans)

    def start_run(self, **kwargs: Any) -> _GuardedSpan:
        return self._start("start_run", kwargs)

    def start_model_call(self, **kwargs: Any) -> _GuardedSpan:
        return self._start("start_model_call", kwargs)

    def start_tool_call(self, **kwargs: Any) -> _GuardedSpan:
        return self._start("start_tool_call", kwargs)


class _GuardedSpan:
    def __init__(self, spans: list[tuple[str, Any]]) -> None:
        self.spans = spans

    def finish(self, **kwargs: Any) -> None:
        # the last started first: spans that made themselves current unwind in order
        for name, span in reversed(self.spans):
            try:
                span.finish(**kwargs)
            except Exception as exc:
                log.warning("instrumentation_failed", plugin=name, call="finish", error=repr(exc))


_known: weakref.WeakKeyDictionary[pluggy.PluginManager, Instrumentation | None] = (
    weakref.WeakKeyDictionary()
)


def instrumentation_of(pm: pluggy.PluginManager) -> Instrumentation | None:
    """The instrumentation of the plugins registered with ``pm`` (load them first), asked
    once per plugin manager; None when no plugin instruments (the sites then do nothing)."""
    try:
        return _known[pm]
    except KeyError:
        pass
    parts: list[tuple[str, Instrumentation]] = []
    for impl in pm.hook.ferrule_instrumentation.get_hookimpls():
        try:
            found: Any = impl.function()
        except Exception as exc:
            log.warning("instrumentation_failed", plugin=impl.plugin_name, error=repr(exc))
            continue
        if found is not None:
            parts.append((impl.plugin_name, found))
    instrumentation: Instrumentation | None = _Guarded(parts) if parts else None
    _known[pm] = instrumentation
    return instrumentation


async def observed_model_stream(
    instrumentation: Instrumentation,
    route: ModelRoute,
    inputs: Mapping[str, Any],
    items: AsyncGenerator[dict[str, Any], None],
) -> AsyncGenerator[dict[str, Any], None]:
    """``items``, an ``infer`` stream, observed as one model call: for callers that pass
    a model's stream on (``ferrule serve``'s OpenAI routes) rather than fold it as the
    agent does. Closing it closes ``items``."""
    import time

    from .models.lm import MessageAccumulator

    span = instrumentation.start_model_call(route=route, inputs=inputs)
    accumulator = MessageAccumulator()
    start = time.perf_counter()
    first: float | None = None
    failure: BaseException | None = None
    message = None
    try:
        async with contextlib.aclosing(items):
            async for item in items:
                if first is None:
                    first = time.perf_counter() - start
                accumulator.add(item)
                yield item
        with contextlib.suppress(FerruleError):  # tool-call arguments that are not JSON:
            message = accumulator.message()  # the caller's to answer; the span lacks the reply
    except BaseException as exc:  # a closed stream's GeneratorExit too: the span ends
        failure = exc
        raise
    finally:
        span.finish(
            message=message,
            finish_reason=accumulator.finish_reason,
            usage=accumulator.usage,
            time_to_first_token=first,
            exception=failure,
        )
