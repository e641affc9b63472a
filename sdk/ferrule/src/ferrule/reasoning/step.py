"""Agno's ``agno.reasoning.step``: a reasoning agent's steps (`ReasoningStep`, in
`ReasoningSteps`) and what each says to do next (`NextAction`)."""

from __future__ import annotations

import enum

import attrs

__all__ = ["NextAction", "ReasoningStep", "ReasoningSteps"]


class NextAction(str, enum.Enum):
    CONTINUE = "continue"
    VALIDATE = "validate"
    FINAL_ANSWER = "final_answer"
    RESET = "reset"


@attrs.define(kw_only=True)
class ReasoningStep:
    """One step: its ``title``, the ``action`` taken, its ``result``, the ``reasoning``
    behind it, the ``next_action`` and the ``confidence`` (0 to 1)."""

    title: str | None = None
    action: str | None = None
    result: str | None = None
    reasoning: str | None = None
    next_action: NextAction | None = None
    confidence: float | None = None

    def model_dump(self) -> dict[str, object]:
        """The step's fields (``next_action`` by its value)."""
        out = attrs.asdict(self)
        if self.next_action is not None:
            out["next_action"] = NextAction(self.next_action).value
        return out


@attrs.define(kw_only=True)
class ReasoningSteps:
    """What a reasoning agent answers: its steps, in order."""

    reasoning_steps: list[ReasoningStep]
