"""The Agent's options as data: one frozen settings group per concern (`IdentitySettings`,
`ContextSettings`, `InputSettings`, `ModelSettings`, `ToolSettings`, `SessionSettings`, `HistorySettings`,
`MemorySettings`, `KnowledgeSettings`, `ReasoningSettings`, `OutputSettings`,
`StreamSettings`, `HookSettings`, `DebugSettings`), gathered in `AgentSettings`, which
`Agent.__init__` builds from its keyword arguments (Agno's names) with
`AgentSettings.from_options`. Each option is checked as it is set, and a bad one is
refused with `InvalidInputError` naming it (``field="tool_call_limit"``); an unknown
keyword is a `TypeError` naming the nearest option.

`Agent`'s keyword signature is made from the groups (`agent_signature`), and its typed
overloads take the same options as ``**options: Unpack[AgentOptions]`` (`_typing`: one
TypedDict per group, which sdk/ferrule/tests/test_agent_options.py checks against the
groups field by field). docs/architecture.md, "Adding an Agent option", says how to add
one. Also here: the id an agent's name makes (`agent_id_for`) and the settings
`Agent.deep_copy` copies (`copied_settings`)."""

from __future__ import annotations

import copy
import difflib
import inspect
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lm import Reasoning

from ..compression.manager import CompressionManager
from ..models.fallback import FallbackConfig
from ..session.summary import SessionSummaryManager
from . import option_checks as check
from .events import RunEvent
from .hooks import check_hooks
from .langmodel import LangModel
from .memory import MemoryManager
from .reasoning_steps import check_steps
from .usage import UsageLimits


def _resolve(group: Any, name: str, value: Any) -> None:
    """Set an option that follows another (a frozen group's own post-init only)."""
    object.__setattr__(group, name, value)


@attrs.frozen(kw_only=True)
class IdentitySettings:
    """Who the agent is: ``name`` and ``id`` (its id in stored runs; by default made from
    the name, `agent_id_for`)."""

    name: str | None = attrs.field(default=None, validator=check.text)
    id: str | None = attrs.field(default=None, validator=check.text)


@attrs.frozen(kw_only=True)
class ContextSettings:
    """What the system message says (see `inputs.system_text`): ``system_message`` as
    given, else ``description``, ``instructions`` and Agno's context lines."""

    #: A string, or a function making it (taking ``agent`` / ``session_state`` /
    #: ``run_context`` by name).
    system_message: Any = attrs.field(default=None, validator=check.text_or_function)
    description: str | None = attrs.field(default=None, validator=check.text)
    instructions: str | Sequence[str] | Any = attrs.field(
        default=None, validator=check.instructions
    )
    #: Agno's instruction to answer in markdown, added to the system message.
    markdown: bool = attrs.field(default=False, validator=check.flag)
    #: Agno's context lines: the current time (in ``timezone_identifier``, else the local
    #: zone, as ``datetime_format`` says) and the agent's name, in the system message's
    #: ``<additional_information>``.
    add_datetime_to_context: bool = attrs.field(default=False, validator=check.flag)
    timezone_identifier: str | None = attrs.field(default=None, validator=check.timezone)
    #: The time's ``strftime`` format (default ``"%Y-%m-%d %H:%M:%S %Z"``).
    datetime_format: str | None = attrs.field(default=None, validator=check.text)
    add_name_to_context: bool = attrs.field(default=False, validator=check.flag)
    #: The agent's approximate location (from its public address, looked up through the
    #: runtime's ``http_request`` operator: the host's address policy applies).
    add_location_to_context: bool = attrs.field(default=False, validator=check.flag)
    #: What the answer should look like (``<expected_output>``), and text added as is at
    #: the end of the system message.
    expected_output: str | None = attrs.field(default=None, validator=check.text)
    additional_context: str | None = attrs.field(default=None, validator=check.text)
    #: The agent's role, in ``<your_role>`` after the description.
    role: str | None = attrs.field(default=None, validator=check.text)
    #: Instructions in ``<instructions>`` tags (else as lines of their own).
    use_instruction_tags: bool = attrs.field(default=False, validator=check.flag)
    #: ``{name}`` placeholders of the system and user messages filled from the session
    #: state, the dependencies, the metadata and ``user_id`` (`context.format_variables`).
    resolve_in_context: bool = attrs.field(default=True, validator=check.flag)
    #: False: no system message but a ``system_message`` given.
    build_context: bool = attrs.field(default=True, validator=check.flag)
    #: The system message's role (``"developer"`` is sent as the system message).
    system_message_role: str = attrs.field(
        default="system", validator=check.role_in("system", "developer", "user", "assistant")
    )
    #: Agno's Agent Skills (``agno.skills``) are not ferrule's: only None is taken.
    skills: None = attrs.field(default=None, validator=check.no_skills)


