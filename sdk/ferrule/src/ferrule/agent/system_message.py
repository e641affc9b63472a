"""The system message an agent's settings make (`system_text`), the Agent reference's way:
``system_message`` as given (a string, a function making it, or an Agno `Message`), else,
unless ``build_context=False``, the message built in Agno's order: the ``description``,
the ``role`` (``<your_role>``), the ``instructions`` and the model's own
(``<instructions>`` tags with ``use_instruction_tags``), the ``<additional_information>``
lines (markdown, the time, the location, the name), the toolkits' own instructions;
``{name}`` placeholders filled (``resolve_in_context``); then ``expected_output``,
``additional_context``, the user's memories, the session's summary, the knowledge's
instructions, the model's ``system_prompt``, the JSON schema asked for (``use_json_mode``,
or a model that takes no schema: `model_settings.StructuredOutputs`) and the session
state. `system_messages` gives it as the message of the agent's ``system_message_role``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Any

import attrs
from ferrule_kit.content.messages import Message
from ferrule_kit.stores.storage import SessionSummary, UserMemory

from ..tools.tool_context import RunContext
from .context import format_variables
from .inputs import call_by_name
from .knowledge_kinds import run_knowledge
from .model_settings import StructuredOutputs, model_instructions, model_system_prompt
from .output_schema import StructuredOutput


@attrs.frozen
class Known:
    """What a run knows from before, for its system message: the user's ``memories``
    (None: the agent does not add them), the session's ``summary``, and the run's own
    ``add_session_state`` switch (None: the agent's); the ``location`` line's place; the
    ``tools`` whose instructions it carries (None: the agent's)."""

    memories: Sequence[UserMemory] | None = None
    summary: SessionSummary | None = None
    add_session_state: bool | None = None
    location: str | None = None
    tools: Sequence[Any] | None = None


NOTHING_KNOWN = Known()


def _tools(agent: Any, known: Known) -> Sequence[Any]:
    return agent.tools if known.tools is None else known.tools


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


def _additional_information(agent: Any, markdown: bool, location: str | None) -> list[str]:
    """The lines of Agno's ``<additional_information>``: the markdown instruction (unless
    JSON is asked for), the current time, the location and the agent's name, as the agent
    adds them."""
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
    if agent.add_location_to_context and location:
        lines.append(f"Your approximate location is: {location}.")
    if agent.name is not None and agent.add_name_to_context:
        lines.append(f"Your name is: {agent.name}.")
    return lines


def _instructions_block(agent: Any, instructions: list[str]) -> str | None:
    if not instructions:
        return None
    if agent.use_instruction_tags:
        if len(instructions) == 1:
            return f"<instructions>\n{instructions[0]}\n</instructions>"
        lines = "\n".join(f"- {i}" for i in instructions)
        return f"<instructions>\n{lines}\n</instructions>"
    if len(instructions) == 1:
        return instructions[0]
    return "\n".join(f"- {i}" for i in instructions)


def _built(
    agent: Any,
    state: dict[str, Any],
    known: Known,
    run_context: RunContext | None,
    output: StructuredOutput | None,
) -> list[str]:
    """The built system message's pieces up to the tools' instructions, placeholders
    filled."""
    pieces: list[str] = []
    if agent.description:
        pieces.append(agent.description)
    if agent.role is not None:
        pieces.append(f"<your_role>\n{agent.role}\n</your_role>")
    instructions = _instructions(agent, state, run_context)
    # the model's own (Agno's)
    instructions += model_instructions(agent.model, _tools(agent, known))
    block = _instructions_block(agent, instructions)
    if block:
        pieces.append(block)
    information = _additional_information(agent, output is None, known.location)
    if information:
        lines = "\n".join(f"- {line}" for line in information)
        pieces.append(f"<additional_information>\n{lines}\n</additional_information>")
    # a toolkit's own guidance (Agno's Toolkit(add_instructions=True))
    pieces.extend(
        toolkit.instructions
        for toolkit in _tools(agent, known)
        if getattr(toolkit, "add_instructions", False) and getattr(toolkit, "instructions", None)
    )
    if agent.resolve_in_context:
        pieces = [format_variables(piece, run_context) for piece in pieces]
    return pieces


def _memories_block(agent: Any, memories: Sequence[UserMemory]) -> str:
    if memories:
        lines = "\n".join(f"- {m.memory}" for m in memories)
        text = (
            "You have access to memories from previous interactions with the user that you "
            f"can use:\n\n<memories_from_previous_interactions>\n{lines}\n"
            "</memories_from_previous_interactions>\n\nNote: this information is from "
            "previous interactions and may be updated in this conversation. You should always "
            "prefer information from this conversation over the past memories."
        )
    else:
        text = (
            "You can remember what the user tells you across conversations, but you have no "
            "memories of this user yet."
        )
    if agent.enable_agentic_memory:
        text += (
            "\n\n<updating_user_memories>\n"
            "- The update_user_memory tool adds, changes, deletes or clears the memories you "
            "keep about the user: give it the task in detail.\n"
            "- Use it when the user says something worth remembering to personalise later "
            "conversations, or asks you to change or forget what you remember.\n"
            "- When you use it, tell the user what you remembered or forgot.\n"
            "</updating_user_memories>"
        )
    return text


def _summary_block(summary: SessionSummary) -> str:
    return (
        "Here is a brief summary of your previous interactions:\n\n"
        f"<summary_of_previous_interactions>\n{summary.summary}\n"
        "</summary_of_previous_interactions>\n\nNote: this information is from previous "
        "interactions and may be outdated. You should ALWAYS prefer information from this "
        "conversation over the past summary."
    )


def _knowledge_block(agent: Any, run_context: RunContext | None) -> str | None:
    """What the system message says of the run's knowledge (its ``build_context``, else
    ferrule's words on the search tool), when the model may search it."""
    knowledge = run_knowledge(agent, run_context)
    if knowledge is None or not agent.search_knowledge:
        return None
    if not agent.add_search_knowledge_instructions:
        return None
    build = getattr(knowledge, "build_context", None)
    if callable(build):
        text = build(enable_agentic_filters=bool(agent.enable_agentic_knowledge_filters))
        return str(text) if text else None
    return (
        "<knowledge_base>\nA knowledge base is searchable with the search_knowledge_base "
        "tool. Search it before you answer rather than answering from memory, and search "
        "first when a question is ambiguous.\n</knowledge_base>"
    )


def system_text(
    agent: Any,
    state: dict[str, Any],
    known: Known = NOTHING_KNOWN,
    run_context: RunContext | None = None,
    output: StructuredOutput | None = None,
) -> str | None:
    """The agent's system message's text (see the module docstring); None when there is
    none."""
    system_message = agent.system_message
    if callable(system_message):
        system_message = call_by_name(
            system_message, agent=agent, session_state=state, run_context=run_context
        )
    if system_message is not None and not isinstance(system_message, str):
        system_message = getattr(system_message, "content", None)  # an Agno Message
    if system_message:
        text = str(system_message)
        return format_variables(text, run_context) if agent.resolve_in_context else text
    if not agent.build_context:
        return None
    pieces = _built(agent, state, known, run_context, output)
    if agent.expected_output is not None:
        pieces.append(f"<expected_output>\n{agent.expected_output.strip()}\n</expected_output>")
    if agent.additional_context is not None:
        pieces.append(agent.additional_context)
    if known.memories is not None:
        pieces.append(_memories_block(agent, known.memories))
    if known.summary is not None:
        pieces.append(_summary_block(known.summary))
    knowledge = _knowledge_block(agent, run_context)
    if knowledge:
        pieces.append(knowledge)
    model_prompt = model_system_prompt(agent.model, _tools(agent, known))
    if model_prompt:
        pieces.append(model_prompt)
    json_mode = agent.use_json_mode and not agent.structured_outputs  # Agno's rule
    if output is not None and StructuredOutputs.of(agent.model).schema_in_prompt(json_mode):
        schema = json.dumps(output.schema, ensure_ascii=False)
        pieces.append(
            "Reply with one JSON object that follows this JSON schema, and nothing "
            f"else:\n<json_schema>\n{schema}\n</json_schema>"
        )
    add_state = known.add_session_state
    if add_state if add_state is not None else agent.add_session_state_to_context:
        text = json.dumps(state, ensure_ascii=False, sort_keys=True)
        pieces.append(f"<session_state>\n{text}\n</session_state>")
    return "\n\n".join(pieces) if pieces else None


def system_role(agent: Any) -> str:
    """The role the system message is sent in: the agent's ``system_message_role`` (its
    ``system_message``'s own, an Agno `Message`'s), ``"developer"`` sent as ``"system"``."""
    role = getattr(agent.system_message, "role", None) or agent.system_message_role
    return "system" if role == "developer" else str(role)


def system_messages(agent: Any, text: str | None) -> list[Message]:
    """The system message of ``text`` (none without text), in the agent's role."""
    return [Message(system_role(agent), text)] if text else []  # type: ignore[arg-type]
