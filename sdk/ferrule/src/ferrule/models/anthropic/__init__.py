"""Anthropic's models under Agno's module path: `claude.Claude`."""

from __future__ import annotations

from .claude import Claude, SystemPromptBlock

__all__ = ["Claude", "SystemPromptBlock"]
