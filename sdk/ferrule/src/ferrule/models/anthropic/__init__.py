"""Anthropic's models under Agno's module path: `claude.Claude`."""

from __future__ import annotations

from .claude import Claude

__all__ = ["Claude"]
