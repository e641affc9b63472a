"""What an agent's ``knowledge`` is (a ferrule `Knowledge`, a knowledge base of Agno's
protocol, or Agno's knowledge factory: a function making each run's) and which knowledge a
run uses; the agent's knowledge side (`retrieval`) and its system message read these."""

from __future__ import annotations

from typing import Any

from ..tools.tool_context import RunContext


def is_protocol_knowledge(knowledge: Any) -> bool:
    """An object of Agno's knowledge protocol that is not a ferrule `Knowledge`: its own
    tools, instructions and documents."""
    return not hasattr(knowledge, "areferences") and any(
        callable(getattr(knowledge, name, None))
        for name in ("get_tools", "build_context", "retrieve")
    )


def is_knowledge(value: Any) -> bool:
    """A knowledge base: a ferrule `Knowledge`, or an object of Agno's protocol (an
    instance: a class is neither)."""
    if isinstance(value, type):
        return False
    return hasattr(value, "asearch") or is_protocol_knowledge(value)


def is_knowledge_factory(value: Any) -> bool:
    """Agno's knowledge factory: a function making each run's knowledge (a class, or a
    knowledge base that happens to be callable, is not one)."""
    return callable(value) and not isinstance(value, type) and not is_knowledge(value)


def run_knowledge(agent: Any, run_context: RunContext | None) -> Any:
    """The knowledge a run of ``agent`` uses: the agent's, or (its ``knowledge`` a factory)
    what the factory made for the run, as set on ``run_context`` (None before)."""
    if not is_knowledge_factory(agent.knowledge):
        return agent.knowledge
    return run_context.knowledge if run_context is not None else None
