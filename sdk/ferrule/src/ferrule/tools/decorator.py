"""Agno's ``agno.tools.decorator``: the `tool` decorator (`ferrule.tools.tool`)."""

from __future__ import annotations

from .tool import tool

__all__ = ["tool"]
