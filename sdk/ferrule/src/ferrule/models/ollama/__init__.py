"""Ollama under Agno's module paths: `chat.Ollama` (Chat Completions) and
`responses.OllamaResponses` (the Responses API)."""

from __future__ import annotations

from .chat import Ollama
from .responses import OllamaResponses

__all__ = ["Ollama", "OllamaResponses"]
