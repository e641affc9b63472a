"""Agno's ``agno.context.fs``: `FilesystemContextProvider` (`provider`)."""

from __future__ import annotations

from .provider import DEFAULT_FS_INSTRUCTIONS, FilesystemContextProvider

__all__ = ["DEFAULT_FS_INSTRUCTIONS", "FilesystemContextProvider"]
