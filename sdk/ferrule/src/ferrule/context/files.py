"""What the folder-backed providers share (`fs`, `workspace`): a root the host sets, the
read-only `ferrule.tools.file.FileTools` on it (never out of the root), and a sub-agent
using them to answer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .provider import Answer, ContextProvider, Status, answer_from_run

__all__ = ["FolderProvider", "read_only_file_tools"]


def read_only_file_tools(root: Path, exclude_patterns: list[str] | None, **limits: Any) -> Any:
    """`FileTools` on ``root`` that read, list and search, and change nothing."""
    from ..tools.file import FileTools

    return FileTools(
        base_dir=root,
        enable_save_file=False,
        enable_delete_file=False,
        enable_replace_file_chunk=False,
        exclude_patterns=exclude_patterns,
        **limits,
    )


class FolderProvider(ContextProvider):
    """A provider answering from the files under ``root`` (read-only)."""

    root: Path
    instructions_text: str
    exclude_patterns: list[str] | None

    def _tools(self) -> Any:
        return read_only_file_tools(self.root, self.exclude_patterns)

    def _agent(self) -> Any:
        agent = getattr(self, "_built", None)
        if agent is None:
            text = self.instructions_text.replace("{root}", str(self.root))
            agent = self._built = self._sub_agent(text, [self._tools()])
        return agent

    def status(self) -> Status:
        if not self.root.exists():
            return Status(False, f"root does not exist: {self.root}")
        if not self.root.is_dir():
            return Status(False, f"root is not a directory: {self.root}")
        return Status(True, str(self.root))

    async def astatus(self) -> Status:
        return await asyncio.to_thread(self.status)

    def query(self, question: str, *, run_context: Any = None) -> Answer:
        return answer_from_run(
            self._agent().run(question, **self._run_kwargs_for_sub_agent(run_context))
        )

    async def aquery(self, question: str, *, run_context: Any = None) -> Answer:
        run = await self._agent().arun(question, **self._run_kwargs_for_sub_agent(run_context))
        return answer_from_run(run)

    def _all_tools(self) -> list[Any]:
        return [self._tools()]
