"""OpenAI models under Agno's module paths: `chat.OpenAIChat` (Chat Completions) and
`like.OpenAILike` (any OpenAI-compatible server), `responses.OpenAIResponses` (the Responses
API) and `open_responses.OpenResponses` (another server of that API)."""

from __future__ import annotations

from .chat import OpenAIChat
from .like import OpenAILike
from .open_responses import OpenResponses
from .responses import OpenAIResponses

__all__ = ["OpenAIChat", "OpenAILike", "OpenAIResponses", "OpenResponses"]
