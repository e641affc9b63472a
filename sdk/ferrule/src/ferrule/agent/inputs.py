"""What a run starts from, as pure functions of the agent's settings and the caller's
input: the input as messages (`input_messages`), the system message the settings make
(`system_text`, or a single step's `DEFAULT_STEP_INSTRUCTIONS`), the tools' descriptions
(`tool_description`), Agno's `RunContext` of a run (`run_context_of`) and the functions
Agno calls by the names of their parameters (`call_by_name`)."""

from __future__ import annotations

import datetime
import functools
import inspect
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.messages import Message, converter
from ferrule_kit.storage import SessionSummary, UserMemory

from ..tools import Tool, as_tools
from ..tools.context import RunContext
from .output_schema import StructuredOutput
from .prompt import prompt_parts

#: The user memories belong to when a run names no user.
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
    """A run (`RunState`) as Agno's `RunContext`; its ``session_state`` is the run's own
    dict, so what a tool or instructions function changes there is the session's."""
    session = run.session
    return RunContext(
        run_id=run.id,
        session_id=session.session_id if session is not None else "",
        user_id=session.user_id if session is not None else None,
        session_state=session.session_state if session is not None else {},
        dependencies=run.tool_deps if isinstance(run.tool_deps, dict) else None,
        metadata=session.metadata if session is not None else None,
    )


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
    run_context.session_state.update(session_state_updates)
    return f"Updated session state: {json.dumps(run_context.session_state, default=str)}"


@functools.cache
def update_session_state_tool() -> Tool:
    """The tool ``enable_agentic_state`` gives the model (Agno's ``update_session_state``),
    made on first use (a function tool's docstring parser is not imported with ferrule)."""
    return Tool.from_function(update_session_state)


def _instructions(agent: Any, state: dict[str, Any], run_context: RunContext | None) -> list[str]:
    instructions = agent.instructions
    if callable(instructions):
        instructions = call_by_name(
            instructions, agent=agent, session_state=state, run_context=run_context
        )
    if instructions is None:
        return []
    if isinstance(instructions, str):
        return [instructions]
    return [str(i) for i in instructions]


def _additional_information(agent: Any, markdown: bool) -> list[str]:
    """The lines of Agno's ``<additional_information>``: the markdown instruction (unless
    JSON is asked for), the current time and the agent's name, as the agent adds them."""
    lines: list[str] = []
    if agent.markdown and markdown:
        lines.append("Use markdown to format your answers.")
    if agent.add_datetime_to_context:
        zone = None
        if agent.timezone_identifier is not None:
            import zoneinfo  # checked by the settings; only imported when a zone is named

            zone = zoneinfo.ZoneInfo(agent.timezone_identifier)
        now = datetime.datetime.now(zone).astimezone(zone)
        stamp = now.strftime(agent.datetime_format or "%Y-%m-%d %H:%M:%S %Z")
        lines.append(f"The current time is {stamp}.")
    if agent.name is not None and agent.add_name_to_context:
        lines.append(f"Your name is: {agent.name}.")
    return lines


def system_text(
    agent: Any,
    state: dict[str, Any],
    memories: Sequence[UserMemory] = (),
    summary: SessionSummary | None = None,
    run_context: RunContext | None = None,
    output: StructuredOutput | None = None,
) -> str | None:
    """The system message, the Agent reference's way: ``system_message`` as given, else
    ``description`` then ``instructions`` (one per line as ``- ...`` when several) and the
    instructions of toolkits that ask for them to be added; then
    what the run knows from before, each in its tag: the user's memories, the session's
    summary and its state (when the agent adds them to the context)."""
    pieces: list[str] = []
    system_message = agent.system_message
    if callable(system_message):
        system_message = call_by_name(
            system_message, agent=agent, session_state=state, run_context=run_context
        )
    if system_message:
        pieces.append(str(system_message))
    else:
        if agent.description:
            pieces.append(agent.description)
        instructions = _instructions(agent, state, run_context)
        if len(instructions) == 1:
            pieces.append(f"<instructions>\n{instructions[0]}\n</instructions>")
        elif instructions:
            lines = "\n".join(f"- {i}" for i in instructions)
            pieces.append(f"<instructions>\n{lines}\n</instructions>")
        # a toolkit's own guidance (Agno's Toolkit(add_instructions=True))
        pieces.extend(
            toolkit.instructions
            for toolkit in agent.tools
            if getattr(toolkit, "add_instructions", False)
            and getattr(toolkit, "instructions", None)
        )
        if agent.use_json_mode and output is not None:
            schema = json.dumps(output.schema, ensure_ascii=False)
            pieces.append(
                "Reply with one JSON object that follows this JSON schema, and nothing "
                f"else:\n<json_schema>\n{schema}\n</json_schema>"
            )
        information = _additional_information(agent, markdown=output is None)
        if information:
            lines = "\n".join(f"- {line}" for line in information)
            pieces.append(f"<additional_information>\n{lines}\n</additional_information>")
        if agent.expected_output is not None:
            pieces.append(f"<expected_output>\n{agent.expected_output.strip()}\n</expected_output>")
        if agent.additional_context is not None:
            pieces.append(agent.additional_context)
    if memories:
        lines = "\n".join(f"- {m.memory}" for m in memories)
        pieces.append(
            "You have access to memories from previous interactions with the user that you "
            f"can use:\n\n<memories_from_previous_interactions>\n{lines}\n"
            "</memories_from_previous_interactions>\n\nNote: this information is from previous "
            "interactions and may be updated in this conversation. You should always prefer "
            "information from this conversation over the past memories."
        )
    if summary is not None:
        pieces.append(
            "Here is a brief summary of your previous interactions:\n\n"
            f"<summary_of_previous_interactions>\n{summary.summary}\n"
            "</summary_of_previous_interactions>\n\nNote: this information is from previous "
            "interactions and may be outdated. You should ALWAYS prefer information from this "
            "conversation over the past summary."
        )
    if agent.add_session_state_to_context:
        text = json.dumps(state, ensure_ascii=False, sort_keys=True)
        pieces.append(f"<session_state>\n{text}\n</session_state>")
    return "\n\n".join(pieces) if pieces else None


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
