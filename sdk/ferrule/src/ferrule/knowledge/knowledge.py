"""`Knowledge`, a knowledge base's public face: its components' lifecycle and its async
methods, each with a sync twin derived through the runtime's bridge (`ferrule._bridge`).

Documents are chunked by ``split_text`` (`chunking`), embedded by an embedder component
and kept in a vector-store component (`ingest`), searched by meaning, words or both
(`search`): RAG.

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

Files are read in a worker thread under `ReadLimits`; a bad file of a folder is a
`ReadFailure` in the result while the rest is inserted, a folder keeps to itself unless
``follow_symlinks``, and a URL is fetched only where ``http_request``'s address policy
allows (``FERRULE_HTTP_REQUEST_ALLOW``; see `ferrule.knowledge.readers`).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Sequence
from typing import Any

from ferrule_kernel import InvalidInputError

from .._bridge import Bridge, blocking, on_bridge_loop
from ..tools import Tool
from ..vectordb.distance import store_distance
from .document import ContentResult, Document, MessageReferences
from .embedder import MiniLMEmbedder
from .ingest import (
    CONTENT_ARGUMENTS,
    Chunking,
    IngestProgress,
    Progress,
    Read,
    insert,
    read_content,
)
from .readers import ReadLimits
from .search import check_search, search
from .vectordb import SearchType, SearchTypeName, SqliteVecDb, search_type_name

__all__ = ["IngestProgress", "Knowledge", "Progress", "ReadLimits"]


#: Ailoy 0.2's knowledge tool's name (`Knowledge.as_tool`), and its documents per search.
AILOY_TOOL = "retrieve-from-knowledge"
AILOY_TOP_K = 1


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
    call (progress moves after each; `ferrule.knowledge.ingest`). ``limits``: bounds on
    reading each file or download (`ReadLimits`: size, and a PDF's pages, text and time).
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
        batch_size: int = 16,
        limits: ReadLimits | None = None,
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
        if limits is not None and not isinstance(limits, ReadLimits):
            raise InvalidInputError(f"expected ReadLimits, got {limits!r}", field="limits")
        self.vector_db = vector_db
        self.embedder = embedder
        self.name, self.description = name, description
        self.max_results = max_results
        self.chunk_size, self.chunk_overlap = chunk_size, chunk_overlap
        self.batch_size = batch_size
        self.limits = limits if limits is not None else ReadLimits()
        self.search_type: str = getattr(vector_db, "search_type", "vector")
        self._runtime = runtime
        self._store: str | None = None
        self._embedder: str | None = None
        self._owned: list[str] = []
        self._lock: asyncio.Lock | None = None

    @classmethod
    def new_vector_store(cls, store: Any, embedding_model: Any, **options: Any) -> Knowledge:
        """Ailoy 0.2's spelling: the knowledge in a `ferrule.vector_store.VectorStore`,
        searched with a `ferrule.EmbeddingModel` (both on one runtime, and used, not owned:
        closing this knowledge deletes neither). ``options``: `Knowledge`'s."""
        for field, value in (("store", store), ("embedding_model", embedding_model)):
            if not isinstance(getattr(value, "name", None), str):
                raise InvalidInputError(
                    f"expected a defined {'VectorStore' if field == 'store' else 'EmbeddingModel'}"
                    f", got {value!r}",
                    field=field,
                )
        if store.runtime is not embedding_model.runtime:
            raise InvalidInputError(
                "the store and the embedding model must be on one runtime", field="embedding_model"
            )
        return cls(store.name, embedding_model.name, runtime=store.runtime, **options)

    def __repr__(self) -> str:
        return f"Knowledge(vector_db={self.vector_db!r}, embedder={self.embedder!r})"

    # -- where it runs ---------------------------------------------------------------------

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            from ..shared_runtime import default_runtime

            self._runtime = default_runtime()
        return self._runtime

    @property
    def sync_bridge(self) -> Bridge:
        """Where this knowledge's async methods run: its runtime's loop."""
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    def adopt_runtime(self, runtime: Any) -> None:
        """An agent given this knowledge lends its runtime, unless one is chosen already."""
        if self._runtime is None:
            self._runtime = runtime

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
                distance = getattr(self.vector_db, "distance", None)
                if distance is not None:  # Agno's Distance names the store's metric its way
                    distance = store_distance(distance)
                if distance is None and isinstance(self.vector_db, str):
                    # a store its owner defined keeps the metric its collection has
                    have = await runtime.acall_method(store, "info", {})
                    distance = have["distance"] if have["exists"] else None
                distance = distance or info["distance"]
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

    async def _forget(self, name: str) -> None:
        if name in self._owned:
            self._owned.remove(name)
            await self.runtime.adelete(name)

    @on_bridge_loop
    async def aclose(self) -> None:
        """Delete the components this knowledge defined (a store keeps its data)."""
        owned, self._owned = self._owned, []
        self._store = self._embedder = None
        for name in reversed(owned):
            await self.runtime.adelete(name)

    _close = blocking(aclose)

    def close(self) -> None:
        if self._owned:  # nothing defined: no loop to start
            self._close()

    close.__doc__ = aclose.__doc__

    def __enter__(self) -> Knowledge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inserting --------------------------------------------------------------------------

    @on_bridge_loop
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
        follow_symlinks: bool = False,
    ) -> ContentResult:
        """Insert one content: a file or folder (``path``; a folder is read recursively,
        its files chosen by the ``include`` / ``exclude`` globs), a ``url``, or
        ``text_content``. ``name`` names it (a text given by name is replaced when added
        again by that name); ``metadata`` goes on every chunk, for ``filters`` (and
        ``description``, as its ``"description"``).
        ``skip_if_exists``: skip documents stored unchanged (False re-embeds them).
        ``follow_symlinks``: read a folder's links to files outside it (by default such a
        link is a `ReadFailure`). ``progress``: told how the embedding goes, as
        ``progress(done, total)`` (chunks), or ``progress(IngestProgress)`` for a callable
        of one argument (documents and chunks; `Progress`).
        Returns what was added, replaced, skipped and, for a folder's bad files, failed."""
        read = await read_content(
            name,
            description,
            path,
            url,
            text_content,
            metadata,
            include,
            exclude,
            limits=self.limits,
            follow_symlinks=follow_symlinks,
        )
        return await self._insert(read, skip_if_exists, progress)

    add_content = blocking(aadd_content)
    #: Agno's name of `aadd_content`.
    add_content_async = aadd_content

    @on_bridge_loop
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
        follow_symlinks: bool = False,
    ) -> ContentResult:
        """Insert many: ``contents`` (dicts of `add_content`'s arguments) and ``paths``,
        ``urls``, ``text_contents`` (each with ``metadata``), embedded together in
        batches."""
        read = Read()
        for index, content in enumerate(contents or ()):
            where = f"contents[{index}]"
            if not isinstance(content, dict):
                raise InvalidInputError(
                    f"expected a dict of add_content's arguments, got {type(content).__name__}",
                    field=where,
                )
            unknown = set(content) - set(CONTENT_ARGUMENTS)
            if unknown:
                raise InvalidInputError(
                    f"unknown argument(s) {', '.join(sorted(unknown))}", field=where
                )
            arguments = {key: content.get(key) for key in CONTENT_ARGUMENTS}
            arguments["include"] = arguments["include"] or include
            arguments["exclude"] = arguments["exclude"] or exclude
            read.add(
                await read_content(
                    **arguments,
                    limits=self.limits,
                    follow_symlinks=follow_symlinks,
                    where=f"{where}.",
                )
            )
        given: tuple[tuple[str, Sequence[Any] | None], ...] = (
            ("path", paths),
            ("url", urls),
            ("text_content", text_contents),
        )
        for kind, values in given:
            for value in values or ():
                one: dict[str, Any] = {kind: value}
                read.add(
                    await read_content(
                        None,
                        None,
                        **one,
                        metadata=metadata,
                        include=include,
                        exclude=exclude,
                        limits=self.limits,
                        follow_symlinks=follow_symlinks,
                    )
                )
        return await self._insert(read, skip_if_exists, progress)

    add_contents = blocking(aadd_contents)
    add_contents_async = aadd_contents

    async def _insert(
        self, read: Read, skip_if_exists: bool, progress: Progress | None
    ) -> ContentResult:
        store, embedder = await self._ready()
        chunking = Chunking(self.chunk_size, self.chunk_overlap, self.batch_size)
        result = await insert(
            self.runtime, store, embedder, read.sources, chunking, skip_if_exists, progress
        )
        result.skipped += read.skipped
        result.failed += read.failed
        return result

    # -- searching ---------------------------------------------------------------------------

    @on_bridge_loop
    async def asearch(
        self,
        query: str,
        max_results: int | None = None,
        filters: dict[str, Any] | None = None,
        search_type: SearchType | SearchTypeName | None = None,
    ) -> list[Document]:
        """The chunks most relevant to ``query``, best first: at most ``max_results``
        (default `max_results`), passing ``filters`` (metadata filters in the language of
        `ferrule_kit.vectors`: ``{"year": {"$gte": 2020}, "topic": "sessions"}``).
        ``search_type``: ``"vector"``, ``"keyword"`` or ``"hybrid"`` for this search
        (default: the vector db's)."""
        top_k = self.max_results if max_results is None else max_results
        kind = search_type_name(search_type) if search_type else self.search_type
        check_search(query, top_k, kind)
        store, embedder = await self._ready()
        return await search(self.runtime, store, embedder, query, top_k, filters, kind)

    search = blocking(asearch)
    #: Agno's name of `asearch`.
    async_search = asearch

    async def areferences(
        self, query: str, max_results: int | None, filters: dict[str, Any] | None
    ) -> MessageReferences:
        """A search as the references a run records."""
        started = time.perf_counter()
        documents = await self.asearch(query, max_results, filters)
        return MessageReferences(
            query, [d.to_dict() for d in documents], round(time.perf_counter() - started, 4)
        )

    # -- Ailoy 0.2 ---------------------------------------------------------------------------

    @on_bridge_loop
    async def retrieve(self, query: str, config: Any = None) -> list[Document]:
        """Ailoy 0.2's ``await knowledge.retrieve(query, KnowledgeConfig(top_k=...))``: the
        ``top_k`` documents nearest ``query``, best first (``text``, ``title``, ``id``).
        Without a config, or a ``top_k`` of None, one document, as Ailoy's default
        `KnowledgeConfig` asks."""
        top_k = getattr(config, "top_k", None) if config is not None else None
        if config is not None and not hasattr(config, "top_k"):
            raise InvalidInputError(
                f"expected a KnowledgeConfig, got {type(config).__name__}", field="config"
            )
        return await self.asearch(query, AILOY_TOP_K if top_k is None else top_k)

    def as_tool(self) -> Tool:
        """This knowledge as a tool a model may call (Ailoy 0.2's): ``retrieve-from-knowledge`` with a
        ``query``, answering the nearest documents as Ailoy shapes them (``id``,
        ``text``, ``title``), one by default as there."""

        async def retrieve(arguments: dict[str, Any], context: Any) -> list[dict[str, Any]]:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                raise InvalidInputError("must be a non-empty string", field="query")
            return [document.to_ailoy() for document in await self.retrieve(query)]

        return Tool(
            AILOY_TOOL,
            "Retrieve the relevant context from knowledge base.",
            {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "The input query to search for the relevant context.",
                    }
                },
                "required": ["query"],
            },
            retrieve,
        )

    # -- removing ----------------------------------------------------------------------------

    @on_bridge_loop
    async def aremove_content_by_id(self, content_id: str) -> int:
        """Remove a document (a `Document.content_id`: a file's ``file:`` path, ``url:...``,
        ``text:<name>``) with all its chunks; returns the chunks removed."""
        return await self._delete({"document_ids": [content_id]})

    remove_content_by_id = blocking(aremove_content_by_id)

    @on_bridge_loop
    async def aremove_vectors_by_metadata(self, metadata: dict[str, Any]) -> int:
        """Remove the chunks whose metadata pass ``metadata`` (a filter); returns how many."""
        return await self._delete({"filter": metadata})

    remove_vectors_by_metadata = blocking(aremove_vectors_by_metadata)

    @on_bridge_loop
    async def aremove_vectors_by_name(self, name: str) -> int:
        """Remove the chunks of the documents named ``name``; returns how many."""
        return await self._delete({"filter": {"name": name}})

    remove_vectors_by_name = blocking(aremove_vectors_by_name)

    @on_bridge_loop
    async def aremove_all_content(self) -> int:
        """Remove every chunk this knowledge base inserted; returns how many."""
        return await self._delete({"filter": {"chunk": {"$exists": True}}})

    remove_all_content = blocking(aremove_all_content)

    async def _delete(self, selector: dict[str, Any]) -> int:
        store, _ = await self._ready()
        deleted: int = (await self.runtime.acall_method(store, "delete", selector))["deleted"]
        return deleted
