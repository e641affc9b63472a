"""Google's models under Agno's module path: `gemini.Gemini`."""

from __future__ import annotations

from .gemini import Gemini

__all__ = ["Gemini"]
