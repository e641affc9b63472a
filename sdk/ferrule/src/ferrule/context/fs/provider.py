"""Agno's ``agno.context.fs.provider``: `FilesystemContextProvider`, the files under one
folder, read-only: a sub-agent answers from them with `FileTools` that list, search and
read (``mode="tools"``: those tools themselves), never leaving the folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..files import FolderProvider
from ..mode import ContextMode

__all__ = ["DEFAULT_FS_INSTRUCTIONS", "FilesystemContextProvider"]

DEFAULT_FS_INSTRUCTIONS = """\
You answer questions from the files under {root}, and from nothing else.
1. See what is there: list_files, or search_files with a glob ("**/*.md").
2. Find the text: search_content with words from the question.
3. Read what matters: read_file for a small file, read_file_chunk for a part of a big one.
4. Name the file (its path under the root) for each thing you say, and quote exactly.
You cannot change files. When nothing matches, say so; do not guess file names."""


class FilesystemContextProvider(FolderProvider):
    """``FilesystemContextProvider("docs")`` (see the module docstring)."""

    def __init__(
        self,
        root: str | Path,
        *,
        id: str = "fs",
        name: str = "Filesystem",
        instructions: str | None = None,
        mode: ContextMode = ContextMode.default,
        model: Any = None,
        exclude_patterns: list[str] | None = None,
        stream_sub_agent_events: bool = True,
    ) -> None:
        super().__init__(
            id=id,
            name=name,
            mode=mode,
            model=model,
            stream_sub_agent_events=stream_sub_agent_events,
        )
        self.root = Path(root).expanduser().resolve()
        self.instructions_text = DEFAULT_FS_INSTRUCTIONS if instructions is None else instructions
        self.exclude_patterns = exclude_patterns

    def instructions(self) -> str:
        if self.mode is ContextMode.tools:
            return (
                f"`{self.name}`: the files under {self.root}: list_files, search_files (glob), "
                "search_content (text), read_file, read_file_chunk; paths relative to the root."
            )
        return f"`{self.name}`: call `{self.query_tool_name}(question)` to ask about the files under {self.root}."
