"""Agno's ``agno.knowledge.protocol``: `KnowledgeProtocol`, what a knowledge base of your own
offers an agent: instructions for its system message (``build_context``), the tools the
model uses on it (``get_tools`` / ``aget_tools``) and, optionally, documents for a query
(``retrieve`` / ``aretrieve``). `FileSystemKnowledge` is one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["KnowledgeProtocol"]


@runtime_checkable
class KnowledgeProtocol(Protocol):
    """A knowledge base an agent can use (see the module docstring)."""

    def build_context(self, **kwargs: Any) -> str:
        """What the system message says about this knowledge and its tools."""
        ...

    def get_tools(self, **kwargs: Any) -> list[Callable[..., Any]]:
        """The tools the model uses on this knowledge."""
        ...

    async def aget_tools(self, **kwargs: Any) -> list[Callable[..., Any]]:
        """`get_tools`, awaited."""
        ...
