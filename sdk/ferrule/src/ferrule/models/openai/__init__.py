"""OpenAI models under Agno's module paths: `chat.OpenAIChat` (Chat Completions) and
`like.OpenAILike` (any OpenAI-compatible server)."""

from __future__ import annotations

from .chat import OpenAIChat
from .like import OpenAILike

__all__ = ["OpenAIChat", "OpenAILike"]