@attrs.frozen(kw_only=True)
class InputSettings:
    """What goes to the model with the user's input (see `context`): Agno's
    ``dependencies`` (functions among them called as each run starts) and
    ``add_dependencies_to_context``, the run's ``metadata``, ``additional_input`` (messages
    after the system message), the user message's role, ``build_user_context`` (False: the
    input as it is, no references, dependencies or placeholders), ``send_media_to_model``
    and an ``input_schema`` each run's input is validated as."""

    dependencies: dict[str, Any] | None = attrs.field(default=None, validator=check.mapping)
    add_dependencies_to_context: bool = attrs.field(default=False, validator=check.flag)
    metadata: dict[str, Any] | None = attrs.field(default=None, validator=check.mapping)
    additional_input: Sequence[Any] | None = attrs.field(default=None, validator=check.messages)
    user_message_role: str = attrs.field(
        default="user", validator=check.role_in("user", "system", "assistant")
    )
    build_user_context: bool = attrs.field(default=True, validator=check.flag)
    send_media_to_model: bool = attrs.field(default=True, validator=check.flag)
    input_schema: Any = attrs.field(default=None, validator=check.input_schema)


@attrs.frozen(kw_only=True)
class ModelSettings:
    """How the model is asked: ``options`` (passed to its ``infer``: ``temperature``,
    ``max_tokens``...), ``usage_limits`` (model requests and tokens per run) and Agno's
    ``fallback_models`` (tried in order when the model fails: `fallback.with_fallbacks`) or
    ``fallback_config`` (a `FallbackConfig`: which models a rate limit, an input over the
    context window or another failure goes to, and a ``callback`` told of each switch),
    ``tool_choice`` (sent with the tools), and ``retries`` of a failed model request
    (`model_requests.RetryPolicy`: ``delay_between_retries`` seconds apart, doubled each
    time with ``exponential_backoff``)."""

    options: Mapping[str, Any] | None = attrs.field(
        default=None, validator=check.optional(Mapping, "a dict of model options")
    )
    usage_limits: UsageLimits | None = attrs.field(
        default=None, validator=check.optional(UsageLimits, "a UsageLimits")
    )
    fallback_models: Sequence[Any] | None = attrs.field(
        default=None, validator=check.optional(list, "a list of models")
    )
    fallback_config: FallbackConfig | None = attrs.field(
        default=None, validator=check.optional(FallbackConfig, "a FallbackConfig")
    )
    tool_choice: str | dict[str, Any] | None = attrs.field(
        default=None, validator=check.tool_choice
    )
    retries: int = attrs.field(default=0, validator=check.count)
    delay_between_retries: float = attrs.field(default=1, validator=check.delay)
    exponential_backoff: bool = attrs.field(default=False, validator=check.flag)

    def __attrs_post_init__(self) -> None:
        _resolve(self, "options", dict(self.options or {}))


@attrs.frozen(kw_only=True)
class ToolSettings:
    """How tools are called: ``tool_call_limit`` (calls per run) and ``tool_timeout``
    (seconds per call unless the tool sets its own; None: no limit); and Agno's
    ``cache_callables`` (keep what a tool or knowledge factory makes, per its key function,
    else per user or session: `callable_cache`)."""

    tool_call_limit: int | None = attrs.field(default=None, validator=check.count)
    tool_timeout: float | None = attrs.field(default=60.0, validator=check.seconds)
    cache_callables: bool = attrs.field(default=True, validator=check.flag)
    callable_tools_cache_key: Callable[..., Any] | None = attrs.field(
        default=None, validator=check.function
    )


