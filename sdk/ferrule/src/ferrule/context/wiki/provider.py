"""Agno's ``agno.context.wiki.provider``: `WikiContextProvider`, a wiki of Markdown pages
(its `WikiBackend`: a folder, a git repository) that agents read and write.

Reads go to a sub-agent with read-only `FileTools` on the wiki's folder (synced first);
writes (``update``) to one that may also save and edit pages, and fetch the web through
``web`` (a `ContextBackend`: its tools join the writer's) — each write synced first, made
under a lock, then kept by the backend (a git commit, its summary added to the answer).
By default an agent gets a query tool and an update tool (``read`` / ``write`` choose);
``mode="tools"`` gives the read-only file tools.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..backend import ContextBackend
from ..mode import ContextMode
from ..provider import Answer, ContextProvider, Status, answer_from_run
from .backend import CommitSummary, WikiBackend

__all__ = [
    "DEFAULT_WIKI_READ_INSTRUCTIONS",
    "DEFAULT_WIKI_WRITE_INSTRUCTIONS",
    "WIKI_WEB_INGEST_INSTRUCTIONS",
    "WikiContextProvider",
]

DEFAULT_WIKI_READ_INSTRUCTIONS = """\
You answer questions from the wiki's Markdown pages under {path}, and from nothing else.
1. See which pages there are (list_files) before you open any; do not guess names.
2. Find the pages that bear on the question (search_content), then read them (read_file).
3. Answer from what they say, naming each page you rely on; quote exactly.
When the wiki does not say, say so."""
DEFAULT_WIKI_WRITE_INSTRUCTIONS = """\
You keep the wiki's Markdown pages under {path} as instructed.
1. Look first: list the pages and read the ones the instruction touches.
2. Change the page the content belongs on rather than starting another; a new page gets a
   short lower-case file name with dashes and a title line.
3. Change only what the instruction asks; keep the rest of a page as it is.
4. Say which pages you changed and how."""
WIKI_WEB_INGEST_INSTRUCTIONS = """\
You can also read the web with your web tools. When the instruction gives a URL, or asks
for sources on a subject, fetch them first, then write what they say into the wiki in your
own words, with each source's URL under a "Sources" heading on the page."""


class WikiContextProvider(ContextProvider):
    """``WikiContextProvider(backend=FileSystemBackend("wiki"))`` (see the module docstring)."""

    backend: WikiBackend
    web: ContextBackend | None
    read_instructions_text: str
    write_instructions_text: str

    def __init__(
        self,
        *,
        backend: WikiBackend,
        id: str = "wiki",
        name: str | None = None,
        read_instructions: str | None = None,
        write_instructions: str | None = None,
        mode: ContextMode = ContextMode.default,
        model: Any = None,
        read: bool = True,
        write: bool = True,
        web: ContextBackend | None = None,
        stream_sub_agent_events: bool = True,
    ) -> None:
        super().__init__(
            id=id,
            name=name,
            mode=mode,
            model=model,
            read=read,
            write=write,
            stream_sub_agent_events=stream_sub_agent_events,
        )
        self.backend = backend
        self.web = web
        self.read_instructions_text = (
            DEFAULT_WIKI_READ_INSTRUCTIONS if read_instructions is None else read_instructions
        )
        self.write_instructions_text = (
            DEFAULT_WIKI_WRITE_INSTRUCTIONS if write_instructions is None else write_instructions
        )
        self._reader: Any = None
        self._writer: Any = None
        self._lock: asyncio.Lock | None = None
        self._ready = False

    # -- the folder and its agents --------------------------------------------------------

    async def asetup(self) -> None:
        if self._ready:
            return
        await self.backend.setup()
        if self.web is not None:
            await self.web.asetup()
        self._ready = True

    async def aclose(self) -> None:
        self._writer = None
        if self.web is not None:
            await self.web.aclose()

    def _locked(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def sync(self) -> None:
        """Bring the wiki up to date (under the lock writes take)."""
        await self.asetup()
        async with self._locked():
            await self.backend.sync()

    def _read_tools(self) -> Any:
        from ..files import read_only_file_tools

        return read_only_file_tools(self.backend.path, None)

    def _write_tools(self) -> Any:
        from ...tools.file import FileTools

        return FileTools(base_dir=self.backend.path, enable_delete_file=False)

    def _read_agent(self) -> Any:
        if self._reader is None:
            text = self.read_instructions_text.replace("{path}", str(self.backend.path))
            self._reader = self._sub_agent(text, [self._read_tools()], " Read")
        return self._reader

    def _write_agent(self) -> Any:
        if self._writer is None:
            text = self.write_instructions_text.replace("{path}", str(self.backend.path))
            tools: list[Any] = [self._write_tools()]
            if self.web is not None:
                text += "\n\n" + WIKI_WEB_INGEST_INSTRUCTIONS
                tools += self.web.get_tools()
            self._writer = self._sub_agent(text, tools, " Write")
        return self._writer

    # -- what it does ---------------------------------------------------------------------

    def status(self) -> Status:
        return self.backend.status()

    async def astatus(self) -> Status:
        return await self.backend.astatus()

    async def aquery(self, question: str, *, run_context: Any = None) -> Answer:
        await self.asetup()
        async with self._locked():
            await self.backend.sync()
        run = await self._read_agent().arun(question, **self._run_kwargs_for_sub_agent(run_context))
        return answer_from_run(run)

    def query(self, question: str, *, run_context: Any = None) -> Answer:
        from ...shared_runtime import default_runtime

        answer: Answer = default_runtime().sync_bridge.run(
            self.aquery(question, run_context=run_context)
        )
        return answer

    async def aupdate(self, instruction: str, *, run_context: Any = None) -> Answer:
        await self.asetup()
        async with self._locked():
            await self.backend.sync()
            run = await self._write_agent().arun(
                instruction, **self._run_kwargs_for_sub_agent(run_context)
            )
            answer = answer_from_run(run)
            commit: CommitSummary | None = await self.backend.commit_after_write(model=self.model)
        if commit is None:
            return answer
        note = f"Committed {commit.sha[:8]} ({commit.files_changed} file(s)): {commit.message}"
        text = f"{answer.text}\n\n{note}" if answer.text else note
        return Answer(results=answer.results, text=text)

    def update(self, instruction: str, *, run_context: Any = None) -> Answer:
        from ...shared_runtime import default_runtime

        answer: Answer = default_runtime().sync_bridge.run(
            self.aupdate(instruction, run_context=run_context)
        )
        return answer

    def instructions(self) -> str:
        if self.mode is ContextMode.tools:
            return f"`{self.name}`: the wiki under {self.backend.path}: list_files, search_content, read_file (read-only)."
        if self.mode is ContextMode.agent:
            return f"`{self.name}`: call `{self.query_tool_name}(question)` to read the wiki."
        parts = [f"`{self.name}`:"]
        if self.read:
            parts.append(f"call `{self.query_tool_name}(question)` to read the wiki.")
        if self.write:
            hint = f"Call `{self.update_tool_name}(instruction)` to add or change pages"
            if self.web is not None:
                hint += " (give it a URL, or ask it to find sources on a subject)"
            parts.append(hint + ".")
        return " ".join(parts)

    def _default_tools(self) -> list[Any]:
        return self._read_write_tools()

    def _all_tools(self) -> list[Any]:
        return [self._read_tools()]
