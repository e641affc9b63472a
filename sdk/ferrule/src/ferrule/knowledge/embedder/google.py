"""Agno's import path for the Gemini embedder: ``from ferrule.knowledge.embedder.google import
GeminiEmbedder`` is `ferrule.knowledge.embedder.GeminiEmbedder` (``gemini_embedder``,
ferrule-gemini; the endpoint moves with ``base_url`` or ``$GOOGLE_GEMINI_BASE_URL``)."""

from __future__ import annotations

from . import GeminiEmbedder

__all__ = ["GeminiEmbedder"]
