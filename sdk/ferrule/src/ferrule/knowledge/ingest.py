"""Inserting into a knowledge base: reading what one content names (in a worker thread),
then embedding its documents' chunks in small calls and storing each document whole, an
unchanged version skipped and a changed one replaced.

Chunks are embedded a window at a time (`WINDOW` chunks in document order), sorted by
length within it so that each call's texts are alike (a local embedder pads a batch to
its longest text), in calls of ``batch_size`` chunks, `IN_FLIGHT` calls at once (an API
embedder answers them in parallel; a local one runs them back to back, never idle
between two). Progress is reported after each call. The documents a call completes are
stored in one transaction while the next calls embed: a document is written whole or
not at all.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError, get_logger
from ferrule_kit.embeddings.vectors import content_hash

from .chunking import MARKDOWN_CUT, chunk_id, split
from .document import ContentResult, ReadFailure
from .readers import ReadLimits, Source, fetch_url, read_path, read_text, read_url
from .sources import ReaderChoice

__all__ = [
    "CONTENT_ARGUMENTS",
    "Chunking",
    "IngestProgress",
    "Mode",
    "Progress",
    "Read",
    "insert",
    "read_content",
]

log = get_logger("ferrule.knowledge")

#: Chunks sorted by length together, and embedder calls running at once (module docstring).
WINDOW = 256
IN_FLIGHT = 4


@attrs.frozen
class IngestProgress:
    """Where an insertion stands: the ``documents`` to embed (new or changed) and their
    ``chunks``, how many chunks are ``embedded`` and documents ``stored`` so far, and the
    documents ``skipped`` as stored unchanged."""

    documents: int
    chunks: int
    embedded: int = 0
    stored: int = 0
    skipped: int = 0


#: ``progress(done, total)``: chunks embedded so far, of how many; or, for a callable of
#: one argument, ``progress(IngestProgress)``. Called on the runtime's event loop thread,
#: once the chunks are counted and after each embedder call (and, with `IngestProgress`,
#: each store write).
Progress = Callable[[int, int], None] | Callable[[IngestProgress], None]

#: What each of `Knowledge.add_contents`'s ``contents`` may say.
CONTENT_ARGUMENTS = (
    "name",
    "description",
    "path",
    "url",
    "text_content",
    "metadata",
    "include",
    "exclude",
)
#: What an insertion does with a document already stored: ``"update"`` replaces it when
#: it changed and leaves it when not; ``"keep"`` leaves it, changed or not (Agno's
#: ``skip_if_exists`` / ``upsert=False``); ``"reembed"`` embeds and writes it again.
Mode = Literal["update", "keep", "reembed"]
#: Document ids per ``documents`` call when looking up what is stored.
_LOOKUP = 256


@attrs.frozen
class Chunking:
    """How documents are cut and embedded: `split`'s sizes and chunks per embedder call."""

    chunk_size: int
    chunk_overlap: int
    batch_size: int


@attrs.define
class Read:
    """What reading contents gave: documents, files skipped as unreadable, files failed."""

    sources: list[Source] = attrs.Factory(list)
    skipped: list[str] = attrs.Factory(list)
    failed: list[ReadFailure] = attrs.Factory(list)

    def add(self, other: Read) -> None:
        self.sources += other.sources
        self.skipped += other.skipped
        self.failed += other.failed


async def read_content(
    name: str | None,
    description: str | None,
    *,
    path: str | os.PathLike[str] | None = None,
    url: str | None = None,
    text_content: str | None = None,
    metadata: dict[str, Any] | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    limits: ReadLimits,
    follow_symlinks: bool = False,
    where: str = "",
    choice: ReaderChoice = ReaderChoice(),
) -> Read:
    """The documents one content names (exactly one of ``path``, ``url`` and
    ``text_content``), read by ``choice``'s reader where it has one for them; a path is
    read in a worker thread, off the event loop."""
    given = [
        k
        for k, v in (("path", path), ("url", url), ("text_content", text_content))
        if v is not None
    ]
    if len(given) != 1:
        raise InvalidInputError(
            "give exactly one of path, url or text_content"
            + (f" (got {', '.join(given)})" if given else ""),
            field=where + (given[1] if len(given) > 1 else "path"),
        )
    meta = _metadata(metadata, description)
    if path is not None:
        sources, skipped, failed = await asyncio.to_thread(
            read_path,
            path,
            name,
            meta,
            include or (),
            exclude or (),
            limits=limits,
            follow_symlinks=follow_symlinks,
            read_with=choice.read_with(),
        )
        return Read(sources, skipped, failed)
    if url is not None:
        if choice.reader is None and not choice.readers:
            return Read([await read_url(url, name, meta, limits)])
        fetched = await fetch_url(url, name, limits)
        read = await asyncio.to_thread(choice.url_source, fetched, meta)
        return Read([read or await read_url(url, name, meta, limits)])
    assert text_content is not None
    if not isinstance(text_content, str):
        raise InvalidInputError(
            f"expected a string, got {type(text_content).__name__}", field=where + "text_content"
        )
    if choice.reader is None:
        return Read([read_text(text_content, name, meta)])
    return Read([await asyncio.to_thread(choice.text_source, text_content, name, meta)])


