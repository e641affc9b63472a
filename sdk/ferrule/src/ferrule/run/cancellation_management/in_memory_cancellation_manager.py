"""Agno's ``agno.run.cancellation_management.in_memory_cancellation_manager``:
`InMemoryRunCancellationManager`, the manager ferrule installs unless told otherwise (the
runs of this process, in a dict). It lives in `ferrule.agent.cancellation`."""

from __future__ import annotations

from ...agent.cancellation import InMemoryRunCancellationManager

__all__ = ["InMemoryRunCancellationManager"]
