"""Agno's ``agno.context.workspace``: `WorkspaceContextProvider` (`provider`)."""

from __future__ import annotations

from .provider import DEFAULT_WORKSPACE_INSTRUCTIONS, WorkspaceContextProvider

__all__ = ["DEFAULT_WORKSPACE_INSTRUCTIONS", "WorkspaceContextProvider"]
