"""`Knowledge`: documents chunked by ``split_text``, embedded by an embedder component and
kept in a vector-store component, searched by meaning (RAG).

    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb

    knowledge = Knowledge(vector_db=SqliteVecDb(db_file="tmp/kb.db"))
    knowledge.add_content(path="docs/", include=["*.md"], metadata={"source": "docs"})
    for doc in knowledge.search("how do I resume a session?", max_results=3):
        print(doc.name, doc.content)

Inserting is idempotent: each document's chunks carry the hash of the document version
(its text, metadata and chunking), so an unchanged document is skipped and a changed one
has all its old chunks replaced in one transaction of the store (`replace_documents`):
readers see the old version or the new one, and a process killed mid-insert loses no
document already written. Before anything is written the store's collection is checked
against the embedder's dimension (`ferrule_kit.vectors.DimensionMismatchError`). A store or
embedder that is down ends the call with the one typed error its component raises.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

from ferrule_kernel import InvalidInputError, get_logger
from ferrule_kit.vectors import MAX_TOP_K, content_hash

from .document import ContentResult, Document, MessageReferences
from .embedder import MiniLMEmbedder
from .readers import Source, read_path, read_text, read_url
from .vectordb import SEARCH_TYPES, SearchType, SqliteVecDb

__all__ = ["Knowledge", "Progress"]

log = get_logger("ferrule.knowledge")

T = TypeVar("T")

#: ``progress(done, total)``: chunks embedded so far, of how many (called on the runtime's
#: event loop thread).
Progress = Callable[[int, int], None]

_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^(```|~~~)")
#: Document ids per ``documents`` call when looking up what is stored.
_LOOKUP = 256
#: Hybrid search: candidates taken from each ranking (at least), and the fusion's constant.
HYBRID_CANDIDATES = 50
RRF_K = 60


class Knowledge:
    """A knowledge base: ``Knowledge(vector_db=..., embedder=...)``.

    ``vector_db``: a `ferrule.knowledge.vectordb.VectorDb` (`SqliteVecDb`, the default,
    or `PgVector`) or a store component's name. ``embedder``: a
    `ferrule.knowledge.embedder.Embedder` (`MiniLMEmbedder`, the offline default,
    `OpenAIEmbedder`, `GeminiEmbedder`), a defined embedder component's name, or None for
    the vector db's ``embedder`` or else the default. ``runtime``: where the components
    are defined (default: the runtime of the first agent given this knowledge, else the
    process's shared one). ``max_results``: what `search` returns by default.
    ``chunk_size`` / ``chunk_overlap``: `split_text`'s, in UTF-8 bytes (all-MiniLM-L6-v2
    reads 256 tokens, about 1,000 bytes of English). ``batch_size``: chunks per embedder
    call (and per store transaction).
    """

    def __init__(
        self,
        vector_db: Any = None,
        embedder: Any = None,
        *,
        name: str | None = None,
        description: str | None = None,
        max_results: int = 10,
        runtime: Any = None,
        chunk_size: int = 1000,
        chunk_overlap: int = 100,
        batch_size: int = 256,
    ) -> None:
        if vector_db is None:
            vector_db = SqliteVecDb()
        elif not isinstance(vector_db, str) and not hasattr(vector_db, "component_type"):
            raise InvalidInputError(
                f"vector_db must be a SqliteVecDb, a PgVector or a vector store component's "
                f"name, got {vector_db!r}",
                field="vector_db",
            )
        if embedder is None:
            embedder = getattr(vector_db, "embedder", None) or MiniLMEmbedder()
        elif not isinstance(embedder, str) and not hasattr(embedder, "component_type"):
            raise InvalidInputError(
                f"embedder must be an embedder description (MiniLMEmbedder, OpenAIEmbedder, "
                f"GeminiEmbedder) or an embedder component's name, got {embedder!r}",
                field="embedder",
            )
        for field, value, low in (
            ("max_results", max_results, 1),
            ("chunk_size", chunk_size, 1),
            ("chunk_overlap", chunk_overlap, 0),
            ("batch_size", batch_size, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise InvalidInputError(f"must be an integer of at least {low}", field=field)
        if chunk_overlap >= chunk_size:
            raise InvalidInputError("must be less than chunk_size", field="chunk_overlap")
        self.vector_db = vector_db
        self.embedder = embedder
        self.name, self.description = name, description
        self.max_results = max_results
        self.chunk_size, self.chunk_overlap = chunk_size, chunk_overlap
        self.batch_size = batch_size
        self.search_type: str = getattr(vector_db, "search_type", "vector")
        self._runtime = runtime
        self._store: str | None = None
        self._embedder: str | None = None
        self._owned: list[str] = []
        self._lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"Knowledge(vector_db={self.vector_db!r}, embedder={self.embedder!r})"

    # -- where it runs ---------------------------------------------------------------------

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            from ..agent.langmodel import default_runtime

            self._runtime = default_runtime()
        return self._runtime

    def _adopt_runtime(self, runtime: Any) -> None:
        """An agent given this knowledge lends its runtime, unless one is chosen already."""
        if self._runtime is None:
            self._runtime = runtime

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        from ..agent.stream import _Home

        home = _Home(self.runtime)
        if home.thread is None:
            coro.close()
            raise TypeError(
                "this knowledge's runtime is an AsyncRuntime: use the a* methods "
                "(aadd_content, asearch, aclose)"
            )
        return home.run(coro)

    async def _arun(self, coro: Coroutine[Any, Any, T]) -> T:
        from ..agent.stream import _Home

        return await _Home(self.runtime).arun(coro)

    async def _ready(self) -> tuple[str, str]:
        """The store and embedder components (defined on first use, the collection made
        or checked against the embedder's dimension): nothing is written before this."""
        if self._store is not None and self._embedder is not None:
            return self._store, self._embedder
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            runtime = self.runtime
            if self._embedder is None:
                self._embedder = await self._define(self.embedder, "knowledge-embedder")
            if self._store is None:
                info = await runtime.acall_method(self._embedder, "info", {})
                store = await self._define(self.vector_db, "knowledge-store")
                distance = getattr(self.vector_db, "distance", None) or info["distance"]
                try:
                    await runtime.acall_method(
                        store,
                        "ensure_collection",
                        {"dimension": info["dimension"], "distance": distance},
                    )
                except BaseException:
                    await self._forget(store)  # a later call defines it afresh
                    raise
                self._store = store
        return self._store, self._embedder

    async def _define(self, description: Any, prefix: str) -> str:
        if isinstance(description, str):  # a component defined on the runtime already
            return description
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        runtime = self.runtime
        await runtime.adefine(description.component_type, name, description.attributes(runtime))
        self._owned.append(name)
        return name

    def close(self) -> None:
        """Delete the components this knowledge defined (a store keeps its data)."""
        if self._owned:
            self._run(self._close())

    async def aclose(self) -> None:
        if self._owned:
            await self._arun(self._close())

    async def _forget(self, name: str) -> None:
        if name in self._owned:
            self._owned.remove(name)
            await self.runtime.adelete(name)

    async def _close(self) -> None:
        owned, self._owned = self._owned, []
        self._store = self._embedder = None
        for name in reversed(owned):
            await self.runtime.adelete(name)

    def __enter__(self) -> Knowledge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inserting --------------------------------------------------------------------------

    def add_content(
        self,
        name: str | None = None,
        description: str | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        text_content: str | None = None,
        metadata: dict[str, Any] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        skip_if_exists: bool = True,
        progress: Progress | None = None,
    ) -> ContentResult:
        """Insert one content: a file or folder (``path``; a folder is read recursively,
        its files chosen by the ``include`` / ``exclude`` globs), a ``url``, or
        ``text_content``. ``name`` names it (a text given by name is replaced when added
        again by that name); ``metadata`` goes on every chunk, for ``filters`` (and
        ``description``, as its ``"description"``).
        ``skip_if_exists``: skip documents stored unchanged (False re-embeds them).
        Returns what was added, replaced and skipped."""
        return self._run(
            self._add_content(
                name,
                description,
                path,
                url,
                text_content,
                metadata,
                include,
                exclude,
                skip_if_exists,
                progress,
            )
        )

    async def aadd_content(
        self,
        name: str | None = None,
        description: str | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        text_content: str | None = None,
        metadata: dict[str, Any] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        skip_if_exists: bool = True,
        progress: Progress | None = None,
    ) -> ContentResult:
        return await self._arun(
            self._add_content(
                name,
                description,
                path,
                url,
                text_content,
                metadata,
                include,
                exclude,
                skip_if_exists,
                progress,
            )
        )

    #: Agno's name of `aadd_content`.
    add_content_async = aadd_content

    def add_contents(
        self,
        contents: Sequence[dict[str, Any]] | None = None,
        *,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        urls: Sequence[str] | None = None,
        text_contents: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        skip_if_exists: bool = True,
        progress: Progress | None = None,
    ) -> ContentResult:
        """Insert many: ``contents`` (dicts of `add_content`'s arguments) and ``paths``,
        ``urls``, ``text_contents`` (each with ``metadata``), embedded together in
        batches."""
        return self._run(
            self._add_contents(
                contents,
                paths,
                urls,
                text_contents,
                metadata,
                include,
                exclude,
                skip_if_exists,
                progress,
            )
        )

    async def aadd_contents(
        self,
        contents: Sequence[dict[str, Any]] | None = None,
        *,
        paths: Sequence[str | os.PathLike[str]] | None = None,
        urls: Sequence[str] | None = None,
        text_contents: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        skip_if_exists: bool = True,
        progress: Progress | None = None,
    ) -> ContentResult:
        return await self._arun(
            self._add_contents(
                contents,
                paths,
                urls,
                text_contents,
                metadata,
                include,
                exclude,
                skip_if_exists,
                progress,
            )
        )

    add_contents_async = aadd_contents

    async def _add_content(
        self,
        name: str | None,
        description: str | None,
        path: Any,
        url: str | None,
        text_content: str | None,
        metadata: dict[str, Any] | None,
        include: Sequence[str] | None,
        exclude: Sequence[str] | None,
        skip_if_exists: bool,
        progress: Progress | None,
    ) -> ContentResult:
        sources, skipped = await _read(
            name, description, path, url, text_content, metadata, include, exclude
        )
        result = await self._insert(sources, skip_if_exists, progress)
        result.skipped += skipped
        return result

    async def _add_contents(
        self,
        contents: Sequence[dict[str, Any]] | None,
        paths: Sequence[Any] | None,
        urls: Sequence[str] | None,
        text_contents: Sequence[str] | None,
        metadata: dict[str, Any] | None,
        include: Sequence[str] | None,
        exclude: Sequence[str] | None,
        skip_if_exists: bool,
        progress: Progress | None,
    ) -> ContentResult:
        sources: list[Source] = []
        skipped: list[str] = []
        for index, content in enumerate(contents or ()):
            where = f"contents[{index}]"
            if not isinstance(content, dict):
                raise InvalidInputError(
                    f"expected a dict of add_content's arguments, got {type(content).__name__}",
                    field=where,
                )
            unknown = set(content) - set(_CONTENT_ARGUMENTS)
            if unknown:
                raise InvalidInputError(
                    f"unknown argument(s) {', '.join(sorted(unknown))}", field=where
                )
            arguments = {key: content.get(key) for key in _CONTENT_ARGUMENTS}
            arguments["include"] = arguments["include"] or include
            arguments["exclude"] = arguments["exclude"] or exclude
            found, missed = await _read(**arguments, where=f"{where}.")
            sources += found
            skipped += missed
        for kind, values in (("path", paths), ("url", urls), ("text_content", text_contents)):
            for value in values or ():
                found, missed = await _read(
                    None, None, **{kind: value}, metadata=metadata, include=include, exclude=exclude
                )
                sources += found
                skipped += missed
        result = await self._insert(sources, skip_if_exists, progress)
        result.skipped += skipped
        return result

    def _version(self, source: Source) -> str:
        """The hash of a document version: what it says and how it is chunked."""
        key: list[Any] = [source.text, source.name, source.metadata, source.kind]
        key += [self.chunk_size, self.chunk_overlap]
        return content_hash(json.dumps(key, sort_keys=True, ensure_ascii=False, default=str))

    async def _stored_versions(self, store: str, ids: list[str]) -> dict[str, list[str]]:
        stored: dict[str, list[str]] = {}
        for start in range(0, len(ids), _LOOKUP):
            out = await self.runtime.acall_method(
                store, "documents", {"document_ids": ids[start : start + _LOOKUP]}
            )
            for document in out["documents"]:
                stored[document["document_id"]] = document["content_hashes"]
        return stored

    async def _split(self, source: Source) -> list[str]:
        """The document's chunks: `split_text`'s, Markdown first cut at its headings (each
        section starts a chunk, small neighbours merged up to ``chunk_size``)."""
        sections = markdown_sections(source.text) if source.kind == "markdown" else [source.text]
        chunks: list[str] = []
        merged = ""
        for section in sections:
            if merged and _size(merged) + _size(section) <= self.chunk_size:
                merged += section
                continue
            if merged:
                chunks.append(merged)
            merged = ""
            if _size(section) <= self.chunk_size:
                merged = section
            else:
                inputs = {
                    "text": section,
                    "chunk_size": self.chunk_size,
                    "chunk_overlap": self.chunk_overlap,
                }
                chunks += (await self.runtime.acall("split_text", inputs))["chunks"]
        if merged:
            chunks.append(merged)
        return [c.strip() for c in chunks if c.strip()]

    async def _insert(
        self, sources: list[Source], skip_if_exists: bool, progress: Progress | None
    ) -> ContentResult:
        store, embedder = await self._ready()
        runtime = self.runtime
        result = ContentResult()
        unique = list({s.document_id: s for s in sources}.values())  # the last one given wins
        versions = {s.document_id: self._version(s) for s in unique}
        stored = await self._stored_versions(store, list(versions))
        # (source, version, chunk texts, whether an older version is stored)
        todo: list[tuple[Source, str, list[str], bool]] = []
        for source in unique:
            version, old = versions[source.document_id], stored.get(source.document_id)
            if skip_if_exists and old == [version]:
                result.skipped.append(source.document_id)
                continue
            texts = await self._split(source)
            if not texts and old is None:
                result.skipped.append(source.document_id)  # nothing to read (a scanned PDF)
                continue
            todo.append((source, version, texts, old is not None))
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
        in_flight: list[tuple[Source, str, list[str], bool]] = []
        try:
            for start in range(0, max(len(flat), 1), self.batch_size):
                batch = flat[start : start + self.batch_size]
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
                    writing = asyncio.ensure_future(self._write(store, in_flight, done_vectors))
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
        self,
        store: str,
        documents: list[tuple[Source, str, list[str], bool]],
        vectors: list[list[list[float]]],
    ) -> int:
        chunks: list[dict[str, Any]] = []
        emptied: list[str] = []  # stored documents that now read as nothing
        for (source, version, texts, _), embedded in zip(documents, vectors, strict=True):
            if not texts:
                emptied.append(source.document_id)
            for index, (text, vector) in enumerate(zip(texts, embedded, strict=True)):
                chunks.append(
                    {
                        "id": chunk_id(source.document_id, index),
                        "document_id": source.document_id,
                        "text": text,
                        "vector": vector,
                        "content_hash": version,
                        "metadata": {"name": source.name, **source.metadata, "chunk": index},
                    }
                )
        await self.runtime.acall_method(
            store, "replace_documents", {"chunks": chunks, "document_ids": emptied}
        )
        return len(chunks)

    # -- searching ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        max_results: int | None = None,
        filters: dict[str, Any] | None = None,
        search_type: SearchType | None = None,
    ) -> list[Document]:
        """The chunks most relevant to ``query``, best first: at most ``max_results``
        (default `max_results`), passing ``filters`` (metadata filters in the language of
        `ferrule_kit.vectors`: ``{"year": {"$gte": 2020}, "topic": "sessions"}``).
        ``search_type``: ``"vector"``, ``"keyword"`` or ``"hybrid"`` for this search
        (default: the vector db's)."""
        return self._run(self._search(query, max_results, filters, search_type))

    async def asearch(
        self,
        query: str,
        max_results: int | None = None,
        filters: dict[str, Any] | None = None,
        search_type: SearchType | None = None,
    ) -> list[Document]:
        return await self._arun(self._search(query, max_results, filters, search_type))

    #: Agno's name of `asearch`.
    async_search = asearch

    async def _search(
        self,
        query: str,
        max_results: int | None,
        filters: dict[str, Any] | None,
        search_type: str | None = None,
    ) -> list[Document]:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("must be a non-empty string", field="query")
        search_type = search_type or self.search_type
        if search_type not in SEARCH_TYPES:
            raise InvalidInputError(
                f"expected one of {', '.join(SEARCH_TYPES)}, got {search_type!r}",
                field="search_type",
            )
        top_k = self.max_results if max_results is None else max_results
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            raise InvalidInputError(
                f"must be an integer from 1 to {MAX_TOP_K}", field="max_results"
            )
        store, embedder = await self._ready()
        if search_type == "keyword":
            matches = await self._keyword_matches(store, query, top_k, filters)
        elif search_type == "vector":
            matches = await self._vector_matches(store, embedder, query, top_k, filters)
        else:
            # Each ranking's candidates, fused by reciprocal rank: a chunk high in both
            # comes first, one found by words alone (a name, a rare term) still shows.
            candidates = min(max(top_k * 4, HYBRID_CANDIDATES), MAX_TOP_K)
            by_vector, by_keyword = await asyncio.gather(
                self._vector_matches(store, embedder, query, candidates, filters),
                self._keyword_matches(store, query, candidates, filters),
            )
            matches = fuse([by_vector, by_keyword])[:top_k]
        return [
            Document(
                content=m["text"],
                id=m["id"],
                name=m["metadata"].get("name"),
                meta_data=m["metadata"],
                content_id=m["document_id"],
                score=m["score"],
            )
            for m in matches
        ]

    async def _vector_matches(
        self, store: str, embedder: str, query: str, top_k: int, filters: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        out = await self.runtime.acall_method(
            embedder, "embed", {"texts": [query], "input_type": "query"}
        )
        found = await self.runtime.acall_method(
            store, "search", {"vector": out["vectors"][0], "top_k": top_k, "filter": filters}
        )
        matches: list[dict[str, Any]] = found["matches"]
        return matches

    async def _keyword_matches(
        self, store: str, query: str, top_k: int, filters: dict[str, Any] | None
    ) -> list[dict[str, Any]]:
        found = await self.runtime.acall_method(
            store, "keyword_search", {"query": query, "top_k": top_k, "filter": filters}
        )
        matches: list[dict[str, Any]] = found["matches"]
        return matches

    async def _references(
        self, query: str, max_results: int | None, filters: dict[str, Any] | None
    ) -> MessageReferences:
        """A search as the references a run records."""
        started = time.perf_counter()
        documents = await self.asearch(query, max_results, filters)
        return MessageReferences(
            query, [d.to_dict() for d in documents], round(time.perf_counter() - started, 4)
        )

    # -- removing ----------------------------------------------------------------------------

    def remove_content_by_id(self, content_id: str) -> int:
        """Remove a document (a `Document.content_id`: a file's ``file:`` path, ``url:...``,
        ``text:<name>``) with all its chunks; returns the chunks removed."""
        return self._run(self._delete({"document_ids": [content_id]}))

    async def aremove_content_by_id(self, content_id: str) -> int:
        return await self._arun(self._delete({"document_ids": [content_id]}))

    def remove_vectors_by_metadata(self, metadata: dict[str, Any]) -> int:
        """Remove the chunks whose metadata pass ``metadata`` (a filter); returns how many."""
        return self._run(self._delete({"filter": metadata}))

    def remove_vectors_by_name(self, name: str) -> int:
        """Remove the chunks of the documents named ``name``; returns how many."""
        return self._run(self._delete({"filter": {"name": name}}))

    def remove_all_content(self) -> int:
        """Remove every chunk this knowledge base inserted; returns how many."""
        return self._run(self._delete({"filter": {"chunk": {"$exists": True}}}))

    async def _delete(self, selector: dict[str, Any]) -> int:
        store, _ = await self._ready()
        deleted: int = (await self.runtime.acall_method(store, "delete", selector))["deleted"]
        return deleted


#: What each of `Knowledge.add_contents`'s ``contents`` may say.
_CONTENT_ARGUMENTS = (
    "name",
    "description",
    "path",
    "url",
    "text_content",
    "metadata",
    "include",
    "exclude",
)


async def _read(
    name: str | None,
    description: str | None,
    path: Any = None,
    url: str | None = None,
    text_content: str | None = None,
    metadata: dict[str, Any] | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    where: str = "",
) -> tuple[list[Source], list[str]]:
    """The documents one content names (exactly one of ``path``, ``url`` and
    ``text_content``), and the files of a folder skipped as unreadable."""
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
        return read_path(path, name, meta, include or (), exclude or ())
    if url is not None:
        return [await read_url(url, name, meta)], []
    assert text_content is not None
    return [read_text(text_content, name, meta)], []


def _record(
    result: ContentResult, documents: list[tuple[Source, str, list[str], bool]], chunks: int
) -> None:
    """Count a stored group of documents as added or replaced."""
    result.chunks += chunks
    for source, _, _, existed in documents:
        (result.replaced if existed else result.added).append(source.document_id)


def fuse(rankings: Sequence[list[dict[str, Any]]], k: int = RRF_K) -> list[dict[str, Any]]:
    """Reciprocal rank fusion: each match scores ``sum(1 / (k + rank))`` over the rankings
    it is in (rank from 1); best first, its ``score`` that sum."""
    scores: dict[str, float] = {}
    best: dict[str, dict[str, Any]] = {}
    for ranking in rankings:
        for rank, match in enumerate(ranking, 1):
            scores[match["id"]] = scores.get(match["id"], 0.0) + 1.0 / (k + rank)
            best.setdefault(match["id"], match)
    order = sorted(scores, key=lambda ident: -scores[ident])
    return [{**best[ident], "score": scores[ident]} for ident in order]


def chunk_id(document_id: str, index: int) -> str:
    """The id of a document's ``index``-th chunk: stable, so a replaced document's chunks
    keep their ids."""
    ident = f"{document_id}#{index}"
    if len(ident) <= 512:
        return ident
    return f"{content_hash(document_id)}#{index}"


def markdown_sections(text: str) -> list[str]:
    """Markdown cut before each heading (``#`` to ``######`` at a line's start, outside
    fenced code), each piece keeping its heading."""
    sections: list[str] = []
    current: list[str] = []
    fenced = False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and _HEADING.match(line) and current:
            sections.append("".join(current))
            current = []
        current.append(line)
    if current:
        sections.append("".join(current))
    return sections


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _metadata(metadata: Any, description: str | None) -> dict[str, Any]:
    if metadata is None:
        return {} if description is None else {"description": description}
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"expected a dict, got {type(metadata).__name__}", field="metadata")
    if description is not None:
        return {**metadata, "description": description}
    return dict(metadata)
