"""Agno's ``agno.context.wiki``: `WikiContextProvider` (`provider`) and its backends
(`backend`: `FileSystemBackend`, `GitBackend`; the Notion ones refused)."""

from __future__ import annotations

from .backend import (
    CommitSummary,
    FileSystemBackend,
    GitBackend,
    NotionDatabaseBackend,
    NotionPageBackend,
    WikiBackend,
    WikiBackendError,
)
from .provider import (
    DEFAULT_WIKI_READ_INSTRUCTIONS,
    DEFAULT_WIKI_WRITE_INSTRUCTIONS,
    WIKI_WEB_INGEST_INSTRUCTIONS,
    WikiContextProvider,
)

__all__ = [
    "DEFAULT_WIKI_READ_INSTRUCTIONS",
    "DEFAULT_WIKI_WRITE_INSTRUCTIONS",
    "WIKI_WEB_INGEST_INSTRUCTIONS",
    "CommitSummary",
    "FileSystemBackend",
    "GitBackend",
    "NotionDatabaseBackend",
    "NotionPageBackend",
    "WikiBackend",
    "WikiBackendError",
    "WikiContextProvider",
]
