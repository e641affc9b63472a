"""The notes the thinking toolkits (`KnowledgeTools`, `MemoryTools`) keep in a run's session
state: each list under its key, all of it returned, so the model reads its notes so far."""

from __future__ import annotations

from typing import Any

__all__ = ["noted"]


def noted(run_context: Any, key: str, note: str, heading: str) -> str:
    """``note`` added to the run's list ``key``; the list as text under ``heading``."""
    state = getattr(run_context, "session_state", None)
    if state is None:
        state = {}
        if run_context is not None:
            run_context.session_state = state
    notes: list[str] = state.setdefault(key, [])
    notes.append(note)
    return f"{heading}\n" + "\n".join(f"- {n}" for n in notes)