@attrs.frozen(kw_only=True)
class SessionSettings:
    """Where runs are kept and for whom: ``db``, ``session_id`` (default: a new one per
    agent), ``user_id``, ``session_state`` (a new session's state; without a db, the state
    itself), ``add_session_state_to_context`` and ``enable_agentic_state`` (the model may
    change the state through an ``update_session_state`` tool)."""

    db: Any = attrs.field(default=None, validator=check.db)
    session_id: str | None = attrs.field(default=None, validator=check.text)
    user_id: str | None = attrs.field(default=None, validator=check.text)
    session_state: dict[str, Any] | None = attrs.field(default=None, validator=check.state)
    add_session_state_to_context: bool = attrs.field(default=False, validator=check.flag)
    enable_agentic_state: bool = attrs.field(default=False, validator=check.flag)
    #: The agent's (and the call's) ``session_state`` replaces the stored one, rather than
    #: the stored one being kept under it.
    overwrite_db_session_state: bool = attrs.field(default=False, validator=check.flag)
    #: Keep the session as last read or written, rather than reading it for each run.
    cache_session: bool = attrs.field(default=False, validator=check.flag)
    #: A new session's first message: the agent's, stored as its first run.
    introduction: str | None = attrs.field(default=None, validator=check.text)
    #: Agno 2.9's: when a run is written to the db: at its end (``"runs"``, None: the
    #: default) or also after each batch of tool calls (``"tool-batch"``, as ``running``).
    checkpoint: Literal["runs", "tool-batch", "tools"] | None = attrs.field(
        default=None, validator=check.checkpoint
    )


@attrs.frozen(kw_only=True)
class HistorySettings:
    """What a run sees of earlier runs: ``add_history_to_context`` with
    ``num_history_runs`` or ``num_history_messages``; session summaries; the history tools
    (``read_chat_history``, ``read_tool_call_history``, ``search_past_sessions``)."""

    add_history_to_context: bool = attrs.field(default=False, validator=check.flag)
    num_history_runs: int | None = attrs.field(default=None, validator=check.count)
    num_history_messages: int | None = attrs.field(default=None, validator=check.count)
    #: Only the newest calls of the history, with their results.
    max_tool_calls_from_history: int | None = attrs.field(default=None, validator=check.count)
    #: What a stored run keeps: its media, its tool calls and their results, the history
    #: it was given (read back with ``get_session_messages(skip_history_messages=False)``).
    store_media: bool = attrs.field(default=True, validator=check.flag)
    store_tool_messages: bool = attrs.field(default=True, validator=check.flag)
    store_history_messages: bool = attrs.field(default=False, validator=check.flag)
    enable_session_summaries: bool = attrs.field(default=False, validator=check.flag)
    #: Default: ``enable_session_summaries``, or a ``session_summary_manager`` given.
    add_session_summary_to_context: bool | None = attrs.field(
        default=None, validator=check.maybe_flag
    )
    #: Writes the summaries (its model and prompt; default: the agent's model, ferrule's).
    session_summary_manager: SessionSummaryManager | None = attrs.field(
        default=None, validator=check.optional(SessionSummaryManager, "a SessionSummaryManager")
    )
    #: Tools the model reads the db with (`history_tools`): the session's messages, its
    #: tool calls, the user's other sessions (how many, and how many runs of each).
    read_chat_history: bool = attrs.field(default=False, validator=check.flag)
    read_tool_call_history: bool = attrs.field(default=False, validator=check.flag)
    search_past_sessions: bool = attrs.field(default=False, validator=check.flag)
    num_past_sessions_to_search: int | None = attrs.field(default=None, validator=check.count)
    num_past_session_runs_in_search: int | None = attrs.field(default=None, validator=check.count)
    #: Agno's older names of ``search_past_sessions`` / ``num_past_sessions_to_search``.
    search_session_history: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    num_history_sessions: int | None = attrs.field(default=None, validator=check.count)

    def __attrs_post_init__(self) -> None:
        if self.add_session_summary_to_context is None:
            summaries = self.enable_session_summaries or self.session_summary_manager is not None
            _resolve(self, "add_session_summary_to_context", summaries)
        if self.search_session_history and not self.search_past_sessions:
            _resolve(self, "search_past_sessions", True)
        if self.num_history_sessions is not None and self.num_past_sessions_to_search is None:
            _resolve(self, "num_past_sessions_to_search", self.num_history_sessions)


