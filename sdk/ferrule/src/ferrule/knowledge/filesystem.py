"""Agno's ``agno.knowledge.filesystem``: `FileSystemKnowledge`, the files of one folder as a
knowledge base the model searches itself, with three tools: ``grep_file`` (the lines that
match a pattern, with a line of context each side), ``list_files`` (names matching a glob)
and ``get_file`` (one file's text). ``retrieve`` greps too.

The folder is the host's: a path the model names that leaves it (``..``, an absolute path,
a link out) reads nothing, links inside it are not followed out, and each file is read
under `ferrule.knowledge.ReadLimits`' size bound. ``exclude_patterns`` leave out any path
holding one of them (``.git``, ``node_modules``...); ``include_patterns`` (globs on a file's
name), when given, keep only the files matching one.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .document.base import Document
from .readers import ReadLimits

__all__ = ["DEFAULT_EXCLUDE_PATTERNS", "FileSystemKnowledge"]

DEFAULT_EXCLUDE_PATTERNS = [".git", "__pycache__", "node_modules", ".venv", "venv"]
#: Matches shown per file, and of those kept in ``meta_data["matches"]``.
_MATCHES_SHOWN, _MATCHES_KEPT = 10, 5


@attrs.define
class FileSystemKnowledge:
    """``FileSystemKnowledge(base_dir="docs")`` (see the module docstring)."""

    base_dir: str
    max_results: int = 50
    include_patterns: list[str] = attrs.Factory(list)
    exclude_patterns: list[str] = attrs.Factory(lambda: list(DEFAULT_EXCLUDE_PATTERNS))
    base_path: Path = attrs.field(init=False)
    limits: ReadLimits = attrs.field(factory=ReadLimits, kw_only=True)

    def __attrs_post_init__(self) -> None:
        self.base_path = Path(self.base_dir).expanduser().resolve()
        if not self.base_path.is_dir():
            raise InvalidInputError(f"no such folder: {self.base_dir}", field="base_dir")

    # -- the folder ---------------------------------------------------------------------

    def _kept(self, path: Path) -> bool:
        relative = path.relative_to(self.base_path).as_posix()
        if any(pattern in relative for pattern in self.exclude_patterns):
            return False
        if not self.include_patterns:
            return True
        return any(fnmatch.fnmatch(path.name, p) for p in self.include_patterns)

    def _files(self) -> list[Path]:
        found = []
        for root, dirs, files in os.walk(self.base_path):  # links to folders not followed
            dirs[:] = sorted(d for d in dirs if not any(p in d for p in self.exclude_patterns))
            for name in sorted(files):
                path = Path(root) / name
                inside = path.resolve().is_relative_to(self.base_path)
                if inside and path.is_file() and self._kept(path):
                    found.append(path)
        return found

    def _text(self, path: Path) -> str | None:
        try:
            if path.stat().st_size > self.limits.max_file_bytes:
                return None
            data = path.read_bytes()
        except OSError:
            return None
        if b"\x00" in data:
            return None  # not text
        return data.decode("utf-8", errors="replace")

    def _inside(self, relative: str) -> Path | None:
        target = (self.base_path / relative).resolve()
        return target if target.is_relative_to(self.base_path) else None

    # -- the searches -------------------------------------------------------------------

    def _list_files(self, query: str, max_results: int | None = None) -> list[Document]:
        limit = max_results or self.max_results
        out = []
        for path in self._files():
            relative = path.relative_to(self.base_path).as_posix()
            if (
                query
                and query != "*"
                and not (fnmatch.fnmatch(path.name, query) or fnmatch.fnmatch(relative, query))
            ):
                continue
            meta = {
                "type": "file_listing",
                "absolute_path": str(path),
                "extension": path.suffix,
                "size": path.stat().st_size,
            }
            out.append(Document(content=relative, name=relative, meta_data=meta))
            if len(out) >= limit:
                break
        return out

    def _get_file(self, query: str) -> list[Document]:
        path = self._inside(query)
        if path is None or not path.is_file():
            return []
        text = self._text(path)
        if text is None:
            return []
        relative = path.relative_to(self.base_path).as_posix()
        meta = {
            "type": "file_content",
            "absolute_path": str(path),
            "extension": path.suffix,
            "size": len(text),
            "lines": text.count("\n") + 1,
        }
        return [Document(content=text, name=relative, meta_data=meta)]

    def _grep(self, query: str, max_results: int | None = None) -> list[Document]:
        limit = max_results or self.max_results
        try:
            pattern = re.compile(query, re.IGNORECASE)
        except re.error:
            pattern = re.compile(re.escape(query), re.IGNORECASE)
        out = []
        for path in self._files():
            text = self._text(path)
            if text is None:
                continue
            found = list(pattern.finditer(text))
            if not found:
                continue
            lines = text.split("\n")
            shown: list[dict[str, Any]] = []
            for match in found[:_MATCHES_SHOWN]:
                line = text.count("\n", 0, match.start())
                context = "\n".join(lines[max(0, line - 1) : line + 2])
                shown.append({"line": line + 1, "match": match.group(), "context": context})
            relative = path.relative_to(self.base_path).as_posix()
            meta = {
                "type": "grep_result",
                "absolute_path": str(path),
                "match_count": len(found),
                "matches": shown[:_MATCHES_KEPT],
            }
            content = "\n---\n".join(m["context"] for m in shown)
            out.append(Document(content=content, name=relative, meta_data=meta))
            if len(out) >= limit:
                break
        return out

    # -- Agno's knowledge protocol ------------------------------------------------------

    def build_context(self, **kwargs: Any) -> str:
        """The system message's lines about this knowledge and its three tools."""
        return (
            f"You can search a knowledge base of files in {self.base_dir}. Search it before "
            "you answer, and answer from what the files say, not from memory.\n"
            "Tools:\n"
            "- grep_file(query): the lines of the files matching a word or pattern;\n"
            "- list_files(pattern): the files' names ('*' for all, '*.md' for Markdown);\n"
            "- get_file(path): one file's whole text.\n"
            "Start with grep_file, or list the files and read the ones that matter."
        )

    def grep_file(self, query: str, max_results: int = 20) -> str:
        """Search the files for a word or pattern; the matching lines, with context.

        Args:
            query: The word or regular expression to find (case-insensitive).
            max_results: The most files to show.
        """
        found = self._grep(query, max_results=max_results)
        if not found:
            return f"No matches found for: {query}"
        return "\n\n".join(f"### {d.name}\n{d.content}" for d in found)

    def list_files(self, pattern: str = "*", max_results: int = 50) -> str:
        """List the knowledge base's files matching a glob pattern.

        Args:
            pattern: The pattern ('*' for every file, '*.md' for Markdown files).
            max_results: The most files to list.
        """
        found = self._list_files(pattern, max_results=max_results)
        if not found:
            return f"No files found matching: {pattern}"
        return f"Found {len(found)} files:\n" + "\n".join(f"- {d.name}" for d in found)

    def get_file(self, path: str) -> str:
        """Read one file of the knowledge base.

        Args:
            path: The file's path, as list_files shows it.
        """
        found = self._get_file(path)
        if not found:
            return f"File not found: {path}"
        return f"### {found[0].name}\n```\n{found[0].content}\n```"

    def get_tools(self, **kwargs: Any) -> list[Any]:
        """The three tools (`ferrule.tools.Function` s): grep_file, list_files, get_file."""
        from ..tools.function import Function

        return [
            Function.from_callable(self.grep_file, name="grep_file"),
            Function.from_callable(self.list_files, name="list_files"),
            Function.from_callable(self.get_file, name="get_file"),
        ]

    async def aget_tools(self, **kwargs: Any) -> list[Any]:
        """`get_tools`, awaited."""
        return self.get_tools(**kwargs)

    def retrieve(self, query: str, max_results: int | None = None, **kwargs: Any) -> list[Document]:
        """The files matching ``query`` (`grep_file`'s documents)."""
        return self._grep(query, max_results=max_results or 10)

    async def aretrieve(
        self, query: str, max_results: int | None = None, **kwargs: Any
    ) -> list[Document]:
        """`retrieve`, in a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.retrieve, query, max_results)
