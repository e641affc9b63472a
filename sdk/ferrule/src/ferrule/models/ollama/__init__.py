"""Ollama under Agno's module path: `chat.Ollama`."""

from __future__ import annotations

from .chat import Ollama

__all__ = ["Ollama"]
