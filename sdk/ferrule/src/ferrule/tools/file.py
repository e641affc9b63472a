"""Agno's ``agno.tools.file``: `FileTools`, the model's read and write access to one folder.

The host sets the folder (``base_dir``, default the working directory), the limits
(``max_file_length``, ``max_file_lines``) and what is left out of listings and searches
(``exclude_patterns``: ``fnmatch`` patterns matched against each part of a path); the
model's arguments name files *inside* the folder and can change none of these: a path that
resolves outside the folder (``..``, an absolute path, a link out) is refused with a
`HostPolicyError` the model reads, and nothing is touched. Deleting is off unless the host
turns it on (``enable_delete_file``).
"""

from __future__ import annotations

import fnmatch
import json
import os
from pathlib import Path
from typing import Any

from ferrule_kit.network.hostpolicy import HostPolicyError

from .toolkit import Toolkit

__all__ = ["DEFAULT_EXCLUDE_PATTERNS", "TEXT_EXTENSIONS", "FileTools", "outside"]

#: Files whose content `FileTools.search_content` reads.
TEXT_EXTENSIONS = {
    ".md", ".txt", ".csv", ".json", ".yaml", ".yml", ".xml", ".py", ".js", ".ts", ".html",
    ".css", ".sql", ".sh", ".toml", ".cfg", ".ini", ".log", ".rst",
}  # fmt: skip
#: What listings and searches leave out by default: tools' folders, not the user's files.
DEFAULT_EXCLUDE_PATTERNS = (
    ".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", ".venvs", "venv",
    ".context", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".DS_Store",
)  # fmt: skip


def outside(tool: str, field: str, value: str, folder: str) -> HostPolicyError:
    """The error refusing a path argument of ``tool`` that leaves the host's folder."""
    return HostPolicyError(
        f"{field}: {value!r} is outside {folder}, the folder the host set for {tool!r}; "
        "name a path inside it",
        field=f"$.{field}",
    )


