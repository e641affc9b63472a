"""Google's models under Agno's module path: `gemini.Gemini` (generateContent) and
`gemini_interactions.GeminiInteractions` (the Interactions API)."""

from __future__ import annotations

from .gemini import Gemini
from .gemini_interactions import GeminiInteractions

__all__ = ["Gemini", "GeminiInteractions"]
