"""Agno's ``agno.knowledge.protocol``: `KnowledgeProtocol`, what a knowledge base of your own
offers an agent: instructions for its system message (``build_context``), the tools the
model uses on it (``get_tools`` / ``aget_tools``) and documents for a query (``retrieve`` /
``aretrieve``, which an agent that adds knowledge to the context calls). `Knowledge` and
`FileSystemKnowledge` are two."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from .document import Document

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

    def retrieve(self, query: str, **kwargs: Any) -> list[Document]:
        """The documents relevant to ``query`` (``max_results``, ``filters``... in
        ``kwargs``)."""
        ...

    async def aretrieve(self, query: str, **kwargs: Any) -> list[Document]:
        """`retrieve`, awaited."""
        ...
