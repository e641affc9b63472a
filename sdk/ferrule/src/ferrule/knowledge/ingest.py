"""Inserting into a knowledge base: reading what one content names (in a worker thread),
then embedding its documents in batches and storing each document whole, an unchanged
version skipped and a changed one replaced."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, get_logger
from ferrule_kit.vectors import content_hash

from .chunking import chunk_id, split
from .document import ContentResult, ReadFailure
from .readers import ReadLimits, Source, read_path, read_text, read_url

__all__ = ["CONTENT_ARGUMENTS", "Chunking", "Progress", "Read", "insert", "read_content"]

log = get_logger("ferrule.knowledge")

#: ``progress(done, total)``: chunks embedded so far, of how many (called on the runtime's
#: event loop thread).
Progress = Callable[[int, int], None]

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
    path: str | os.PathLike[str] | None = None,
    url: str | None = None,
    text_content: str | None = None,
    metadata: dict[str, Any] | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    *,
    limits: ReadLimits,
    follow_symlinks: bool = False,
    where: str = "",
) -> Read:
    """The documents one content names (exactly one of ``path``, ``url`` and
    ``text_content``); a path is read in a worker thread, off the event loop."""
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
        )
        return Read(sources, skipped, failed)
    if url is not None:
        return Read([await read_url(url, name, meta, limits)])
    assert text_content is not None
    return Read([read_text(text_content, name, meta)])


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
    key += [chunking.chunk_size, chunking.chunk_overlap]
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


async def insert(
    runtime: Any,
    store: str,
    embedder: str,
    sources: list[Source],
    chunking: Chunking,
    skip_if_exists: bool,
    progress: Progress | None,
) -> ContentResult:
    """Embed and store ``sources`` (the last of one id given wins)."""
    result = ContentResult()
    unique = list({s.document_id: s for s in sources}.values())
    versions = {s.document_id: version(s, chunking) for s in unique}
    stored = await _stored_versions(runtime, store, list(versions))
    todo: list[_Todo] = []
    for source in unique:
        new, old = versions[source.document_id], stored.get(source.document_id)
        if skip_if_exists and old == [new]:
            result.skipped.append(source.document_id)
            continue
        texts = await split(runtime, source, chunking.chunk_size, chunking.chunk_overlap)
        if not texts and old is None:
            result.skipped.append(source.document_id)  # nothing to read (a scanned PDF)
            continue
        todo.append((source, new, texts, old is not None))
    total = sum(len(t[2]) for t in todo)
    if progress is not None:
        progress(0, total)
    # Embed chunks in batches across documents. The documents a batch completes are
    # stored in one transaction while the next batch is embedded (embedder and store
    # each work in a thread of their own); a document is written whole or not at all.
    flat = [(d, i) for d, (_, _, texts, _) in enumerate(todo) for i in range(len(texts))]
    vectors: list[list[list[float]]] = [[] for _ in todo]
    next_document = 0
    writing: asyncio.Task[int] | None = None
    in_flight: list[_Todo] = []
    try:
        for start in range(0, max(len(flat), 1), chunking.batch_size):
            batch = flat[start : start + chunking.batch_size]
            if batch:
                out = await runtime.acall_method(
                    embedder,
                    "embed",
                    {"texts": [todo[d][2][i] for d, i in batch], "input_type": "document"},
                )
                for (d, _), vector in zip(batch, out["vectors"], strict=True):
                    vectors[d].append(vector)
            finished = next_document
            while finished < len(todo) and len(vectors[finished]) == len(todo[finished][2]):
                finished += 1
            if finished > next_document:
                if writing is not None:
                    _record(result, in_flight, await writing)
                in_flight = todo[next_document:finished]
                done_vectors = vectors[next_document:finished]
                vectors[next_document:finished] = [[] for _ in in_flight]  # let them go
                writing = asyncio.ensure_future(_write(runtime, store, in_flight, done_vectors))
                next_document = finished
            if progress is not None and batch:
                progress(min(total, start + len(batch)), total)
        if writing is not None:
            _record(result, in_flight, await writing)
            writing = None
    finally:
        if writing is not None:  # failed on the way: what was embedded is still stored
            await asyncio.wait([writing])
    log.debug(
        "knowledge.inserted",
        added=len(result.added),
        replaced=len(result.replaced),
        skipped=len(result.skipped),
        chunks=result.chunks,
    )
    return result


async def _write(
    runtime: Any, store: str, documents: list[_Todo], vectors: list[list[list[float]]]
) -> int:
    chunks: list[dict[str, Any]] = []
    emptied: list[str] = []  # stored documents that now read as nothing
    for (source, version_hash, texts, _), embedded in zip(documents, vectors, strict=True):
        if not texts:
            emptied.append(source.document_id)
        for index, (text, vector) in enumerate(zip(texts, embedded, strict=True)):
            chunks.append(
                {
                    "id": chunk_id(source.document_id, index),
                    "document_id": source.document_id,
                    "text": text,
                    "vector": vector,
                    "content_hash": version_hash,
                    "metadata": {"name": source.name, **source.metadata, "chunk": index},
                }
            )
    await runtime.acall_method(
        store, "replace_documents", {"chunks": chunks, "document_ids": emptied}
    )
    return len(chunks)


def _record(result: ContentResult, documents: list[_Todo], chunks: int) -> None:
    """Count a stored group of documents as added or replaced."""
    result.chunks += chunks
    for source, _, _, existed in documents:
        (result.replaced if existed else result.added).append(source.document_id)
