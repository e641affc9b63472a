"""`AgentAttributes`: every option of `Agent` as the agent's attribute, declared for type
checkers and readers (``agent.session_id``, ``agent.markdown``...): `Agent.__init__` sets
each from its `settings.AgentSettings` group, and users may set them (Agno's users do:
``agent.session_id = ...``); what a run reads is the attribute as it is then.

An annotation-only base of `Agent` (no behaviour), so that the agent's module need not
grow with each option. sdk/ferrule/tests/test_agent_options.py checks that every option
has its line here, under its group's comment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ferrule_kit.models.lm import Reasoning

from .memory import MemoryManager
from .usage import UsageLimits

if TYPE_CHECKING:
    from ..compression.manager import CompressionManager
    from ..knowledge import Knowledge
    from ..models.fallback import FallbackConfig
    from ..session.summary import SessionSummaryManager
    from .events import RunEvent
    from .settings import AgentSettings


class AgentAttributes:
    """The options of `Agent`, by group, as its attributes (see the module docstring)."""

    settings: AgentSettings
    runtime: Any
    model: Any
    # identity
    name: str | None
    id: str
    # context
    system_message: Any
    description: str | None
    instructions: Any
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
    # input
    dependencies: dict[str, Any] | None
    add_dependencies_to_context: bool
    metadata: dict[str, Any] | None
    additional_input: Sequence[Any] | None
    user_message_role: str
    build_user_context: bool
    send_media_to_model: bool
    input_schema: Any
    # model
    options: dict[str, Any]
    usage_limits: UsageLimits | None
    fallback_models: Sequence[Any] | None
    fallback_config: FallbackConfig | None
    tool_choice: str | dict[str, Any] | None
    retries: int
    delay_between_retries: float
    exponential_backoff: bool
    # tools
    tool_call_limit: int | None
    tool_timeout: float | None
    cache_callables: bool
    callable_tools_cache_key: Callable[..., Any] | None
    # session
    db: Any
    session_id: str
    user_id: str | None
    session_state: dict[str, Any]
    add_session_state_to_context: bool
    enable_agentic_state: bool
    overwrite_db_session_state: bool
    cache_session: bool
    introduction: str | None
    checkpoint: Literal["runs", "tool-batch", "tools"] | None
    # history
    add_history_to_context: bool
    num_history_runs: int | None
    num_history_messages: int | None
    max_tool_calls_from_history: int | None
    store_media: bool
    store_tool_messages: bool
    store_history_messages: bool
    enable_session_summaries: bool
    add_session_summary_to_context: bool
    session_summary_manager: SessionSummaryManager | None
    read_chat_history: bool
    read_tool_call_history: bool
    search_past_sessions: bool
    num_past_sessions_to_search: int | None
    num_past_session_runs_in_search: int | None
    search_session_history: bool | None
    num_history_sessions: int | None
    # memory
    memory_manager: MemoryManager | None
    enable_user_memories: bool
    update_memory_on_run: bool
    add_memories_to_context: bool
    enable_agentic_memory: bool
    # knowledge
    knowledge: Knowledge | Callable[..., Any] | None
    search_knowledge: bool
    add_knowledge_to_context: bool
    knowledge_filters: dict[str, Any] | list[Any] | None
    enable_agentic_knowledge_filters: bool | None
    knowledge_retriever: Any
    add_search_knowledge_instructions: bool
    references_format: str
    update_knowledge: bool
    callable_knowledge_cache_key: Callable[..., Any] | None
    # reasoning
    reasoning: Reasoning
    reasoning_model: Any
    reasoning_agent: Any
    reasoning_min_steps: int
    reasoning_max_steps: int
    # output
    output_schema: Any
    output_retries: int
    use_json_mode: bool
    parser_model: Any
    parser_model_prompt: str | None
    parse_response: bool
    structured_outputs: bool | None
    output_model: Any
    output_model_prompt: str | None
    save_response_to_file: str | None
    # streaming
    stream: bool | None
    stream_events: bool | None
    store_events: bool
    events_to_skip: list[RunEvent | str]
    # hooks
    pre_hooks: list[Any]
    post_hooks: list[Any]
    tool_hooks: list[Any]
    # debug
    debug_mode: bool
    debug_level: Literal[1, 2]
    telemetry: bool
    # compression
    compress_tool_results: bool
    compression_manager: CompressionManager | None
    # followups
    followups: bool
    num_followups: int
    followup_model: Any
