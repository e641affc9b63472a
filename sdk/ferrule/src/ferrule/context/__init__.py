"""Agno's ``agno.context``: context providers, sources of information an agent reaches
through tools (a folder: `fs`, a project: `workspace`, a wiki: `wiki`), each a
`ContextProvider` answering questions (`Answer`) through a sub-agent of its own, exposed as
`ContextMode` says. The names load on first access."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .backend import ContextBackend
    from .mode import ContextMode
    from .provider import Answer, ContextProvider, Document, Status

__all__ = ["Answer", "ContextBackend", "ContextMode", "ContextProvider", "Document", "Status"]

__getattr__ = lazy_attributes(
    __name__,
    {
        "Answer": ".provider",
        "ContextBackend": ".backend",
        "ContextMode": ".mode",
        "ContextProvider": ".provider",
        "Document": ".provider",
        "Status": ".provider",
    },
)
