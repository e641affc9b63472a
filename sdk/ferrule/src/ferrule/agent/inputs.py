"""What a run starts from, as pure functions of the agent's settings and the caller's
input: the input as messages (`input_messages`), a single step's
`DEFAULT_STEP_INSTRUCTIONS`, the tools' descriptions (`tool_description`), Agno's
`RunContext` of a run (`run_context_of`) and the functions Agno calls by the names of
their parameters (`call_by_name`); the system message the settings make is
`system_message.system_text`'s."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, converter

from ..models.message import Message as AgnoMessage
from ..tools import Tool, as_tools
from ..tools.tool_context import RunContext
from .prompt import prompt_parts

#: The default instructions of a single step (execute-agent-step-api), used when the
#: messages carry no system message and the agent has none.
DEFAULT_STEP_INSTRUCTIONS = (
    "You are an AI assistant that helps users with their questions. You can answer questions "
    "directly or acquire information from any of the attached tools to assist you. Always answer "
    "the user's most recent query to the best of your knowledge.\n\n"
    "When asked about what tools are available, you must list each attached tool's name and "
    "description. When asked about what you can do, mention that in addition to your normal "
    "capabilities, you can also use the attached tools by listing their names and descriptions. "
    "You cannot use any other tools other than the ones provided to you explicitly."
)

#: The user memories belong to when a run names no user.
DEFAULT_USER_ID = "default"


def as_message(value: Any, index: int) -> Message:
    if isinstance(value, Message):
        return value
    if isinstance(value, Mapping):
        try:
            return Message.from_dict(value)
        except InvalidInputError as exc:
            raise InvalidInputError(
                f"messages[{index}]: {exc.message}", field=f"messages[{index}]"
            ) from None
    raise InvalidInputError(
        f"expected a Message or its dict, got {type(value).__name__}", field=f"messages[{index}]"
    )


def is_history(value: Any) -> bool:
    """True for a non-empty list of messages (`Message`s or dicts with a ``role``): the
    stateless runs' whole conversation, rather than one prompt."""
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and all(isinstance(m, Message) or (isinstance(m, Mapping) and "role" in m) for m in value)
    )


def _structured_text(value: Any) -> str | None:
    """A pydantic model, attrs instance or plain dict as the JSON text of a user message."""
    if hasattr(value, "model_dump_json") and not isinstance(value, type):
        return str(value.model_dump_json())
    if attrs.has(type(value)):
        return json.dumps(converter.unstructure(value), ensure_ascii=False)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    return None


def input_messages(value: Any, files: Sequence[Any] = ()) -> list[Message]:
    """A run's input as its messages: a `Message` or message dict (one with a ``role``), a
    list of them, a pydantic model / attrs instance / other dict (sent as JSON), or a
    prompt (a string, parts, or a list of them) with ``files`` after it."""
    if isinstance(value, Message):
        messages = [value]
    elif isinstance(value, Mapping) and "role" in value:
        messages = [as_message(value, 0)]
    elif is_history(value):
        messages = [as_message(m, i) for i, m in enumerate(value)]
    else:
        text = _structured_text(value)
        return [Message("user", prompt_parts(text if text is not None else value, files))]
    if files:
        raise InvalidInputError("files go with a prompt, not with messages", field="files")
    return messages


def run_context_of(run: Any) -> RunContext:
    """A run (`RunState`) as Agno's `RunContext`: one per run (the caller's own when one
    was given), kept in step with the run: its ``session_state`` is the run's own dict, so
    what a tool or instructions function changes there is the session's; its
    ``dependencies`` are the run's (else a dict of pydantic-ai's ``deps``); its
    ``output_schema`` the run's, its ``messages`` the run's so far (as Agno's)."""
    session = run.session
    context = run.run_context
    if context is None:
        context = run.run_context = RunContext(run_id=run.id, session_id="")
    if session is not None:
        context.session_id, context.user_id = session.session_id, session.user_id
        context.session_state = session.session_state
        context.metadata = session.metadata
    elif context.session_state is None:  # a single step: a state of its own
        context.session_state = {}
    if run.dependencies is not None:
        context.dependencies = run.dependencies
    elif context.dependencies is None and isinstance(run.tool_deps, dict):
        context.dependencies = run.tool_deps
    context.knowledge_filters = run.knowledge_filters
    if run.output is not None:
        context.output_schema = run.output.source
    views = run.message_views
    for message in run.messages:
        if views.get(id(message), (None,))[0] is not message:
            views[id(message)] = (message, AgnoMessage.from_kit(message))
    context.messages = [views[id(m)][1] for m in run.messages]
    return context