@attrs.frozen(kw_only=True)
class MemorySettings:
    """The user's memories: ``enable_user_memories`` (or Agno's ``update_memory_on_run``)
    keeps them with ``memory_manager`` (default: a `MemoryManager`);
    ``add_memories_to_context`` (default: on when they are kept)."""

    memory_manager: MemoryManager | None = attrs.field(
        default=None, validator=check.optional(MemoryManager, "a MemoryManager")
    )
    #: Agno's older name for ``update_memory_on_run``: when given, it decides.
    enable_user_memories: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    #: Agno's name: the memory manager runs after each completed run.
    update_memory_on_run: bool = attrs.field(default=False, validator=check.flag)
    add_memories_to_context: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    #: The model keeps the user's memories itself, with an ``update_user_memory`` tool.
    enable_agentic_memory: bool = attrs.field(default=False, validator=check.flag)

    def __attrs_post_init__(self) -> None:
        given = self.enable_user_memories
        enabled = given if given is not None else self.update_memory_on_run
        _resolve(self, "enable_user_memories", enabled)
        _resolve(self, "update_memory_on_run", enabled)
        kept = enabled or self.enable_agentic_memory or self.memory_manager is not None
        if self.add_memories_to_context is None:
            _resolve(self, "add_memories_to_context", kept)
        if self.memory_manager is None and (enabled or self.enable_agentic_memory):
            _resolve(self, "memory_manager", MemoryManager())


@attrs.frozen(kw_only=True)
class KnowledgeSettings:
    """The agent's knowledge (see `retrieval.AgentKnowledge`): ``knowledge`` (or Agno's
    function making each run's; adopting the agent's runtime), ``search_knowledge`` (the
    model may call ``search_knowledge_base``), ``add_knowledge_to_context``, filters, and
    Agno's ``knowledge_retriever`` searching in the knowledge's place."""

    knowledge: Any = None
    search_knowledge: bool = attrs.field(default=True, validator=check.flag)
    add_knowledge_to_context: bool = attrs.field(default=False, validator=check.flag)
    #: A dict of metadata filters, or a list of `ferrule.filters` expressions (all hold).
    knowledge_filters: dict[str, Any] | list[Any] | None = attrs.field(
        default=None, validator=check.knowledge_filters
    )
    #: The model may add metadata filters of its own to its searches (None: off).
    enable_agentic_knowledge_filters: bool | None = attrs.field(
        default=None, validator=check.maybe_flag
    )
    knowledge_retriever: Any = attrs.field(default=None, validator=check.function)
    #: The knowledge's instructions (its ``build_context``) in the system message.
    add_search_knowledge_instructions: bool = attrs.field(default=True, validator=check.flag)
    #: How the model reads the references found: ``"json"`` or ``"yaml"``.
    references_format: str = attrs.field(default="json", validator=check.references_format)
    #: The model may add to the knowledge (``add_to_knowledge``).
    update_knowledge: bool = attrs.field(default=False, validator=check.flag)
    #: The key a knowledge factory's knowledge is kept under (`callable_cache`); a function.
    callable_knowledge_cache_key: Any = attrs.field(default=None, validator=check.function)


@attrs.frozen(kw_only=True)
class ReasoningSettings:
    """Thinking: ``reasoning`` (the main model's: True, or an effort level such as
    ``"high"``) and ``reasoning_model`` (a second model thinking before the main one);
    Agno's chain of thought: a ``reasoning_agent`` (an `Agent` answering
    `ferrule.reasoning.step.ReasoningSteps`), or ``reasoning_min_steps`` /
    ``reasoning_max_steps`` set, make the run reason in steps first (`reasoning_steps`)."""

    reasoning: Reasoning = attrs.field(default=False, validator=check.reasoning)
    reasoning_model: Any = None
    reasoning_agent: Any = None
    reasoning_min_steps: int = attrs.field(default=1, validator=check.count)
    reasoning_max_steps: int = attrs.field(default=10, validator=check.count)

    def __attrs_post_init__(self) -> None:
        check_steps(self.reasoning_agent, self.reasoning_min_steps, self.reasoning_max_steps)


