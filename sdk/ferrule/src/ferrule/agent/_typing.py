"""The keyword options of `Agent`'s typed overloads, for type checkers only.

`Agent` and its run methods have overloads that give each call its precise type
(``Agent[OutputT]``, ``RunOutput[OutputT]``, the stream's item type): they spell out the
arguments that decide the type (``output_schema``, ``stream``, the input) and take the
rest as ``**options: Unpack[...]`` of these TypedDicts. Imported only under
``TYPE_CHECKING``, so they cost nothing at run time; tests/test_typing.py checks that
each lists exactly the implementation's other keyword arguments, so a new argument cannot
be left out of the overloads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from ferrule_kit.models.lm import Reasoning

from ..compression.manager import CompressionManager
from ..models.fallback import FallbackConfig
from ..models.response import ToolExecution
from ..session.summary import SessionSummaryManager
from ..tools.tool_context import RunContext
from .events import RunEvent
from .memory import MemoryManager
from .usage import UsageLimits


class QueryOptions(TypedDict, total=False):
    """`Agent.query`'s keyword arguments besides ``output_schema``."""

    tool_call_limit: int | None
    files: Sequence[Any]
    images: Sequence[Any] | None
    audio: Sequence[Any] | None
    videos: Sequence[Any] | None
    session_id: str | None
    user_id: str | None
    usage_limits: UsageLimits | None
    deps: Any
    ignore_reasoning_messages: bool


class RunOptions(TypedDict, total=False):
    """`Agent.run`'s keyword arguments besides ``stream`` and ``output_schema`` (and
    `Agent.arun`'s besides ``background`` too)."""

    stream_events: bool | None
    user_id: str | None
    session_id: str | None
    session_state: Mapping[str, Any] | None
    run_context: RunContext | None
    run_id: str | None
    audio: Sequence[Any] | None
    images: Sequence[Any] | None
    videos: Sequence[Any] | None
    files: Sequence[Any] | None
    knowledge_filters: Any
    add_history_to_context: bool | None
    add_dependencies_to_context: bool | None
    add_session_state_to_context: bool | None
    dependencies: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    #: A stream yields the `RunOutput` after its last event (Agno's).
    yield_run_output: bool | None
    debug_mode: bool | None
    reasoning: Reasoning | None
    tool_call_limit: int | None
    usage_limits: UsageLimits | None
    deps: Any


class ContinueOptions(TypedDict, total=False):
    """`Agent.continue_run`'s keyword arguments besides ``stream`` (Agno's, and ferrule's
    ``confirm`` / ``reason``)."""

    run_id: str | None
    updated_tools: Sequence[ToolExecution] | None
    confirm: bool | Mapping[str, bool] | None
    reason: str | None
    stream_events: bool | None
    user_id: str | None
    session_id: str | None
    run_context: RunContext | None
    knowledge_filters: Any
    dependencies: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    debug_mode: bool | None
    yield_run_output: bool
    input: str | None
    continue_from: int | Literal["end", "last_user"]
    fork: bool
    regenerate: bool
    replace_original: bool | None
    additional_instructions: str | None


class HookKeywords(TypedDict, total=False):
    """Agno's ``**kwargs`` of a run: any other keyword, for the hooks by name (none that
    type checkers know of)."""


# `Agent`'s options, one TypedDict per settings group of `settings` (same names, same
# annotations: sdk/ferrule/tests/test_agent_options.py checks them field by field).


class IdentityOptions(TypedDict, total=False):
    name: str | None
    id: str | None


class ContextOptions(TypedDict, total=False):
    """`settings.ContextSettings` but ``system_message`` (`Agent`'s third positional)."""

    description: str | None
    instructions: str | Sequence[str] | Any
    markdown: bool
    add_datetime_to_context: bool
    timezone_identifier: str | None
    datetime_format: str | None
    add_name_to_context: bool
    add_location_to_context: bool
    expected_output: str | None
    additional_context: str | None
    role: str | None
    use_instruction_tags: bool
    resolve_in_context: bool
    build_context: bool
    system_message_role: str
    skills: None


class InputOptions(TypedDict, total=False):
    dependencies: dict[str, Any] | None
    add_dependencies_to_context: bool
    metadata: dict[str, Any] | None
    additional_input: Sequence[Any] | None
    user_message_role: str
    build_user_context: bool
    send_media_to_model: bool
    input_schema: Any


