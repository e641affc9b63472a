"""Agno's ``agno.reasoning.manager``: `ReasoningManager`, one way to reason before a run
answers, as `ReasoningEvent` s.

With a reasoning model that thinks natively (`is_native_reasoning_model`: the rules of
`openai`, `anthropic`, `gemini`, `ollama`), its thoughts are the reasoning
(`get_native_reasoning`, streamed by `stream_native_reasoning`). With any other model, a
reasoning agent writes `ReasoningStep` s (`default.get_default_reasoning_agent`, or the
config's ``reasoning_agent``), asked again while the last step says ``continue`` and fewer
than ``max_steps`` rounds ran (`run_default_reasoning`); its messages then join the run's
(`helpers.update_messages_with_reasoning`). `reason` / `areason` give the events:
``started``, each ``step`` (or ``content_delta`` when streaming native thoughts),
``completed`` with the result, or ``error``.
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import attrs

from ..models.message import Message
from .step import NextAction, ReasoningStep

__all__ = [
    "ReasoningConfig",
    "ReasoningEvent",
    "ReasoningEventType",
    "ReasoningManager",
    "ReasoningResult",
    "steps_reasoner",
]


@attrs.define
class ReasoningConfig:
    """How to reason: the model (or a ready ``reasoning_agent``), the steps' bounds, the
    tools a step may call, and the run's context and metrics."""

    reasoning_model: Any = None
    reasoning_agent: Any = None
    min_steps: int = 1
    max_steps: int = 10
    tools: list[Any] | None = None
    tool_call_limit: int | None = None
    use_json_mode: bool = False
    telemetry: bool = True
    debug_mode: bool = False
    debug_level: Literal[1, 2] = 1
    run_context: Any = None
    run_metrics: Any = None


class ReasoningEventType(str, enum.Enum):
    started = "reasoning_started"
    content_delta = "reasoning_content_delta"
    step = "reasoning_step"
    completed = "reasoning_completed"
    error = "reasoning_error"


@attrs.define
class ReasoningResult:
    """What reasoning came to: the ``message`` for the run (native), the ``steps``, the
    reasoning messages, and whether it succeeded (else its ``error``)."""

    message: Message | None = None
    steps: list[ReasoningStep] = attrs.Factory(list)
    reasoning_messages: list[Any] = attrs.Factory(list)
    success: bool = True
    error: str | None = None


@attrs.define
class ReasoningEvent:
    """One thing that happened while reasoning (see `ReasoningEventType`)."""

    event_type: ReasoningEventType
    reasoning_content: str | None = None
    reasoning_step: ReasoningStep | None = None
    reasoning_steps: list[ReasoningStep] = attrs.Factory(list)
    error: str | None = None
    message: Message | None = None
    reasoning_messages: list[Any] = attrs.Factory(list)


def _messages(run_messages: Any) -> list[Any]:
    if isinstance(run_messages, list):
        return run_messages
    getter = getattr(run_messages, "get_input_messages", None)
    return list(getter() if getter is not None else run_messages.messages)


_NATIVE = ("openai", "anthropic", "gemini", "ollama")


