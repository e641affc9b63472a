"""Agno's ``agno.reasoning.default``: `get_default_reasoning_agent`, an agent on the
reasoning model that answers with its `ReasoningSteps` (at least ``min_steps``, at most
``max_steps``), each naming the action taken, its result, the reasoning and what to do
next, running ``tools`` where a step needs them."""

from __future__ import annotations

from typing import Any, Literal

from ..agent import Agent

__all__ = ["INSTRUCTIONS", "get_default_reasoning_agent"]

INSTRUCTIONS = """\
Work through the user's request step by step before anyone answers it.
- Take at least {min_steps} and at most {max_steps} steps.
- Each step has a short title, the action you take, its result, your reasoning about it,
  your confidence (0 to 1) and the next action: "continue" (more steps are needed),
  "validate" (check the result another way), "final_answer" (you can answer now) or
  "reset" (start over: the reasoning went wrong).
- Use the tools you have when a step needs facts you do not have; report what they return.
- Be precise: no step may rest on a guess presented as a fact.
- When the last step's next action is "final_answer", its result is the answer."""


def get_default_reasoning_agent(
    reasoning_model: Any,
    min_steps: int,
    max_steps: int,
    tools: list[Any] | None = None,
    *,
    tool_call_limit: int | None = None,
    use_json_mode: bool = False,
    telemetry: bool = True,
    debug_mode: bool = False,
    debug_level: Literal[1, 2] = 1,
    run_context: Any = None,
) -> Agent[Any]:
    """The step-writing agent (see the module docstring)."""
    from ..agent import Agent
    from .step import ReasoningSteps

    options: dict[str, Any] = {
        "model": reasoning_model,
        "instructions": INSTRUCTIONS.format(min_steps=min_steps, max_steps=max_steps),
        "tools": list(tools or ()),
        "output_schema": ReasoningSteps,
        "use_json_mode": use_json_mode,
        "debug_mode": debug_mode,
    }
    if tool_call_limit is not None:
        options["tool_call_limit"] = tool_call_limit
    if run_context is not None and getattr(run_context, "session_state", None) is not None:
        options["session_state"] = run_context.session_state
    return Agent(**options)
