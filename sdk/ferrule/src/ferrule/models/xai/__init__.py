"""xAI's models under Agno's module path: `xai.xAI`."""

from __future__ import annotations

from .xai import xAI

__all__ = ["xAI"]
