"""Agno's ``agno.session``: an agent's stored session (`AgentSession`) and the summaries a
model writes of it (`SessionSummaryManager`). ``Session`` names the kinds of session ferrule
keeps: an agent's."""

from __future__ import annotations

from .agent import AgentSession
from .summary import SessionSummary, SessionSummaryManager

#: The sessions a db gives: an agent's (ferrule has no team or workflow sessions).
Session = AgentSession

__all__ = ["AgentSession", "Session", "SessionSummary", "SessionSummaryManager"]
