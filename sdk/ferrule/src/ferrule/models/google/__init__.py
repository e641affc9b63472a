"""Google's models under Agno's module path: `gemini.Gemini`."""

from __future__ import annotations

from .gemini import Gemini

__all__ = ["Gemini"]


def __getattr__(name: str) -> object:
    if name == "GeminiInteractions":
        raise ImportError(
            "GeminiInteractions (Gemini's Interactions API: state and hosted agents on "
            "Google's side) is not in ferrule: use Gemini (generateContent), with an Agent "
            "keeping the conversation"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
