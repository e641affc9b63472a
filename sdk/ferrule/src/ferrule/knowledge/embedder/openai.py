"""Agno's import path for the OpenAI embedder: ``from ferrule.knowledge.embedder.openai import
OpenAIEmbedder`` is `ferrule.knowledge.embedder.OpenAIEmbedder` (``openai_embedder``,
ferrule-openai; the endpoint moves with ``base_url`` or ``$OPENAI_BASE_URL``)."""

from __future__ import annotations

from . import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]