class FileTools(Toolkit):
    """``FileTools(base_dir=Path("work"))`` (see the module docstring); the ``enable_*``
    flags (or ``all``) choose the tools."""

    base_dir: Path
    max_file_length: int
    max_file_lines: int
    line_separator: str
    expose_base_directory: bool
    exclude_patterns: list[str]

    def __init__(
        self,
        base_dir: Path | None = None,
        *,
        enable_save_file: bool = True,
        enable_read_file: bool = True,
        enable_delete_file: bool = False,
        enable_list_files: bool = True,
        enable_search_files: bool = True,
        enable_read_file_chunk: bool = True,
        enable_replace_file_chunk: bool = True,
        enable_search_content: bool = True,
        expose_base_directory: bool = False,
        max_file_length: int = 10000000,
        max_file_lines: int = 100000,
        line_separator: str = "\n",
        exclude_patterns: list[str] | None = None,
        all: bool = False,
        **kwargs: Any,
    ) -> None:
        self.base_dir = Path(base_dir or Path.cwd()).resolve()
        self.max_file_length = max_file_length
        self.max_file_lines = max_file_lines
        self.line_separator = line_separator
        self.expose_base_directory = expose_base_directory
        self.exclude_patterns = list(
            DEFAULT_EXCLUDE_PATTERNS if exclude_patterns is None else exclude_patterns
        )
        chosen = (
            (self.save_file, enable_save_file),
            (self.read_file, enable_read_file),
            (self.list_files, enable_list_files),
            (self.search_files, enable_search_files),
            (self.delete_file, enable_delete_file),
            (self.read_file_chunk, enable_read_file_chunk),
            (self.replace_file_chunk, enable_replace_file_chunk),
            (self.search_content, enable_search_content),
        )
        tools = [tool for tool, wanted in chosen if wanted or all]
        super().__init__(name=kwargs.pop("name", "file_tools"), tools=tools, **kwargs)

    # -- the folder's bounds ------------------------------------------------------------

    def check_escape(self, relative_path: str) -> tuple[bool, Path]:
        """(whether ``relative_path`` stays inside the base folder, the resolved path: the
        folder itself when it does not)."""
        target = (self.base_dir / relative_path).resolve()
        if target == self.base_dir or self.base_dir in target.parents:
            return True, target
        return False, self.base_dir

    def _path(self, relative_path: str, tool: str, field: str = "file_name") -> Path:
        safe, target = self.check_escape(relative_path)
        if not safe:
            raise outside(tool, field, relative_path, self._shown())
        return target

    def _shown(self) -> str:
        return str(self.base_dir) if self.expose_base_directory else "its base directory"

    def _excluded(self, path: Path) -> bool:
        parts = path.relative_to(self.base_dir).parts
        return any(fnmatch.fnmatch(part, p) for part in parts for p in self.exclude_patterns)

    def _files(self, root: Path) -> list[Path]:
        found = []
        for folder, names, files in os.walk(root):
            here = Path(folder)
            names[:] = [n for n in names if not self._excluded(here / n)]
            found += [here / f for f in files if not self._excluded(here / f)]
        return sorted(found)

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.base_dir))

    # -- the tools --------------------------------------------------------------------

    def save_file(
        self, contents: str, file_name: str, overwrite: bool = True, encoding: str = "utf-8"
    ) -> str:
        """Save ``contents`` to a file; its name.

        Args:
            contents: The text to write.
            file_name: The file, relative to the folder.
            overwrite: Replace the file if it exists.
            encoding: The text encoding.
        """
        path = self._path(file_name, "save_file")
        if path.exists() and not overwrite:
            return f"File {file_name} already exists"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(contents, encoding=encoding)
        return str(file_name)

    def read_file(self, file_name: str, encoding: str = "utf-8") -> str:
        """The text of a file.

        Args:
            file_name: The file, relative to the folder.
            encoding: The text encoding.
        """
        path = self._path(file_name, "read_file")
        text = path.read_text(encoding=encoding)
        if len(text) > self.max_file_length or text.count("\n") + 1 > self.max_file_lines:
            return "Error reading file: file too long. Use read_file_chunk instead"
        return text

    def read_file_chunk(
        self, file_name: str, start_line: int, end_line: int, encoding: str = "utf-8"
    ) -> str:
        """Lines ``start_line`` to ``end_line`` of a file (counted from 0, both included).

        Args:
            file_name: The file, relative to the folder.
            start_line: The first line.
            end_line: The last line.
            encoding: The text encoding.
        """
        lines = self._path(file_name, "read_file_chunk").read_text(encoding=encoding).split("\n")
        return self.line_separator.join(lines[start_line : end_line + 1])

    def replace_file_chunk(
        self, file_name: str, start_line: int, end_line: int, chunk: str, encoding: str = "utf-8"
    ) -> str:
        """Replace lines ``start_line`` to ``end_line`` of a file with ``chunk``.

        Args:
            file_name: The file, relative to the folder.
            start_line: The first line replaced (from 0).
            end_line: The last line replaced.
            chunk: The new lines.
            encoding: The text encoding.
        """
        path = self._path(file_name, "replace_file_chunk")
        lines = path.read_text(encoding=encoding).split("\n")
        lines[start_line : end_line + 1] = chunk.split("\n")
        return self.save_file(self.line_separator.join(lines), file_name, True, encoding)

    def delete_file(self, file_name: str) -> str:
        """Delete a file (or an empty folder); an empty text when done.

        Args:
            file_name: The file, relative to the folder.
        """
        path = self._path(file_name, "delete_file")
        if path == self.base_dir:
            raise outside("delete_file", "file_name", file_name, self._shown())
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink()
        return ""

    def list_files(self, directory: str = ".") -> str:
        """The files under a folder, as a JSON list.

        Args:
            directory: The folder, relative to the base folder.
        """
        root = self._path(directory, "list_files", "directory")
        return json.dumps([self._relative(p) for p in self._files(root)], indent=4)

    def search_files(self, pattern: str) -> str:
        """The files matching a glob pattern (``**/*.md``), as JSON.

        Args:
            pattern: The pattern, relative to the folder.
        """
        if not pattern.strip():
            return "Error: Pattern cannot be empty"
        if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise outside("search_files", "pattern", pattern, self._shown())
        matches = [
            self._relative(p)
            for p in sorted(self.base_dir.glob(pattern))
            if p.is_file() and self.check_escape(self._relative(p))[0] and not self._excluded(p)
        ]
        return json.dumps(
            {"pattern": pattern, "matches_found": len(matches), "files": matches}, indent=2
        )

    def search_content(self, query: str, directory: str | None = None, limit: int = 10) -> str:
        """The text files holding ``query`` (case-insensitive), each with a snippet, as JSON.

        Args:
            query: The text to find.
            directory: The folder to search, relative to the base folder (default: all).
            limit: The most files to list.
        """
        if not query.strip():
            return "Error: Query cannot be empty"
        root = self._path(directory or ".", "search_content", "directory")
        found = []
        for path in self._files(root):
            if path.suffix.lower() not in TEXT_EXTENSIONS:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            at = text.lower().find(query.lower())
            if at < 0:
                continue
            snippet = text[max(0, at - 200) : at + len(query) + 200]
            found.append(
                {"file": self._relative(path), "size": path.stat().st_size, "snippet": snippet}
            )
            if len(found) >= limit:
                break
        return json.dumps({"query": query, "matches_found": len(found), "files": found}, indent=2)
