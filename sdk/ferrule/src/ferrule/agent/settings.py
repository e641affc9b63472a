"""The Agent's options as one validated object: `AgentSettings`, built by `Agent.__init__`
from its keyword arguments (Agno's names). Each option is checked as it is set, and a bad
one is refused with `InvalidInputError` naming it (``field="tool_call_limit"``); the id an
agent's name makes (`agent_id_for`) and the settings `Agent.deep_copy` copies
(`copied_settings`)."""

from __future__ import annotations

import copy
import inspect
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .hooks import check_hooks
from .memory import MemoryManager
from .usage import UsageLimits

_Check = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def _refuse(attribute: attrs.Attribute[Any], what: str, value: Any) -> InvalidInputError:
    return InvalidInputError(
        f"{attribute.name} must be {what}, got {type(value).__name__}", field=attribute.name
    )


def _optional(kind: type | tuple[type, ...], what: str) -> _Check:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, kind):
            raise _refuse(attribute, what, value)

    return check


def _flag(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise _refuse(attribute, "True or False", value)


def _count(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or a whole number not below zero."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(attribute, "a whole number", value)
    if value < 0:
        raise InvalidInputError("must not be negative", field=attribute.name)


def _seconds(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _refuse(attribute, "a number of seconds", value)
    if value <= 0:
        raise InvalidInputError("must be more than 0 seconds", field=attribute.name)


def _instructions(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None or isinstance(value, str) or callable(value):
        return
    if isinstance(value, Sequence) and all(isinstance(line, str) for line in value):
        return
    raise _refuse(attribute, "a string, a list of strings or a function", value)


def _db(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str) and not hasattr(value, "component_type"):
        raise InvalidInputError(
            f"db must be a SqliteDb, a PostgresDb or a storage component's name, got {value!r}",
            field=attribute.name,
        )


def _reasoning(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, str)):
        raise _refuse(attribute, "True, False or an effort level such as 'high'", value)


def _hooks(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_hooks(value, attribute.name)


def _text_or_function(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str) and not callable(value):
        raise _refuse(attribute, "a string or a function", value)


def _function(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not callable(value):
        raise _refuse(attribute, "a function", value)


def _timezone(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or an IANA time zone name the system knows (``"Europe/Paris"``)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise _refuse(attribute, "an IANA time zone name", value)
    import zoneinfo  # only when a zone is named

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidInputError(
            f"not a time zone this system knows: {value!r}", field=attribute.name
        ) from None


_text = _optional(str, "a string")
_state = _optional(dict, "a dict")


@attrs.define(kw_only=True)
class AgentSettings:
    """Every option of `Agent` but its runtime, model and tools (see `Agent` for what each
    does); ``None`` defaults that follow another option are resolved here."""

    system_message: Any = attrs.field(default=None, validator=_text_or_function)
    name: str | None = attrs.field(default=None, validator=_text)
    id: str | None = attrs.field(default=None, validator=_text)
    description: str | None = attrs.field(default=None, validator=_text)
    instructions: Any = attrs.field(default=None, validator=_instructions)
    db: Any = attrs.field(default=None, validator=_db)
    session_id: str | None = attrs.field(default=None, validator=_text)
    user_id: str | None = attrs.field(default=None, validator=_text)
    session_state: dict[str, Any] | None = attrs.field(default=None, validator=_state)
    add_session_state_to_context: bool = attrs.field(default=False, validator=_flag)
    add_history_to_context: bool = attrs.field(default=False, validator=_flag)
    num_history_runs: int | None = attrs.field(default=None, validator=_count)
    num_history_messages: int | None = attrs.field(default=None, validator=_count)
    enable_session_summaries: bool = attrs.field(default=False, validator=_flag)
    add_session_summary_to_context: bool | None = attrs.field(
        default=None, validator=_optional(bool, "True or False")
    )
    memory_manager: MemoryManager | None = attrs.field(
        default=None, validator=_optional(MemoryManager, "a MemoryManager")
    )
    enable_user_memories: bool = attrs.field(default=False, validator=_flag)
    #: Agno's name for ``enable_user_memories`` (either turns the memory manager on).
    update_memory_on_run: bool = attrs.field(default=False, validator=_flag)
    add_memories_to_context: bool | None = attrs.field(
        default=None, validator=_optional(bool, "True or False")
    )
    knowledge: Any = None  # checked by the agent's knowledge side (it adopts the runtime)
    search_knowledge: bool = attrs.field(default=True, validator=_flag)
    add_knowledge_to_context: bool = attrs.field(default=False, validator=_flag)
    knowledge_filters: dict[str, Any] | None = attrs.field(
        default=None, validator=_optional(dict, "a dict of metadata filters")
    )
    enable_agentic_knowledge_filters: bool = attrs.field(default=False, validator=_flag)
    #: Agno's function searching in the knowledge's place (see `knowledge.AgentKnowledge`).
    knowledge_retriever: Any = attrs.field(default=None, validator=_function)
    #: The model may change the session's state through an ``update_session_state`` tool.
    enable_agentic_state: bool = attrs.field(default=False, validator=_flag)
    #: Agno's instruction to answer in markdown, added to the system message.
    markdown: bool = attrs.field(default=False, validator=_flag)
    #: Agno's context lines: the current time (in ``timezone_identifier``, else the local
    #: zone, as ``datetime_format`` says) and the agent's name, in the system message's ``<additional_information>``.
    add_datetime_to_context: bool = attrs.field(default=False, validator=_flag)
    timezone_identifier: str | None = attrs.field(default=None, validator=_timezone)
    #: The time's ``strftime`` format (default ``"%Y-%m-%d %H:%M:%S %Z"``).
    datetime_format: str | None = attrs.field(default=None, validator=_text)
    add_name_to_context: bool = attrs.field(default=False, validator=_flag)
    #: What the answer should look like (``<expected_output>``), and text added as is at
    #: the end of the system message.
    expected_output: str | None = attrs.field(default=None, validator=_text)
    additional_context: str | None = attrs.field(default=None, validator=_text)
    #: Ask for the ``output_schema`` in the provider's JSON mode, the schema described in
    #: the system message, rather than as the provider's structured-output schema.
    use_json_mode: bool = attrs.field(default=False, validator=_flag)
    stream: bool | None = attrs.field(default=None, validator=_optional(bool, "True or False"))
    stream_events: bool | None = attrs.field(
        default=None, validator=_optional(bool, "True or False")
    )
    output_schema: Any = None  # checked as it is turned into a StructuredOutput
    output_retries: int = attrs.field(default=1, validator=_count)
    tool_call_limit: int | None = attrs.field(default=None, validator=_count)
    usage_limits: UsageLimits | None = attrs.field(
        default=None, validator=_optional(UsageLimits, "a UsageLimits")
    )
    tool_timeout: float | None = attrs.field(default=60.0, validator=_seconds)
    reasoning: bool | str = attrs.field(default=False, validator=_reasoning)
    options: Mapping[str, Any] | None = attrs.field(
        default=None, validator=_optional(Mapping, "a dict of model options")
    )
    reasoning_model: Any = None
    parser_model: Any = None
    parser_model_prompt: str | None = attrs.field(default=None, validator=_text)
    parse_response: bool = attrs.field(default=True, validator=_flag)
    pre_hooks: Sequence[Any] | None = attrs.field(default=None, validator=_hooks)
    post_hooks: Sequence[Any] | None = attrs.field(default=None, validator=_hooks)
    tool_hooks: Sequence[Any] | None = attrs.field(default=None, validator=_hooks)
    debug_mode: bool = attrs.field(default=False, validator=_flag)

    def __attrs_post_init__(self) -> None:
        self.enable_user_memories = self.update_memory_on_run = (
            self.enable_user_memories or self.update_memory_on_run
        )
        if self.db is None and (self.enable_user_memories or self.enable_session_summaries):
            raise InvalidInputError(
                "user memories and session summaries are kept in a db: give the agent one",
                field="db",
            )
        if self.add_session_summary_to_context is None:
            self.add_session_summary_to_context = self.enable_session_summaries
        if self.add_memories_to_context is None:
            self.add_memories_to_context = self.enable_user_memories
        if self.memory_manager is None and self.enable_user_memories:
            self.memory_manager = MemoryManager()
        self.options = dict(self.options or {})
        self.pre_hooks = check_hooks(self.pre_hooks, "pre_hooks")
        self.post_hooks = check_hooks(self.post_hooks, "post_hooks")
        self.tool_hooks = check_hooks(self.tool_hooks, "tool_hooks")


#: The names of the options, in `Agent.__init__`'s order.
SETTINGS = tuple(field.name for field in attrs.fields(AgentSettings))


def copied_settings(
    agent: Any, signature: inspect.Signature, update: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`Agent.deep_copy`'s arguments: ``agent``'s settings (the parameters of
    ``signature``, `Agent`'s), mutable ones copied, ``update`` over them (each a setting)."""
    parameters = [p for p in signature.parameters if p != "self"]
    unknown = sorted(set(update or {}) - set(parameters))
    if unknown:
        raise InvalidInputError(
            f"not a setting of Agent: {', '.join(unknown)}", field=f"update.{unknown[0]}"
        )
    settings: dict[str, Any] = {}
    for name in parameters:
        if name == "tools":
            settings[name] = agent.tools
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
