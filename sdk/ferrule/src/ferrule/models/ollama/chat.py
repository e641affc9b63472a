"""Ollama under Agno's name (``from ferrule.models.ollama import Ollama``).

`Ollama` is an `OpenAILike` model on Ollama's OpenAI-compatible endpoint, ``{host}/v1``:
``host`` when given, else ``$OLLAMA_HOST`` (Ollama's own variable; ``0.0.0.0:11434`` and
other forms without a scheme are read as ``http://``), else ``http://localhost:11434``.
No key is sent.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from .openai import OpenAILike

__all__ = ["Ollama"]

DEFAULT_HOST = "http://localhost:11434"


def ollama_base_url(host: str | None) -> str:
    host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
    if "://" not in host:
        host = "http://" + host
    return host if host.endswith("/v1") else host + "/v1"


@attrs.frozen(init=False)
class Ollama(OpenAILike):
    """``Ollama(id="qwen3:0.6b")``; ``options`` are more attributes of the
    ``openai_language_model`` component (``read_timeout``, ``extra_body``)."""

    def __init__(
        self, id: str, *, host: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        super().__init__(id, base_url=ollama_base_url(host), options=options)