def _metadata(metadata: Any, description: str | None) -> dict[str, Any]:
    if metadata is None:
        return {} if description is None else {"description": description}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"expected a dict, got {type(metadata).__name__}", field="metadata")
    if description is not None:
        return {**metadata, "description": description}
    return dict(metadata)


def version(source: Source, chunking: Chunking) -> str:
    """The hash of a document version: what it says and how it is chunked."""
    key: list[Any] = [source.text, source.name, source.metadata, source.kind]
    if source.pieces is not None:  # cut by a reader: its pieces and which reader
        key += [source.reader, source.pieces]
    else:
        key += [chunking.chunk_size, chunking.chunk_overlap]
    if source.kind == "markdown" and source.pieces is None:
        key.append(MARKDOWN_CUT)
    return content_hash(json.dumps(key, sort_keys=True, ensure_ascii=False, default=str))


async def _stored_versions(runtime: Any, store: str, ids: list[str]) -> dict[str, list[str]]:
    stored: dict[str, list[str]] = {}
    for start in range(0, len(ids), _LOOKUP):
        out = await runtime.acall_method(
            store, "documents", {"document_ids": ids[start : start + _LOOKUP]}
        )
        for document in out["documents"]:
            stored[document["document_id"]] = document["content_hashes"]
    return stored


#: A document to store: its source, version, chunk texts, whether an older version is stored.
_Todo = tuple[Source, str, list[str], bool]


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _reporter(progress: Any) -> Callable[[IngestProgress], None]:
    """``progress`` as a function of `IngestProgress`: given as one (a callable of one
    positional parameter), or as ``(done, total)``, told only when ``done`` moves."""
    if progress is None:
        return lambda status: None
    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):  # a builtin with no signature: (done, total)
        parameters = None
    if parameters is not None:
        kinds = [p.kind for p in parameters]
        positional = sum(k in _POSITIONAL for k in kinds)
        if positional == 1 and inspect.Parameter.VAR_POSITIONAL not in kinds:
            one: Callable[[IngestProgress], None] = progress
            return one
    told: list[int] = []

    def pair(status: IngestProgress) -> None:
        if told[-1:] != [status.embedded]:
            told.append(status.embedded)
            progress(status.embedded, status.chunks)

    return pair


async def insert(
    runtime: Any,
    store: str,
    embedder: str,
    sources: list[Source],
    *,
    chunking: Chunking,
    mode: Mode,
    progress: Progress | None,
    result: ContentResult | None = None,
) -> ContentResult:
    """Embed and store ``sources`` (the last of one id given wins), what ``mode`` says of
    the stored ones. ``result`` (a new one by default) holds what is done as it is done:
    what was stored before a failure is in it when the failure is raised."""
    result = ContentResult() if result is None else result
    unique = list({s.document_id: s for s in sources}.values())
    versions = {s.document_id: version(s, chunking) for s in unique}
    stored = await _stored_versions(runtime, store, list(versions))
    todo: list[_Todo] = []
    for source in unique:
        new, old = versions[source.document_id], stored.get(source.document_id)
        if (mode == "update" and old == [new]) or (mode == "keep" and old is not None):
            result.skipped.append(source.document_id)
            continue
        if source.pieces is not None:
            texts = [piece for piece, _ in source.pieces]
        else:
            texts = await split(runtime, source, chunking.chunk_size, chunking.chunk_overlap)
        if not texts and old is None:
            result.skipped.append(source.document_id)  # nothing to read (a scanned PDF)
            continue
        todo.append((source, new, texts, old is not None))
    status = IngestProgress(len(todo), sum(len(t[2]) for t in todo), skipped=len(result.skipped))
    report = _reporter(progress)
    report(status)
    embedding = _Embedding(runtime, store, embedder, todo, chunking.batch_size)
    try:
        async for embedded, stored_documents in embedding.run():
            status = attrs.evolve(status, embedded=embedded, stored=stored_documents)
            report(status)
    finally:
        await embedding.settle()
        for source, _, _, existed in (todo[d] for d in sorted(embedding.stored)):
            (result.replaced if existed else result.added).append(source.document_id)
        result.chunks += embedding.chunks_written
    log.debug(
        "knowledge.inserted",
        added=len(result.added),
        replaced=len(result.replaced),
        skipped=len(result.skipped),
        chunks=result.chunks,
    )
    return result


