"""`ReasoningTools`: a scratchpad the model reasons on, step by step, through tool calls
(Agno's ``agno.tools.reasoning``): ``think`` records a thought, ``analyze`` weighs a result
and names the next action. Each step is kept in the session's state under
``reasoning_steps``, by run id, and every call returns the run's steps so far, so the
model sees its whole chain of thought."""

from __future__ import annotations

from typing import Any, Literal

from ferrule_kernel import InvalidInputError

from .tool_context import RunContext
from .toolkit import Toolkit

__all__ = ["ReasoningTools"]

NextAction = Literal["continue", "validate", "final_answer", "reset"]
NEXT_ACTIONS = ("continue", "validate", "final_answer", "reset")

INSTRUCTIONS = (
    "<reasoning_instructions>\n"
    "You can think before you answer, with the think and analyze tools:\n"
    "- think: a scratchpad for one step of reasoning (its title, your thought, the action "
    "you will take, your confidence); call it as often as the problem needs.\n"
    "- analyze: after acting on a thought, weigh the result and decide the next action: "
    "continue, validate, or final_answer.\n"
    "Your thoughts are not shown to the user. When the analysis says final_answer, answer.\n"
    "</reasoning_instructions>"
)


#: How to think and analyze, shown first when ``add_few_shot`` is set (ferrule's example).
FEW_SHOT_EXAMPLES = (
    "<examples>\n"
    "Question: Is 221 prime?\n"
    "think(title='Try small factors', thought='221 is odd; try 13: 13 * 17 = 221.', "
    "action='Check 13 * 17', confidence=0.9)\n"
    "analyze(title='Check', result='13 * 17 = 221', analysis='221 has the factors 13 "
    "and 17, so it is not prime.', next_action='final_answer', confidence=1.0)\n"
    "Answer: No: 221 = 13 * 17.\n"
    "</examples>"
)


class ReasoningTools(Toolkit):
    """``ReasoningTools(add_instructions=True)``; ``enable_think`` / ``enable_analyze``
    (or ``all``) choose the tools; ``instructions`` replaces the default guidance, and
    ``add_few_shot`` adds an example (``few_shot_examples``: yours)."""

    DEFAULT_INSTRUCTIONS = INSTRUCTIONS
    FEW_SHOT_EXAMPLES = FEW_SHOT_EXAMPLES

    def __init__(
        self,
        enable_think: bool = True,
        *,
        enable_analyze: bool = True,
        all: bool = False,
        instructions: str | None = None,
        add_instructions: bool = False,
        add_few_shot: bool = False,
        few_shot_examples: str | None = None,
        **kwargs: Any,
    ) -> None:
        tools = [
            tool
            for tool, wanted in ((self.think, enable_think), (self.analyze, enable_analyze))
            if wanted or all
        ]
        guidance = self.DEFAULT_INSTRUCTIONS if instructions is None else instructions
        if add_few_shot:
            guidance += "\n\n" + (few_shot_examples or self.FEW_SHOT_EXAMPLES)
        super().__init__(
            name=kwargs.pop("name", "reasoning_tools"),
            tools=tools,
            instructions=guidance,
            add_instructions=add_instructions,
            **kwargs,
        )

    def think(
        self,
        run_context: RunContext,
        title: str,
        thought: str,
        action: str | None = None,
        confidence: float = 0.8,
    ) -> str:
        """Use this tool as a scratchpad to reason about the question step by step. Your
        thoughts are never shown to the user; call it as many times as you need.

        Args:
            title: A short title for this step.
            thought: Your thought for this step, in detail.
            action: What you will do because of this thought.
            confidence: How sure you are of this thought, from 0.0 to 1.0.
        """
        step = {"title": title, "reasoning": thought, "action": action, "confidence": confidence}
        return _record(run_context, step, next_action="continue")

    def analyze(
        self,
        run_context: RunContext,
        title: str,
        result: str,
        analysis: str,
        next_action: str = "continue",
        confidence: float = 0.8,
    ) -> str:
        """Use this tool to analyze the result of a reasoning step and decide what to do next.

        Args:
            title: A short title for this analysis.
            result: The outcome of the previous action.
            analysis: Your analysis of that outcome.
            next_action: What to do next: "continue", "validate" or "final_answer".
            confidence: How sure you are of this analysis, from 0.0 to 1.0.
        """
        if next_action not in NEXT_ACTIONS:
            raise InvalidInputError(
                f"must be one of {', '.join(NEXT_ACTIONS)}; got {next_action!r}",
                field="next_action",
            )
        step = {"title": title, "result": result, "reasoning": analysis, "confidence": confidence}
        return _record(run_context, step, next_action=next_action)


def _record(run_context: RunContext, step: dict[str, Any], *, next_action: str) -> str:
    """Keep ``step`` among the run's reasoning steps; all of them, numbered, as text."""
    if run_context.session_state is None:
        run_context.session_state = {}
    by_run = run_context.session_state.setdefault("reasoning_steps", {})
    steps: list[dict[str, Any]] = by_run.setdefault(run_context.run_id or "", [])
    steps.append({**step, "next_action": next_action})
    return "\n\n".join(_step_text(number, s) for number, s in enumerate(steps, 1))


def _step_text(number: int, step: dict[str, Any]) -> str:
    lines = [f"Step {number}:", f"Title: {step['title']}"]
    if "result" in step:
        lines.append(f"Result: {step['result']}")
    lines.append(f"Reasoning: {step['reasoning']}")
    if step.get("action"):
        lines.append(f"Action: {step['action']}")
    lines += [f"Next action: {step['next_action']}", f"Confidence: {step['confidence']}"]
    return "\n".join(lines)
