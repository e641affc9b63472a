"""Agno's ``agno.context.workspace.provider``: `WorkspaceContextProvider`, a project's files
(the working directory by default), read-only, its dependency, build and scratch folders
left out (`ferrule.tools.file.DEFAULT_EXCLUDE_PATTERNS`), files over ``max_file_lines`` or
``max_file_length`` read in chunks: a sub-agent answers from them (``mode="tools"``: the
tools themselves)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..files import FolderProvider, read_only_file_tools
from ..mode import ContextMode

__all__ = ["DEFAULT_WORKSPACE_INSTRUCTIONS", "WorkspaceContextProvider"]

DEFAULT_WORKSPACE_INSTRUCTIONS = """\
You answer questions about the project under {root}, from its files.
1. Get the lay of the land: list_files, then the README and the build files.
2. Find the code or text: search_content with names and words from the question.
3. Read the parts that answer: read_file, or read_file_chunk for a long file.
4. Name the files and lines you rely on; quote exactly.
You cannot change files. Dependencies, builds and caches are left out. When the project does
not say, say so."""


class WorkspaceContextProvider(FolderProvider):
    """``WorkspaceContextProvider()`` (see the module docstring)."""

    max_file_lines: int
    max_file_length: int

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        id: str = "workspace",
        name: str = "Workspace",
        instructions: str | None = None,
        mode: ContextMode = ContextMode.default,
        model: Any = None,
        exclude_patterns: list[str] | None = None,
        max_file_lines: int = 100_000,
        max_file_length: int = 10_000_000,
        stream_sub_agent_events: bool = True,
    ) -> None:
        from ...tools.file import DEFAULT_EXCLUDE_PATTERNS

        super().__init__(
            id=id,
            name=name,
            mode=mode,
            model=model,
            stream_sub_agent_events=stream_sub_agent_events,
        )
        self.root = (Path(root).expanduser() if root is not None else Path.cwd()).resolve()
        self.instructions_text = (
            DEFAULT_WORKSPACE_INSTRUCTIONS if instructions is None else instructions
        )
        self.exclude_patterns = (
            list(DEFAULT_EXCLUDE_PATTERNS) if exclude_patterns is None else exclude_patterns
        )
        self.max_file_lines = max_file_lines
        self.max_file_length = max_file_length

    def _tools(self) -> Any:
        return read_only_file_tools(
            self.root,
            self.exclude_patterns,
            max_file_lines=self.max_file_lines,
            max_file_length=self.max_file_length,
        )

    def instructions(self) -> str:
        if self.mode is ContextMode.tools:
            return (
                f"`{self.name}`: the project under {self.root}: list_files, search_content, "
                "read_file (read-only; dependencies, builds and caches left out)."
            )
        return f"`{self.name}`: call `{self.query_tool_name}(question)` to ask about the project under {self.root}."
