"""What the turn loop runs with (`RunDeps`): one frozen object per run, built by `Agent`
from its settings and its stores, so that the loop (`loop`) sees the agent's options and
the session work it calls (`SessionSteps`) but never the `Agent` itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lmspec import ModelRoute

from ..tools import Tool
from .fallback import FallbackModel, ModelSlot
from .langmodel import LangModel
from .model_requests import RetryPolicy
from .sinks import Sink
from .state import RunState

T = TypeVar("T")


@attrs.frozen
class SecondModels:
    """What the agent's second model calls (user memories, session summaries, reasoning,
    parsing) run with: each runs as an inner agent (`new_agent`, the `Agent` class, given
    by `Agent` so that no module below it imports it) on `model`."""

    runtime: Any
    agent_id: str
    #: The agent's own (first) model, as a `LangModel` on its component.
    main: Callable[[], LangModel]
    #: The second models the agent defined, by use: deleted with the agent.
    owned: dict[str, LangModel]
    new_agent: Callable[..., Any]
    #: A call of the agent's storage component (``db(method, inputs, result_type)``).
    db: Callable[[str, Any, type[Any]], Awaitable[Any]]
    #: The model a ``"provider:model_id"`` name names (Agno's second models may be named).
    named: Callable[[str], Any] | None = None
    #: A `ferrule.reasoning.manager.ReasoningManager` reasoning in steps
    #: (``steps_reasoner(model, reasoning_agent, min_steps, max_steps)``: `reasoning_steps`).
    reasoner: Callable[..., Any] | None = None

    async def model(self, key: str, model: Any) -> LangModel:
        """The model of a ``key`` call: the agent's own (``model`` None), a `LangModel` as
        it is, or ``model`` defined once on the agent's runtime."""
        if model is None:
            return self.main()
        if isinstance(model, LangModel):
            return model
        if isinstance(model, str) and self.named is not None:
            model = self.named(model)
        if key not in self.owned:
            self.owned[key] = await LangModel.new(model, runtime=self.runtime)
        return self.owned[key]


@attrs.frozen
class SessionSteps:
    """A run's session work: `prepare` loads its state and resolves its dependencies (what
    its pre-hooks see); `begin` loads what it starts from (the rest: history, memories,
    summary, knowledge) and builds its messages; `end` commits it to the db (its memory and
    summary steps told to the run's sink); `end_quietly` is `end` for a run that failed
    already (a failure to store it is only logged); `checkpoint` stores it as far as it
    went after a batch of tool calls (with Agno's ``checkpoint="tool-batch"``)."""

    prepare: Callable[[RunState], Awaitable[Any]]
    begin: Callable[[RunState], Awaitable[None]]
    end: Callable[[RunState, Sink | None], Awaitable[None]]
    end_quietly: Callable[[RunState], Awaitable[None]]
    checkpoint: Callable[[RunState], Awaitable[None]]

    @classmethod
    def of(cls, sessions: Any) -> SessionSteps:
        """The steps of ``sessions`` (`run_sessions.RunSessions`), its methods by name."""
        names = [field.name for field in attrs.fields(cls)]
        return cls(*(getattr(sessions, name) for name in names))


@attrs.frozen
class RunDeps:
    """Everything a run needs that is not its own state (`RunState`)."""

    runtime: Any
    #: The agent's models: the first, then a `FallbackModel`'s others.
    slots: Sequence[ModelSlot]
    fallback: FallbackModel | None
    agent_id: str
    agent_name: str | None
    #: Passed to the model's ``infer`` (``temperature``, ``max_tokens``...).
    options: Mapping[str, Any]
    output_retries: int
    parse_response: bool
    #: Ask for the output schema through the provider's JSON mode (``use_json_mode``).
    use_json_mode: bool
    tool_timeout: float | None
    pre_hooks: Sequence[Any]
    post_hooks: Sequence[Any]
    tool_hooks: Sequence[Any]
    debug_mode: bool
    #: The tracing plugin's sites (ferrule-otel), None without one.
    instrumentation: Any
    #: What user hooks receive as ``agent`` (the loop itself never reads it).
    agent: Any
    #: The agent's conversation, which a completed `query` run joins.
    history: list[Message]
    #: The agent's running runs, which a run leaves when it ends (not when it pauses).
    runs: dict[str, RunState]
    #: The run's tools by name (the agent's, its toolsets' and its knowledge's).
    resolve_tools: Callable[..., Awaitable[dict[str, Tool]]]
    sessions: SessionSteps
    #: Points the knowledge search tool at the run's references as each leg starts.
    track_references: Callable[[RunState], None]
    #: The reasoning model's thinking before a fresh run (None: no reasoning model).
    reason: Callable[[RunState, Sink], Awaitable[None]] | None
    #: The parser model turning the reply into the output schema (None: none).
    parse_reply: Callable[[RunState, str], Awaitable[Any]] | None
    #: The run's tool results compressed before a model request when due, given the
    #: tools' descriptions (`compression.compress_tool_results`; None: not asked for).
    compress: Callable[[RunState, Sink, list[dict[str, Any]]], Awaitable[None]] | None = None
    #: Follow-up prompts suggested after the reply (`followups.suggest_followups`).
    suggest_followups: Callable[[RunState, Sink], Awaitable[None]] | None = None
    #: The output model writing the run's output once the model answered (`output_model`).
    write_output: Callable[[RunState, Sink], Awaitable[Message]] | None = None
    #: Agno's ``tool_choice``, sent with the tools (`model_requests.tool_choice_sent`).
    tool_choice: str | dict[str, Any] | None = None
    #: How a failed model request is tried again (None: it ends the run).
    retry: RetryPolicy | None = None
    #: 2: the debug log shows what each model request sends and each reply's text.
    debug_level: int = 1

    @property
    def route(self) -> ModelRoute:
        """The route of the (first) model."""
        return self.slots[0].route