def call_by_name(function: Any, **arguments: Any) -> Any:
    """Call ``function`` with those of ``arguments`` it has parameters for, by name, as
    Agno calls instructions functions and tool factories (``agent``, ``session_state``,
    ``run_context``); a function with ``**kwargs`` is given them all."""
    parameters = inspect.signature(function).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return function(**arguments)
    return function(**{k: v for k, v in arguments.items() if k in parameters})


def update_session_state(run_context: RunContext, session_state_updates: dict[str, Any]) -> str:
    """Update the shared session state. Give the updates as a dictionary of key-value pairs,
    for example {"shopping_list": ["milk", "eggs"]}.

    Args:
        session_state_updates: The keys to set in the session state, with their new values.
    """
    if run_context.session_state is None:
        run_context.session_state = {}
    run_context.session_state.update(session_state_updates)
    return f"Updated session state: {json.dumps(run_context.session_state, default=str)}"


@functools.cache
def update_session_state_tool() -> Tool:
    """The tool ``enable_agentic_state`` gives the model (Agno's ``update_session_state``),
    made on first use (a function tool's docstring parser is not imported with ferrule)."""
    return Tool.from_function(update_session_state)


def tool_description(spec: Any, index: int) -> dict[str, Any]:
    """A model-facing tool description from a `Tool`, a function or a bare description
    (``{"name", "description", "parameters"}``, or OpenAI's ``{"type": "function",
    "function": {...}}``); a malformed one is refused naming its field (``tools[i]...``)."""
    field = f"tools[{index}]"
    if isinstance(spec, Mapping):
        if "function" in spec:
            spec, field = spec["function"], f"{field}.function"
            if not isinstance(spec, Mapping):
                raise InvalidInputError(
                    f"must be an object, got {type(spec).__name__}", field=field
                )
        function = dict(spec)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise InvalidInputError("a tool description needs a name", field=f"{field}.name")
        description = function.setdefault("description", "")
        if not isinstance(description, str):
            raise InvalidInputError("must be a string", field=f"{field}.description")
        parameters = function.setdefault("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, Mapping):
            raise InvalidInputError("must be a JSON schema object", field=f"{field}.parameters")
        return {"type": "function", "function": function}
    resolved = as_tools(spec)
    if not isinstance(resolved, Tool):
        raise InvalidInputError("step() takes single tools, not tool sets", field=field)
    return resolved.to_dict()


def extra_messages(items: Sequence[Any] | None) -> list[Message]:
    """Agno's ``additional_input`` as messages (after the system message, before the
    history): ferrule's or Agno's `Message` s, message dicts, and strings or models as user
    messages (a model as its JSON); a bad one is refused naming it
    (``additional_input[i]``)."""
    out: list[Message] = []
    for index, item in enumerate(items or ()):
        field = f"additional_input[{index}]"
        if isinstance(item, Message):
            out.append(item)
        elif callable(getattr(item, "to_kit", None)):  # Agno's Message
            out.append(item.to_kit())
        elif isinstance(item, Mapping) and "role" in item:
            out.append(_agno_message_dict(item, field))
        else:
            text = item if isinstance(item, str) else _structured_text(item)
            if text is None:
                raise InvalidInputError(
                    f"expected a message, a message dict or a string, got {type(item).__name__}",
                    field=field,
                )
            out.append(Message("user", text))
    return out


def _agno_message_dict(item: Mapping[str, Any], field: str) -> Message:
    """A message dict, Agno's (``content`` a string) or ferrule's (``content`` parts)."""
    if isinstance(item.get("content"), str) or item.get("content") is None:
        from ..models.message import Message as AgnoMessage

        try:
            return AgnoMessage(**dict(item)).to_kit()
        except (TypeError, InvalidInputError) as exc:
            raise InvalidInputError(f"{field}: {exc}", field=field) from None
    try:
        return Message.from_dict(item)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{field}: {exc.message}", field=field) from None
