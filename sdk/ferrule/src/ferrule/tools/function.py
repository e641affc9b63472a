"""Agno's ``agno.tools.function``: a tool's description with what runs (``Function``, ferrule's
`Tool`) and one call of it by the model (``FunctionCall``, the kit's `ToolCall`: its
``function.name`` and ``arguments``)."""

from __future__ import annotations

from ferrule_kit.messages import ToolCall as FunctionCall

from .tool import Tool as Function

__all__ = ["Function", "FunctionCall"]
