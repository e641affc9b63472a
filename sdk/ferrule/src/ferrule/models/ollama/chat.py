"""Ollama under Agno's name (``from ferrule.models.ollama.chat import Ollama``).

`Ollama` is an `OpenAILike` model on Ollama's OpenAI-compatible endpoint, ``{host}/v1``:
``host`` when given, else ``$OLLAMA_HOST`` (Ollama's own variable; ``0.0.0.0:11434`` and
other forms without a scheme are read as ``http://``), else ``http://localhost:11434``.
No key is sent.
"""

from __future__ import annotations

import os

import attrs
from typing_extensions import Unpack

from ..openai.chat import ChatParams
from ..openai.like import OpenAILike

__all__ = ["Ollama"]

DEFAULT_HOST = "http://localhost:11434"


def ollama_base_url(host: str | None) -> str:
    host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
    if "://" not in host:
        host = "http://" + host
    return host if host.endswith("/v1") else host + "/v1"


@attrs.frozen(init=False)
class Ollama(OpenAILike):
    """``Ollama(id="qwen3:0.6b", temperature=0.2)``, with `OpenAIChat`'s keywords but
    ``base_url`` (``host`` names the server)."""

    def __init__(self, id: str, *, host: str | None = None, **params: Unpack[ChatParams]) -> None:
        params["base_url"] = ollama_base_url(host)
        self._init_chat(id, "openai", params)