@attrs.frozen(kw_only=True)
class OutputSettings:
    """The final reply: ``output_schema`` (checked as it becomes a `StructuredOutput`),
    ``output_retries``, ``use_json_mode`` (ask for the schema in the provider's JSON mode,
    described in the system message), and a ``parser_model`` turning the reply into the
    schema (``parse_response=False`` leaves it as text); ``save_response_to_file``."""

    output_schema: Any = None
    output_retries: int = attrs.field(default=1, validator=check.count)
    use_json_mode: bool = attrs.field(default=False, validator=check.flag)
    parser_model: Any = None
    parser_model_prompt: str | None = attrs.field(default=None, validator=check.text)
    parse_response: bool = attrs.field(default=True, validator=check.flag)
    #: Agno's: the provider's own structured output even with ``use_json_mode``.
    structured_outputs: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    #: A second model that writes the run's output from the conversation (`output_model`).
    output_model: Any = None
    output_model_prompt: str | None = attrs.field(default=None, validator=check.text)
    #: Each completed run's content written to this file (`response_file`: ``{name}``,
    #: ``{session_id}``, ``{user_id}``, ``{message}``, ``{run_id}`` filled in).
    save_response_to_file: str | None = attrs.field(default=None, validator=check.text)


@attrs.frozen(kw_only=True)
class StreamSettings:
    """`run`'s defaults: ``stream`` and ``stream_events``; Agno's ``store_events`` (a
    streamed run keeps the events it streamed in ``RunOutput.events``, stored with it, but
    those named in ``events_to_skip``: by default the content deltas)."""

    stream: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    stream_events: bool | None = attrs.field(default=None, validator=check.maybe_flag)
    store_events: bool = attrs.field(default=False, validator=check.flag)
    events_to_skip: list[RunEvent | str] | None = attrs.field(
        default=None, validator=check.event_names
    )

    def __attrs_post_init__(self) -> None:
        if self.events_to_skip is None:
            _resolve(self, "events_to_skip", [RunEvent.run_content])


@attrs.frozen(kw_only=True)
class HookSettings:
    """Functions and guardrails around each run (``pre_hooks``, ``post_hooks``) and each
    tool call (``tool_hooks``): `ferrule.agent.hooks`."""

    pre_hooks: Sequence[Any] | None = attrs.field(default=None, validator=check.hooks)
    post_hooks: Sequence[Any] | None = attrs.field(default=None, validator=check.hooks)
    tool_hooks: Sequence[Any] | None = attrs.field(default=None, validator=check.hooks)

    def __attrs_post_init__(self) -> None:
        for name in ("pre_hooks", "post_hooks", "tool_hooks"):
            _resolve(self, name, check_hooks(getattr(self, name), name))


@attrs.frozen(kw_only=True)
class DebugSettings:
    """``debug_mode``: each step of a run logged at debug level (``debug_level=2``: with
    the messages each model request sends and the text of each reply). Agno's
    ``telemetry``: ferrule sends none, so only False (its default here) is taken."""

    debug_mode: bool = attrs.field(default=False, validator=check.flag)
    debug_level: Literal[1, 2] = attrs.field(default=1, validator=check.one_of(1, 2))
    telemetry: bool = attrs.field(default=False, validator=check.no_telemetry)


@attrs.frozen(kw_only=True)
class CompressionSettings:
    """Tool results compressed before the model reads them again (`compression`):
    ``compress_tool_results``, or a ``compression_manager`` of one's own (which turns it
    on unless the manager's own ``compress_tool_results`` is False); the one made for
    ``compress_tool_results=True`` is the agent's ``compression_manager``."""

    compress_tool_results: bool = attrs.field(default=False, validator=check.flag)
    compression_manager: CompressionManager | None = attrs.field(
        default=None, validator=check.optional(CompressionManager, "a CompressionManager")
    )

    def __attrs_post_init__(self) -> None:
        manager = self.compression_manager
        if manager is not None and manager.compress_tool_results:
            _resolve(self, "compress_tool_results", True)
        elif manager is None and self.compress_tool_results:
            _resolve(self, "compression_manager", CompressionManager())


