"""Agno's ``agno.context.backend``: `ContextBackend`, the part of a provider that reaches
the source (a web fetcher, a client): its tools, its health (``status``), and what to open
and close (``asetup`` / ``aclose``, nothing by default)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from .provider import Status

__all__ = ["ContextBackend"]


class ContextBackend(ABC):
    """A provider's reach into its source (see the module docstring)."""

    @abstractmethod
    def status(self) -> Status:
        """Whether the source can be reached."""

    @abstractmethod
    async def astatus(self) -> Status:
        """`status`, awaited."""

    @abstractmethod
    def get_tools(self) -> list[Any]:
        """The tools reaching the source."""

    async def asetup(self) -> None:
        """Open what the tools need (nothing by default)."""
        return None

    async def aclose(self) -> None:
        """Release what `asetup` opened (nothing by default)."""
        return None