class ReasoningManager:
    """``ReasoningManager(ReasoningConfig(reasoning_model=...))`` (see the module docstring)."""

    config: ReasoningConfig

    def __init__(self, config: ReasoningConfig) -> None:
        self.config = config
        self._agent: Any = None

    async def aclose(self) -> None:
        """Delete the step-writing agent the manager made itself (not the config's
        ``reasoning_agent``); the manager makes a new one when it reasons again."""
        made, self._agent = self._agent, None
        if made is not None and made is not self.config.reasoning_agent:
            await made.adelete()

    @property
    def reasoning_model(self) -> Any:
        return self.config.reasoning_model

    def _kind(self, model: Any) -> str | None:
        import importlib

        for kind in _NATIVE:
            check = getattr(
                importlib.import_module(f".{kind}", __package__), f"is_{kind}_reasoning_model"
            )
            if check(model):
                return kind
        return None

    def is_native_reasoning_model(self, model: Any = None) -> bool:
        """Whether ``model`` (default: the config's) thinks natively."""
        chosen = model if model is not None else self.reasoning_model
        return chosen is not None and self._kind(chosen) is not None

    # -- native ---------------------------------------------------------------------------

    def _native_agent(self, model: Any) -> Any:
        if self.config.reasoning_agent is not None:
            return self.config.reasoning_agent
        from .helpers import get_reasoning_agent

        c = self.config
        return get_reasoning_agent(model, c.telemetry, c.debug_mode, c.debug_level, c.run_context)

    def _system_role(self, model: Any) -> bool:
        return self._kind(model) == "openai"

    def get_native_reasoning(self, model: Any, messages: list[Any]) -> ReasoningResult:
        """The native thoughts of ``model`` on ``messages``."""
        from .native import native_reasoning

        message = native_reasoning(
            self._native_agent(model),
            messages,
            self.config.run_metrics,
            system_role=self._system_role(model),
        )
        return self._native_result(message)

    async def aget_native_reasoning(self, model: Any, messages: list[Any]) -> ReasoningResult:
        """`get_native_reasoning`, awaited."""
        from .native import anative_reasoning

        message = await anative_reasoning(
            self._native_agent(model),
            messages,
            self.config.run_metrics,
            system_role=self._system_role(model),
        )
        return self._native_result(message)

    @staticmethod
    def _native_result(message: Message | None) -> ReasoningResult:
        if message is None:
            return ReasoningResult(success=False, error="the reasoning model gave no reasoning")
        return ReasoningResult(message=message, reasoning_messages=[message])

    def stream_native_reasoning(
        self, model: Any, messages: list[Any]
    ) -> Iterator[tuple[str | None, ReasoningResult | None]]:
        """The native thoughts as they come (``(delta, None)``), then ``(None, result)``."""
        from .native import native_reasoning_stream

        agent = self._native_agent(model)
        final: Message | None = None
        for delta, message in native_reasoning_stream(
            agent, messages, system_role=self._system_role(model)
        ):
            if delta:
                yield delta, None
            final = message or final
        yield None, self._native_result(final)

    async def astream_native_reasoning(
        self, model: Any, messages: list[Any]
    ) -> AsyncIterator[tuple[str | None, ReasoningResult | None]]:
        """`stream_native_reasoning`, asynchronously."""
        from .native import anative_reasoning_stream

        agent = self._native_agent(model)
        final: Message | None = None
        async for delta, message in anative_reasoning_stream(
            agent, messages, system_role=self._system_role(model)
        ):
            if delta:
                yield delta, None
            final = message or final
        yield None, self._native_result(final)

    # -- steps ----------------------------------------------------------------------------

    def _steps_agent(self, model: Any) -> Any:
        if self._agent is None:
            if self.config.reasoning_agent is not None:
                self._agent = self.config.reasoning_agent
            else:
                from .default import get_default_reasoning_agent

                c = self.config
                self._agent = get_default_reasoning_agent(
                    model,
                    c.min_steps,
                    c.max_steps,
                    c.tools,
                    tool_call_limit=c.tool_call_limit,
                    use_json_mode=c.use_json_mode,
                    telemetry=c.telemetry,
                    debug_mode=c.debug_mode,
                    debug_level=c.debug_level,
                    run_context=c.run_context,
                )
        return self._agent

    def _round(
        self, run: Any, steps: list[ReasoningStep]
    ) -> tuple[list[ReasoningStep], list[Any], NextAction]:
        from .helpers import get_next_action
        from .native import accumulate

        accumulate(self.config.run_metrics, run)
        found = list(getattr(run.content, "reasoning_steps", None) or [])
        if not found:
            return [], [], NextAction.FINAL_ANSWER
        steps.extend(found)
        replies = [m for m in run.messages if m.role == "assistant"]
        return found, replies, get_next_action(found[-1])

    def run_default_reasoning(
        self, model: Any, run_messages: Any
    ) -> Iterator[tuple[ReasoningStep | None, ReasoningResult | None]]:
        """Each step as the reasoning agent writes it (``(step, None)``), then
        ``(None, result)`` (see the module docstring)."""
        from ..agent.failed_runs import raise_failed
        from .helpers import update_messages_with_reasoning
        from .native import kit_messages

        agent = self._steps_agent(model)
        steps: list[ReasoningStep] = []
        reasoning: list[Any] = []
        action, rounds = NextAction.CONTINUE, 0
        while action in (NextAction.CONTINUE, NextAction.VALIDATE, NextAction.RESET):
            if rounds >= self.config.max_steps:
                break
            rounds += 1
            try:
                run = raise_failed(agent.run(kit_messages(_messages(run_messages), False)))
            except Exception as exc:
                yield None, ReasoningResult(steps=steps, success=False, error=str(exc))
                return
            found, replies, action = self._round(run, steps)
            if not found:
                break
            reasoning = replies
            for step in found:
                yield step, None
        update_messages_with_reasoning(run_messages, reasoning)
        yield None, ReasoningResult(steps=steps, reasoning_messages=reasoning)

    async def arun_default_reasoning(
        self, model: Any, run_messages: Any
    ) -> AsyncIterator[tuple[ReasoningStep | None, ReasoningResult | None]]:
        """`run_default_reasoning`, asynchronously."""
        from ..agent.failed_runs import raise_failed
        from .helpers import update_messages_with_reasoning
        from .native import kit_messages

        agent = self._steps_agent(model)
        steps: list[ReasoningStep] = []
        reasoning: list[Any] = []
        action, rounds = NextAction.CONTINUE, 0
        while action in (NextAction.CONTINUE, NextAction.VALIDATE, NextAction.RESET):
            if rounds >= self.config.max_steps:
                break
            rounds += 1
            try:
                run = raise_failed(await agent.arun(kit_messages(_messages(run_messages), False)))
            except Exception as exc:
                yield None, ReasoningResult(steps=steps, success=False, error=str(exc))
                return
            found, replies, action = self._round(run, steps)
            if not found:
                break
            reasoning = replies
            for step in found:
                yield step, None
        update_messages_with_reasoning(run_messages, reasoning)
        yield None, ReasoningResult(steps=steps, reasoning_messages=reasoning)

    # -- the events -----------------------------------------------------------------------

    @staticmethod
    def _finished(result: ReasoningResult) -> ReasoningEvent:
        if not result.success:
            return ReasoningEvent(ReasoningEventType.error, error=result.error)
        return ReasoningEvent(
            ReasoningEventType.completed,
            reasoning_steps=result.steps,
            message=result.message,
            reasoning_messages=result.reasoning_messages,
            reasoning_content=result.message.reasoning_content if result.message else None,
        )

    def reason(self, run_messages: Any, stream: bool = False) -> Iterator[ReasoningEvent]:
        """The reasoning's events (see the module docstring)."""
        model = self.reasoning_model
        if model is None:
            yield ReasoningEvent(ReasoningEventType.error, error="no reasoning model")
            return
        yield ReasoningEvent(ReasoningEventType.started)
        if self.is_native_reasoning_model(model):
            messages = _messages(run_messages)
            if stream:
                for delta, result in self.stream_native_reasoning(model, messages):
                    if delta:
                        yield ReasoningEvent(
                            ReasoningEventType.content_delta, reasoning_content=delta
                        )
                    if result is not None:
                        yield self._finished(result)
                return
            yield self._finished(self.get_native_reasoning(model, messages))
            return
        for step, result in self.run_default_reasoning(model, run_messages):
            if step is not None:
                yield ReasoningEvent(ReasoningEventType.step, reasoning_step=step)
            if result is not None:
                yield self._finished(result)

    async def areason(
        self, run_messages: Any, stream: bool = False
    ) -> AsyncIterator[ReasoningEvent]:
        """`reason`, asynchronously."""
        model = self.reasoning_model
        if model is None:
            yield ReasoningEvent(ReasoningEventType.error, error="no reasoning model")
            return
        yield ReasoningEvent(ReasoningEventType.started)
        if self.is_native_reasoning_model(model):
            messages = _messages(run_messages)
            if stream:
                async for delta, result in self.astream_native_reasoning(model, messages):
                    if delta:
                        yield ReasoningEvent(
                            ReasoningEventType.content_delta, reasoning_content=delta
                        )
                    if result is not None:
                        yield self._finished(result)
                return
            yield self._finished(await self.aget_native_reasoning(model, messages))
            return
        async for step, result in self.arun_default_reasoning(model, run_messages):
            if step is not None:
                yield ReasoningEvent(ReasoningEventType.step, reasoning_step=step)
            if result is not None:
                yield self._finished(result)


def steps_reasoner(
    reasoning_model: Any, reasoning_agent: Any, min_steps: int, max_steps: int
) -> ReasoningManager:
    """A manager reasoning in steps (`ReasoningManager.run_default_reasoning`) with
    ``reasoning_agent``, else a step-writing agent on ``reasoning_model``: how an `Agent`
    given ``reasoning_agent`` or ``reasoning_min_steps`` / ``reasoning_max_steps`` reasons."""
    config = ReasoningConfig(
        reasoning_model=reasoning_model,
        reasoning_agent=reasoning_agent,
        min_steps=min_steps,
        max_steps=max_steps,
    )
    return ReasoningManager(config)