@attrs.frozen(kw_only=True)
class FollowupSettings:
    """Follow-up prompts suggested after each reply (`followups`): ``followups``,
    ``num_followups`` of them, by ``followup_model`` (None: the agent's model)."""

    followups: bool = attrs.field(default=False, validator=check.flag)
    num_followups: int = attrs.field(default=3, validator=check.count)
    followup_model: Any = None


@attrs.frozen(kw_only=True)
class AgentSettings:
    """Every option of `Agent` but its runtime, model and tools, by concern (one group
    each; see `Agent` for what each option does). Build it with `from_options`."""

    identity: IdentitySettings = attrs.Factory(IdentitySettings)
    context: ContextSettings = attrs.Factory(ContextSettings)
    input: InputSettings = attrs.Factory(InputSettings)
    model: ModelSettings = attrs.Factory(ModelSettings)
    tools: ToolSettings = attrs.Factory(ToolSettings)
    session: SessionSettings = attrs.Factory(SessionSettings)
    history: HistorySettings = attrs.Factory(HistorySettings)
    memory: MemorySettings = attrs.Factory(MemorySettings)
    knowledge: KnowledgeSettings = attrs.Factory(KnowledgeSettings)
    reasoning: ReasoningSettings = attrs.Factory(ReasoningSettings)
    output: OutputSettings = attrs.Factory(OutputSettings)
    streaming: StreamSettings = attrs.Factory(StreamSettings)
    hooks: HookSettings = attrs.Factory(HookSettings)
    debug: DebugSettings = attrs.Factory(DebugSettings)
    compression: CompressionSettings = attrs.Factory(CompressionSettings)
    followups: FollowupSettings = attrs.Factory(FollowupSettings)

    def __attrs_post_init__(self) -> None:
        # the rules across groups
        if self.session.db is None and (
            self.memory.enable_user_memories
            or self.memory.enable_agentic_memory
            or self.history.enable_session_summaries
        ):
            raise InvalidInputError(
                "user memories and session summaries are kept in a db: give the agent one",
                field="db",
            )

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> AgentSettings:
        """The settings of ``Agent(**options)``: each option goes to its group, where it
        is checked; a name that is no option is a `TypeError`, as Python's own."""
        unknown = [name for name in options if name not in OPTION_GROUPS]
        if unknown:
            close = difflib.get_close_matches(unknown[0], OPTION_GROUPS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeError(f"Agent() got an unexpected keyword argument {unknown[0]!r}{hint}")
        given: dict[str, dict[str, Any]] = {}
        for name, value in options.items():
            given.setdefault(OPTION_GROUPS[name], {})[name] = value
        return cls(**{group: GROUPS[group](**values) for group, values in given.items()})

    def options(self) -> dict[str, Any]:
        """Every option by name, as resolved (``add_memories_to_context`` followed
        ``enable_user_memories``...)."""
        return {name: getattr(getattr(self, OPTION_GROUPS[name]), name) for name in OPTION_GROUPS}


#: The settings groups by their name in `AgentSettings`.
GROUPS: dict[str, type] = {
    field.name: cast(Any, field.default).factory for field in attrs.fields(AgentSettings)
}

#: Each option's group (its name in `AgentSettings`), in the groups' order.
OPTION_GROUPS: dict[str, str] = {
    option.name: group for group, kind in GROUPS.items() for option in attrs.fields(kind)
}

#: The options `Agent` takes by position (before its keyword-only ones).
POSITIONAL = ("runtime", "model", "system_message", "tools")


@attrs.frozen
class AgentArguments:
    """``Agent(...)``'s arguments sorted out: which form it was built in, its runtime,
    model and tools, and its options (each for `AgentSettings.from_options`)."""

    #: Built as Ailoy 0.2's ``Agent(lm, tools=None, knowledge=None)``: a `LangModel` first.
    ailoy: bool
    runtime: Any
    model: Any
    tools: Any
    options: dict[str, Any]


def agent_arguments(args: Sequence[Any], options: dict[str, Any]) -> AgentArguments:
    """What ``Agent(*args, **options)`` was given, by its form: Ailoy 0.2's when the first
    argument is a `LangModel` (``lm, tools, knowledge`` by position; ``knowledge`` is then
    Ailoy's, searched for each run's last user message and put in the context, as
    `Agent.set_knowledge` does), else ``runtime, model, system_message, tools`` by position.
    Too many positional arguments, or one given twice, is a `TypeError` (Python's)."""
    ailoy = bool(args) and isinstance(args[0], LangModel)
    names = ("lm", "tools", "knowledge") if ailoy else POSITIONAL
    if len(args) > len(names):
        raise TypeError(
            f"Agent() takes at most {len(names)} positional arguments ({', '.join(names)}); "
            f"{len(args)} were given (the options are keywords)"
        )
    given = dict(zip(names, args, strict=False))
    rest = dict(options)
    for name in ("tools", "knowledge") if ailoy else POSITIONAL:
        if name in rest and name in given:
            raise TypeError(f"Agent() got multiple values for argument {name!r}")
        if name in rest and (ailoy or name != "system_message"):
            given[name] = rest.pop(name)
    if ailoy:
        if given.get("knowledge") is not None:
            rest["knowledge"] = given["knowledge"]
            rest.setdefault("search_knowledge", False)
            rest.setdefault("add_knowledge_to_context", True)
        return AgentArguments(True, None, given["lm"], given.get("tools"), rest)
    if "system_message" in given:
        rest["system_message"] = given["system_message"]
    runtime, model = given.get("runtime"), given.get("model")
    if model is None:  # Agent(model), or Agent(model=...)
        runtime, model = None, runtime
    return AgentArguments(False, runtime, model, given.get("tools"), rest)


F = TypeVar("F", bound=Callable[..., Any])


def with_options_signature(function: F) -> F:
    """``Agent.__init__`` (which takes the options as ``**options``) with the signature
    `agent_signature` makes, for `inspect.signature`, `help` and editors."""
    function.__signature__ = agent_signature()  # type: ignore[attr-defined]
    return function


def agent_signature() -> inspect.Signature:
    """`Agent.__init__`'s signature, made from the groups: ``self``, the positional
    ``runtime``, ``model``, ``system_message`` and ``tools``, then every other option as a
    keyword, with its annotation and default."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    tools = "Sequence[Any] | Callable[..., Any] | None"
    parameters = [
        inspect.Parameter("self", positional),
        inspect.Parameter("runtime", positional, default=None, annotation="Any"),
        inspect.Parameter("model", positional, default=None, annotation="Any"),
        inspect.Parameter("system_message", positional, default=None, annotation="str | None"),
        inspect.Parameter("tools", positional, default=None, annotation=tools),
    ]
    for group in GROUPS.values():
        for option in attrs.fields(group):
            if option.name not in POSITIONAL:
                parameters.append(
                    inspect.Parameter(
                        option.name, keyword, default=option.default, annotation=option.type
                    )
                )
    return inspect.Signature(parameters, return_annotation="None")


def copied_settings(agent: Any, update: Mapping[str, Any] | None, tools: Any) -> dict[str, Any]:
    """`Agent.deep_copy`'s arguments: ``agent``'s settings (its runtime, model, ``tools`` as
    given: a factory or the list, and every option), mutable ones copied, ``update`` over them."""
    parameters = [*POSITIONAL, *(name for name in OPTION_GROUPS if name not in POSITIONAL)]
    unknown = sorted(set(update or {}) - set(parameters))
    if unknown:
        raise InvalidInputError(
            f"not a setting of Agent: {', '.join(unknown)}", field=f"update.{unknown[0]}"
        )
    settings: dict[str, Any] = {}
    for name in parameters:
        if name == "tools":
            settings[name] = tools
        elif name == "id" and agent.id == agent_id_for(agent.name):
            continue  # made from the name: made again from the copy's
        else:
            value = getattr(agent, name)
            if isinstance(value, dict):
                value = copy.deepcopy(value)
            elif isinstance(value, list):
                value = list(value)
            settings[name] = value
    settings.update(update or {})
    return settings


def agent_id_for(name: str | None) -> str:
    """An agent's id from its name (stable across processes), else a new one."""
    if name:
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:255]
        if slug:
            return slug
    return uuid.uuid4().hex