class _Embedding:
    """One insertion's embedder calls and store writes (see the module docstring)."""

    def __init__(
        self, runtime: Any, store: str, embedder: str, todo: list[_Todo], batch_size: int
    ) -> None:
        self.runtime, self.store, self.embedder = runtime, store, embedder
        self.todo = todo
        self.vectors: list[list[Any]] = [[None] * len(texts) for _, _, texts, _ in todo]
        self.missing = [len(texts) for _, _, texts, _ in todo]
        self.calls = self._calls(batch_size)
        self.embedding: set[asyncio.Task[tuple[list[tuple[int, int]], list[Any]]]] = set()
        self.writing: asyncio.Task[int] | None = None
        self.in_flight: list[int] = []  # the documents being written
        self.stored: list[int] = []  # the documents written
        self.ready: list[int] = []  # the documents embedded whole, waiting to be written
        self.chunks_written = 0

    def _calls(self, batch_size: int) -> list[list[tuple[int, int]]]:
        """The (document, chunk) pairs of each embedder call, in order."""
        flat = [(d, i) for d, (_, _, texts, _) in enumerate(self.todo) for i in range(len(texts))]
        calls = []
        for start in range(0, len(flat), WINDOW):
            window = sorted(flat[start : start + WINDOW], key=self._size, reverse=True)
            calls += [window[k : k + batch_size] for k in range(0, len(window), batch_size)]
        return calls

    def _size(self, pair: tuple[int, int]) -> int:
        return len(self.todo[pair[0]][2][pair[1]])

    async def _embed(self, call: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[Any]]:
        texts = [self.todo[d][2][i] for d, i in call]
        out = await self.runtime.acall_method(
            self.embedder, "embed", {"texts": texts, "input_type": "document"}
        )
        vectors: list[Any] = out["vectors"]
        return call, vectors

    async def run(self) -> AsyncIterator[tuple[int, int]]:
        """Embed and store everything; yields (chunks embedded, documents stored) each
        time either moves."""
        embedded = 0
        self.ready = [d for d, missing in enumerate(self.missing) if not missing]  # emptied
        pending = iter(self.calls)
        for call in itertools.islice(pending, IN_FLIGHT):
            self.embedding.add(asyncio.ensure_future(self._embed(call)))
        while self.embedding or self.ready or self.writing is not None:
            if self.writing is None and self.ready:
                self.in_flight, self.ready = sorted(self.ready), []
                self.writing = asyncio.ensure_future(self._write(self.in_flight))
            waiting: set[asyncio.Future[Any]] = set(self.embedding)
            if self.writing is not None:
                waiting.add(self.writing)
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if self.writing is not None and self.writing in done:
                self.chunks_written += self.writing.result()
                self.stored += self.in_flight
                self.writing, self.in_flight = None, []
            failed = [task for task in done & self.embedding if task.exception() is not None]
            for task in done & self.embedding - set(failed):
                self.embedding.discard(task)
                call, vectors = task.result()
                for (d, i), vector in zip(call, vectors, strict=True):
                    self.vectors[d][i] = vector
                    self.missing[d] -= 1
                    if not self.missing[d]:
                        self.ready.append(d)
                embedded += len(call)
                for next_call in itertools.islice(pending, 1):
                    self.embedding.add(asyncio.ensure_future(self._embed(next_call)))
            if failed:  # after keeping what the calls that did not fail embedded
                failed[0].result()
            yield embedded, len(self.stored)

    async def settle(self) -> None:
        """After a failure: stop embedding, let a write under way finish, then store the
        documents embedded whole meanwhile (what was embedded is not lost; a store that
        fails again leaves them, and the first error stands)."""
        for task in self.embedding:
            task.cancel()
        if self.embedding:
            await asyncio.wait(self.embedding)
        if self.writing is not None:
            await asyncio.wait([self.writing])
            if self.writing.cancelled() or self.writing.exception() is not None:
                return  # the store failed: writing more would fail the same way
            self.chunks_written += self.writing.result()
            self.stored += self.in_flight
            self.writing = None
        if self.ready:
            documents, self.ready = sorted(self.ready), []
            try:
                self.chunks_written += await self._write(documents)
            except Exception as exc:  # the error that stopped the insertion is raised
                log.debug("knowledge.store_after_failure_failed", error=repr(exc))
                return
            self.stored += documents

    async def _write(self, documents: list[int]) -> int:
        chunks: list[dict[str, Any]] = []
        emptied: list[str] = []  # stored documents that now read as nothing
        for d in documents:
            source, version_hash, texts, _ = self.todo[d]
            if not texts:
                emptied.append(source.document_id)
            pieces = source.pieces or ()
            for index, (text, vector) in enumerate(zip(texts, self.vectors[d], strict=True)):
                own = pieces[index][1] if index < len(pieces) else {}  # what a reader said
                chunks.append(
                    {
                        "id": chunk_id(source.document_id, index),
                        "document_id": source.document_id,
                        "text": text,
                        "vector": vector,
                        "content_hash": version_hash,
                        "metadata": {
                            "name": source.name,
                            **own,
                            **source.metadata,
                            "chunk": index,
                        },
                    }
                )
            self.vectors[d] = []  # let them go
        await self.runtime.acall_method(
            self.store, "replace_documents", {"chunks": chunks, "document_ids": emptied}
        )
        return len(chunks)