class ModelOptions(TypedDict, total=False):
    options: Mapping[str, Any] | None
    usage_limits: UsageLimits | None
    fallback_models: Sequence[Any] | None
    fallback_config: FallbackConfig | None
    tool_choice: str | dict[str, Any] | None
    retries: int
    delay_between_retries: float
    exponential_backoff: bool


class ToolOptions(TypedDict, total=False):
    tool_call_limit: int | None
    tool_timeout: float | None
    cache_callables: bool
    callable_tools_cache_key: Callable[..., Any] | None


class SessionOptions(TypedDict, total=False):
    db: Any
    session_id: str | None
    user_id: str | None
    session_state: dict[str, Any] | None
    add_session_state_to_context: bool
    enable_agentic_state: bool
    overwrite_db_session_state: bool
    cache_session: bool
    introduction: str | None
    checkpoint: Literal["runs", "tool-batch", "tools"] | None


class HistoryOptions(TypedDict, total=False):
    add_history_to_context: bool
    num_history_runs: int | None
    num_history_messages: int | None
    max_tool_calls_from_history: int | None
    store_media: bool
    store_tool_messages: bool
    store_history_messages: bool
    enable_session_summaries: bool
    add_session_summary_to_context: bool | None
    session_summary_manager: SessionSummaryManager | None
    read_chat_history: bool
    read_tool_call_history: bool
    search_past_sessions: bool
    num_past_sessions_to_search: int | None
    num_past_session_runs_in_search: int | None
    search_session_history: bool | None
    num_history_sessions: int | None


class MemoryOptions(TypedDict, total=False):
    memory_manager: MemoryManager | None
    enable_user_memories: bool | None
    update_memory_on_run: bool
    add_memories_to_context: bool | None
    enable_agentic_memory: bool


class KnowledgeOptions(TypedDict, total=False):
    knowledge: Any
    search_knowledge: bool
    add_knowledge_to_context: bool
    knowledge_filters: dict[str, Any] | list[Any] | None
    enable_agentic_knowledge_filters: bool | None
    knowledge_retriever: Any
    add_search_knowledge_instructions: bool
    references_format: str
    update_knowledge: bool
    callable_knowledge_cache_key: Any


class ReasoningOptions(TypedDict, total=False):
    reasoning: Reasoning
    reasoning_model: Any
    reasoning_agent: Any
    reasoning_min_steps: int
    reasoning_max_steps: int


class OutputOptions(TypedDict, total=False):
    """`settings.OutputSettings` but ``output_schema`` (the overloads spell it: it
    decides the agent's type)."""

    output_retries: int
    use_json_mode: bool
    parser_model: Any
    parser_model_prompt: str | None
    parse_response: bool
    structured_outputs: bool | None
    output_model: Any
    output_model_prompt: str | None
    save_response_to_file: str | None


class StreamOptions(TypedDict, total=False):
    stream: bool | None
    stream_events: bool | None
    store_events: bool
    events_to_skip: list[RunEvent | str] | None


class HookOptions(TypedDict, total=False):
    pre_hooks: Sequence[Any] | None
    post_hooks: Sequence[Any] | None
    tool_hooks: Sequence[Any] | None


class DebugOptions(TypedDict, total=False):
    debug_mode: bool
    debug_level: Literal[1, 2]
    telemetry: bool


class CompressionOptions(TypedDict, total=False):
    compress_tool_results: bool
    compression_manager: CompressionManager | None


class FollowupOptions(TypedDict, total=False):
    followups: bool
    num_followups: int
    followup_model: Any


class AgentOptions(
    IdentityOptions,
    ContextOptions,
    InputOptions,
    ModelOptions,
    ToolOptions,
    SessionOptions,
    HistoryOptions,
    MemoryOptions,
    KnowledgeOptions,
    ReasoningOptions,
    OutputOptions,
    StreamOptions,
    HookOptions,
    DebugOptions,
    CompressionOptions,
    FollowupOptions,
    total=False,
):
    """`Agent`'s keyword arguments besides ``output_schema``: every group's."""


class LangModelAgentOptions(AgentOptions, total=False):
    """Ailoy 0.2's ``Agent(lm, tools=None, knowledge=None)`` takes every option too, and
    these by keyword (its ``lm``, ``tools`` and ``knowledge`` are positional)."""

    tools: Sequence[Any] | None
    system_message: str | None
