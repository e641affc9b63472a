"""Agno's ``agno.reasoning.helpers``: a plain reasoning agent (`get_reasoning_agent`), a
step's next action (`get_next_action`: final answer unless it says otherwise), and putting
the reasoning into a run's messages (`update_messages_with_reasoning`: the reasoning
between two assistant notes, so the model answers from it)."""

from __future__ import annotations

from typing import Any, Literal

from ..agent import Agent
from ..models.message import Message
from .step import NextAction, ReasoningStep

__all__ = ["get_next_action", "get_reasoning_agent", "update_messages_with_reasoning"]

BEFORE = (
    "I have worked through this problem step by step, running the tools it needed; my "
    "reasoning follows."
)
AFTER = (
    "Now I will answer from that reasoning, leaving out the tool calls already made and the "
    "steps that do not bear on the answer."
)


def get_reasoning_agent(
    reasoning_model: Any,
    telemetry: bool = False,
    debug_mode: bool = False,
    debug_level: Literal[1, 2] = 1,
    run_context: Any = None,
) -> Agent[Any]:
    """An agent on ``reasoning_model`` (with the run's session state, when given)."""
    options: dict[str, Any] = {"model": reasoning_model, "debug_mode": debug_mode}
    if run_context is not None and getattr(run_context, "session_state", None) is not None:
        options["session_state"] = run_context.session_state
    return Agent(**options)


def get_next_action(reasoning_step: ReasoningStep) -> NextAction:
    """The step's next action (`NextAction.FINAL_ANSWER` when it names none, or none known)."""
    value = reasoning_step.next_action or NextAction.FINAL_ANSWER
    try:
        return NextAction(value)
    except ValueError:
        return NextAction.FINAL_ANSWER


def update_messages_with_reasoning(run_messages: Any, reasoning_messages: list[Any]) -> None:
    """Add ``reasoning_messages`` to ``run_messages`` (its ``messages`` list, or the list
    itself) between two assistant notes (see the module docstring)."""
    messages = run_messages if isinstance(run_messages, list) else run_messages.messages
    messages.append(Message(role="assistant", content=BEFORE))
    messages.extend(reasoning_messages)
    messages.append(Message(role="assistant", content=AFTER))
