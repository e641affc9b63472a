"""Agno's chain-of-thought reasoning before a run answers: a step-writing agent (the
agent's ``reasoning_agent``, else one on the ``reasoning_model``, else on the agent's own
model, told to take ``reasoning_min_steps`` to ``reasoning_max_steps`` steps) is asked for
`ReasoningStep` s until a step's next action is no longer ``continue`` (or the steps run
out), by `ferrule.reasoning.manager.ReasoningManager` (handed to the agent's second models
as ``reasoner``). Each step is a `ReasoningStepEvent` on the run's stream; the reasoning
agent's messages join the run's (between Agno's two notes) for the main model to read, and
the steps are the run's ``reasoning_steps``.

An agent reasons this way when it is given a ``reasoning_agent`` or sets
``reasoning_min_steps`` / ``reasoning_max_steps`` (`reasons_in_steps`); a bare
``reasoning_model`` thinks once, as `reasoning.reason` does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ferrule_kernel import InvalidInputError, get_logger

from .deps import SecondModels
from .events import ReasoningStepEvent

log = get_logger("ferrule.agent")

if TYPE_CHECKING:
    from .sinks import Sink
    from .state import RunState

#: Agno's bounds when none are given.
DEFAULT_STEPS = (1, 10)


class StepSettings(Protocol):
    """The agent's reasoning settings, as they are when a run starts."""

    reasoning_model: Any
    reasoning_agent: Any
    reasoning_min_steps: int
    reasoning_max_steps: int


def check_steps(reasoning_agent: Any, min_steps: int, max_steps: int) -> None:
    """Refuse a ``reasoning_agent`` that is no agent, or bounds that leave no step."""
    if reasoning_agent is not None and not callable(getattr(reasoning_agent, "arun", None)):
        raise InvalidInputError(
            f"reasoning_agent must be an Agent, got {type(reasoning_agent).__name__}",
            field="reasoning_agent",
        )
    if min_steps < 1:
        raise InvalidInputError("must be at least 1", field="reasoning_min_steps")
    if max_steps < min_steps:
        raise InvalidInputError(
            "must not be below reasoning_min_steps", field="reasoning_max_steps"
        )


def reasons_in_steps(agent: StepSettings) -> bool:
    """Whether ``agent``'s runs reason in steps (see the module docstring)."""
    bounds = (agent.reasoning_min_steps, agent.reasoning_max_steps)
    return agent.reasoning_agent is not None or bounds != DEFAULT_STEPS


def step_text(step: Any) -> str:
    """A step as text (Agno's ``reasoning_content`` of a step)."""
    lines = [f"## {step.title}" if step.title else ""]
    for label, value in (("Action", step.action), ("Result", step.result)):
        if value:
            lines.append(f"{label}: {value}")
    if step.reasoning:
        lines.append(step.reasoning)
    return "\n".join(line for line in lines if line) + "\n"


async def reason_in_steps(
    models: SecondModels, agent: StepSettings, run: RunState, sink: Sink
) -> None:
    """Reason about ``run`` in steps (see the module docstring). A reasoning that fails
    (a reply that is no `ReasoningSteps`, a failing model) is logged as a warning and the
    run answers without it, as Agno's does."""
    assert models.reasoner is not None  # handed by Agent
    # the manager's model (the step-writing agent's unless a reasoning_agent is given)
    model = await models.model("reasoning", agent.reasoning_model)
    manager = models.reasoner(
        model, agent.reasoning_agent, agent.reasoning_min_steps, agent.reasoning_max_steps
    )
    messages = list(run.messages)
    first_new = len(messages)
    try:
        async for event in manager.areason(messages):
            kind = event.event_type.value
            if kind == "reasoning_step":
                step = event.reasoning_step
                sink.announce(
                    ReasoningStepEvent,
                    content=step,
                    content_type="ReasoningStep",
                    reasoning_content=step_text(step),
                )
            elif kind == "reasoning_error":  # as Agno: the run goes on without it
                log.warning("reasoning_failed", run_id=run.id, error=event.error)
            elif kind == "reasoning_completed":
                run.reasoning_steps = list(event.reasoning_steps) or None
                for message in messages[first_new:]:
                    run.messages.append(message.to_kit() if hasattr(message, "to_kit") else message)
    finally:
        await manager.aclose()
