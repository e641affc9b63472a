"""Agno's ``agno.context.mode``: `ContextMode`, how a provider shows itself to an agent:
``default`` (what the provider recommends), ``agent`` (one ``query_<id>`` tool backed by its
sub-agent) or ``tools`` (its own tools, for the agent to use directly)."""

from __future__ import annotations

import enum

__all__ = ["ContextMode"]


class ContextMode(str, enum.Enum):
    default = "default"
    agent = "agent"
    tools = "tools"
