"""LlamaCpp under Agno's module path: `llama_cpp.LlamaCpp`."""

from __future__ import annotations

from .llama_cpp import LlamaCpp

__all__ = ["LlamaCpp"]
