"""`Knowledge`, a knowledge base's public face (Agno's ``agno.knowledge.knowledge``): its
components' lifecycle and its async methods, each with a sync twin derived through the
runtime's bridge (`ferrule._bridge`).

Documents are read (by ferrule's readers, or a reader of Agno's given as ``reader=`` or in
``readers``), chunked by ``split_text`` (`chunking`; Markdown at its headings), embedded by
an embedder component and kept in a vector-store component (`ingest`), searched by meaning,
words or both (`search`): RAG. With a ``contents_db``, each content it was given is a row
there, with how its ingestion went (`ferrule.knowledge.contents`).

    from ferrule.knowledge.knowledge import Knowledge
    from ferrule.vectordb.sqlite_vec import SqliteVecDb

    knowledge = Knowledge(vector_db=SqliteVecDb(db_file="tmp/kb.db"))
    knowledge.insert(path="docs/", include=["*.md"], metadata={"source": "docs"})
    for doc in knowledge.search("how do I resume a session?", max_results=3):
        print(doc.name, doc.content)

Inserting again is cheap: each document's chunks carry the hash of the document version
(its text, metadata and chunking), so by default (``upsert=True``) an unchanged document is
left as stored and a changed one has all its old chunks replaced in one transaction of the
store (`replace_documents`): readers see the old version or the new one, and a process
killed mid-insert loses no document already written. ``skip_if_exists=True`` (or
``upsert=False``) leaves every stored document as it is, changed or not; ``reembed=True``
embeds even unchanged ones again. Before anything is written the store's collection is
checked against the embedder's dimension (`ferrule_kit.embeddings.vectors.DimensionMismatchError`). A
store or embedder that is down ends the call with the one typed error its component raises.

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
from ..vectordb.distance import store_distance
from .chunking import chunk_id
from .content import ContentAuth
from .contents import KnowledgeContents, check_contents_db
from .document import ContentResult, Document, MessageReferences
from .embedder import MiniLMEmbedder
from .ingest import Chunking, IngestProgress, Mode, Progress, Read, insert, read_content
from .knowledge_context import KnowledgeContext
from .many import ContentDict, KnowledgeContentOrigin, contents_of
from .readers import ReadLimits
from .search import check_search, search
from .sources import ReaderChoice, check_reader
from .vectordb import SearchType, SearchTypeName, SqliteVecDb, search_type_name

__all__ = [
    "AILOY_TOOL",
    "AILOY_TOP_K",
    "ContentDict",
    "IngestProgress",
    "Knowledge",
    "KnowledgeContentOrigin",
    "Progress",
]

NO_REMOTE = (
    "remote content sources (S3, GCS, SharePoint, GitHub, Azure Blob) are not read by "
    "ferrule's Knowledge: fetch the files and give their path, or give a url"
)
NO_TOPICS = (
    "topics are read by Agno's Arxiv and Wikipedia readers, from the internet; ferrule "
    "ships neither: give the documents by path, url or text_content"
)
#: Ailoy 0.2's knowledge tool's name, and its documents per search
#: (`ferrule.knowledge.ailoy_knowledge.AiloyKnowledge`).
AILOY_TOOL = "retrieve-from-knowledge"
AILOY_TOP_K = 1
#: Chunks read per ``get`` while re-writing a document's metadata (`patch_content`).
_PAGE = 256


def _refuse_remote(value: Any, field: str, message: str) -> None:
    if value not in (None, [], ()):
        raise InvalidInputError(message, field=field)


class Knowledge(KnowledgeContents, KnowledgeContext):
    """A knowledge base: ``Knowledge(vector_db=..., contents_db=...)``.

    ``name`` / ``description``: what it is (its contents' rows are ``linked_to`` its name).
    ``vector_db``: a `ferrule.vectordb` store (`SqliteVecDb`, the default, `PgVector`,
    `ChromaDb`...) or a store component's name. ``contents_db``: a db of `ferrule.db` that
    lists what was added (`get_content`). ``max_results``: what `search` returns by
    default. ``readers``: readers of one's own (``{"pdf": PDFReader(...)}``), each reading
    the kinds of content it says it reads. ``isolate_vector_search``: chunks are marked
    ``linked_to`` this knowledge base's name and its searches see only those (for several
    knowledge bases in one store). ``content_sources`` (cloud storage) are refused.

    ferrule's own keywords: ``embedder`` (a `ferrule.knowledge.embedder` embedder, a
    defined embedder component's name, or None for the vector db's ``embedder`` or else
    the offline MiniLM), ``runtime`` (default: the runtime of the first agent given this
    knowledge, else the process's shared one), ``chunk_size`` / ``chunk_overlap`` (of
    `split_text`, in UTF-8 bytes; all-MiniLM-L6-v2 reads 256 tokens, about 1,000 bytes of
    English), ``batch_size`` (chunks per embedder call; progress moves after each),
    ``limits`` (`ReadLimits`: bounds on reading each file or download).
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        vector_db: Any = None,
        contents_db: Any = None,
        max_results: int = 10,
        readers: dict[str, Any] | None = None,
        content_sources: Any = None,
        isolate_vector_search: bool = False,
        embedder: Any = None,
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
                f"vector_db must be a vector db of ferrule.vectordb (SqliteVecDb, PgVector, "
                f"ChromaDb...) or a vector store component's name, got {vector_db!r}",
                field="vector_db",
            )
        if embedder is None:
            embedder = getattr(vector_db, "embedder", None) or MiniLMEmbedder()
        elif not isinstance(embedder, str) and not getattr(embedder, "component_type", None):
            raise InvalidInputError(
                "embedder must be an embedder of ferrule.knowledge.embedder (MiniLMEmbedder, "
                "SentenceTransformerEmbedder, OpenAIEmbedder, GeminiEmbedder) or an embedder "
                f"component's name, got {embedder!r}",
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
        _refuse_remote(content_sources, "content_sources", NO_REMOTE)
        if not isinstance(isolate_vector_search, bool):
            raise InvalidInputError("expected True or False", field="isolate_vector_search")
        if isolate_vector_search and not name:
            raise InvalidInputError(
                "isolate_vector_search marks chunks with this knowledge base's name: give "
                "it a name",
                field="name",
            )
        for key, reader in (readers or {}).items() if isinstance(readers, dict) else ():
            check_reader(reader, f"readers[{key!r}]")
        self.name, self.description = name, description
        self.vector_db = vector_db
        self.contents_db = check_contents_db(contents_db)
        self.max_results = max_results
        self.readers = readers
        self.content_sources = None
        self.isolate_vector_search = isolate_vector_search
        self.embedder = embedder
        self.chunk_size, self.chunk_overlap = chunk_size, chunk_overlap
        self.batch_size = batch_size
        self.limits = limits if limits is not None else ReadLimits()
        self.search_type: str = getattr(vector_db, "search_type", "vector")
        self._runtime = runtime
        self._store: str | None = None
        self._embedder: str | None = None
        self._owned: list[str] = []
        self._lock: asyncio.Lock | None = None
        self.known_filter_keys: set[str] = set()
        self.construct_readers()

    @classmethod
    def new_vector_store(cls, store: Any, embedding_model: Any, **options: Any) -> Knowledge:
        """Ailoy 0.2's constructor: `ferrule.knowledge.ailoy_knowledge.AiloyKnowledge`."""
        from .ailoy_knowledge import AiloyKnowledge

        return AiloyKnowledge.of(store, embedding_model, **options)

    def __repr__(self) -> str:
        return f"Knowledge(name={self.name!r}, vector_db={self.vector_db!r})"

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
    async def ainsert(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        path: str | os.PathLike[str] | None = None,
        url: str | None = None,
        text_content: str | None = None,
        metadata: dict[str, Any] | None = None,
        topics: list[str] | None = None,
        remote_content: Any = None,
        reader: Any = None,
        include: Sequence[str] | None = None,
        exclude: Sequence[str] | None = None,
        upsert: bool = True,
        skip_if_exists: bool = False,
        auth: ContentAuth | None = None,
        progress: Progress | None = None,
        follow_symlinks: bool = False,
        reembed: bool = False,
    ) -> ContentResult:
        """Insert one content: a file or folder (``path``; a folder is read recursively,
        its files chosen by the ``include`` / ``exclude`` globs), a ``url``, or
        ``text_content``. ``name`` names it (a text given by name is replaced when added
        again by that name); ``metadata`` goes on every chunk, for ``filters`` (and
        ``description``, as its ``"description"``). ``reader``: a reader of Agno's that
        reads and cuts it (its chunks stored as it cuts them); ``auth``: a PDF's password.
        ``upsert`` / ``skip_if_exists`` / ``reembed``: what becomes of documents stored
        already (the module docstring). ``follow_symlinks``: read a folder's links to
        files outside it (by default such a link is a `ReadFailure`). ``progress``: told
        how the embedding goes, as ``progress(done, total)`` (chunks), or
        ``progress(IngestProgress)`` for a callable of one argument (`Progress`).
        Returns what was added, replaced, skipped and, for a folder's bad files, failed."""
        _refuse_remote(topics, "topics", NO_TOPICS)
        _refuse_remote(remote_content, "remote_content", NO_REMOTE)
        read = await read_content(
            name,
            description,
            path=path,
            url=url,
            text_content=text_content,
            metadata=self._marked(metadata),
            include=include,
            exclude=exclude,
            limits=self.limits,
            follow_symlinks=follow_symlinks,
            choice=self._choice(reader, auth),
        )
        return await self._insert(read, _mode(upsert, skip_if_exists, reembed), progress)

    insert = blocking(ainsert)
    #: Agno's earlier names of `ainsert` / `insert`, and ferrule's.
    add_content_async = ainsert
    aadd_content = ainsert
    add_content = blocking(ainsert)

    @on_bridge_loop
    async def ainsert_many(self, *args: Any, **kwargs: Any) -> ContentResult:
        """Insert many, embedded together in batches: a list of dicts of `insert`'s
        arguments (each its own ``upsert`` / ``skip_if_exists``), or ``paths``, ``urls``,
        ``text_contents`` (named ``<name>_<i>``, or ``text_content_<i>``) with one
        ``name``, ``description``, ``metadata``, ``reader``, ``include``, ``exclude``,
        ``upsert``, ``skip_if_exists`` and ``auth`` for all; and `insert`'s
        ``progress``, ``follow_symlinks`` and ``reembed``."""
        progress = kwargs.pop("progress", None)
        follow_symlinks = bool(kwargs.pop("follow_symlinks", False))
        reembed = bool(kwargs.pop("reembed", False))
        result = ContentResult()
        for (upsert, skip), items in contents_of(args, kwargs).items():
            read = Read()
            for where, item in items:
                _refuse_remote(item.pop("topics", None), f"{where}topics", NO_TOPICS)
                _refuse_remote(
                    item.pop("remote_content", None), f"{where}remote_content", NO_REMOTE
                )
                choice = self._choice(item.pop("reader", None), item.pop("auth", None))
                item["metadata"] = self._marked(item.get("metadata"))
                read.add(
                    await read_content(
                        **item,
                        limits=self.limits,
                        follow_symlinks=follow_symlinks,
                        where=where,
                        choice=choice,
                    )
                )
            result.merge(await self._insert(read, _mode(upsert, skip, reembed), progress))
        return result

    insert_many = blocking(ainsert_many)
    add_contents_async = ainsert_many
    aadd_contents = ainsert_many
    add_contents = blocking(ainsert_many)

    def _marked(self, metadata: Any) -> Any:
        """``metadata``, marked ``linked_to`` this knowledge base when it isolates its
        searches."""
        if not self.isolate_vector_search or not isinstance(metadata, dict | None):
            return metadata
        return {**(metadata or {}), "linked_to": self.name}

    def _choice(self, reader: Any, auth: Any) -> ReaderChoice:
        check_reader(reader)
        if auth is not None and not isinstance(auth, ContentAuth):
            raise InvalidInputError(
                f"expected a ContentAuth, got {type(auth).__name__}", field="auth"
            )
        password = auth.password if auth is not None else None
        readers = dict(self.get_readers())
        if password is not None and reader is None:
            # a PDF's password needs a reader that takes one: ferrule's PDFReader
            readers.setdefault("pdf", self.reader_of("pdf"))
        return ReaderChoice(reader, readers, password)

    async def _insert(self, read: Read, mode: Mode, progress: Progress | None) -> ContentResult:
        store, embedder = await self._ready()
        await self._rows_read(read.sources, read.skipped, read.failed)
        chunking = Chunking(self.chunk_size, self.chunk_overlap, self.batch_size)
        result = ContentResult()
        error: BaseException | None = None
        try:
            await insert(
                self.runtime,
                store,
                embedder,
                read.sources,
                chunking=chunking,
                mode=mode,
                progress=progress,
                result=result,
            )
        except BaseException as exc:
            error = exc
            raise
        finally:
            stored = {*result.added, *result.replaced, *result.skipped}
            await self._rows_done(read.sources, stored, error)
        result.skipped += read.skipped
        result.failed += read.failed
        return result

    # -- searching ---------------------------------------------------------------------------

    @on_bridge_loop
    async def asearch(
        self,
        query: str,
        max_results: int | None = None,
        filters: Any = None,
        search_type: SearchType | SearchTypeName | None = None,
    ) -> list[Document]:
        """The chunks most relevant to ``query``, best first: at most ``max_results``
        (default `max_results`), passing ``filters`` (a dict in the stores' filter language,
        ``{"year": {"$gte": 2020}, "topic": "sessions"}``, or Agno's expressions: ``[EQ(...),
        IN(...)]``). ``search_type``: ``"vector"``, ``"keyword"`` or ``"hybrid"`` for this
        search (default: the vector db's). The vector db's ``reranker``, if any, orders
        what was found."""
        from ..filters import as_store_filter

        top_k = self.max_results if max_results is None else max_results
        kind = search_type_name(search_type) if search_type else self.search_type
        check_search(query, top_k, kind)
        where = as_store_filter(filters)
        if self.isolate_vector_search:
            own = {"linked_to": self.name}
            where = own if where is None else {"$and": [where, own]}
        store, embedder = await self._ready()
        found = await search(
            self.runtime, store, embedder, query, top_k=top_k, filters=where, search_type=kind
        )
        reranker = getattr(self.vector_db, "reranker", None)
        if reranker is not None and found:
            found = list(await asyncio.to_thread(reranker.rerank, query, found))
        return found

    search = blocking(asearch)
    #: Agno's earlier name of `asearch`.
    async_search = asearch

    async def areferences(
        self, query: str, max_results: int | None, filters: Any
    ) -> MessageReferences:
        """A search as the references a run records."""
        started = time.perf_counter()
        documents = await self.asearch(query, max_results, filters)
        return MessageReferences(
            query, [d.to_dict() for d in documents], round(time.perf_counter() - started, 4)
        )

    # -- removing ----------------------------------------------------------------------------

    @on_bridge_loop
    async def aremove_content_by_id(self, content_id: str) -> int:
        """Remove a content (a `Document.content_id`: a file's ``file:`` path, ``url:...``,
        ``text:<name>``) with all its chunks, and its row in the contents db; returns the
        chunks removed."""
        deleted = await self._delete({"document_ids": [content_id]})
        if self.contents_db is not None:
            await self._db("delete_knowledge_content", content_id)
        return deleted

    remove_content_by_id = blocking(aremove_content_by_id)

    @on_bridge_loop
    async def aremove_vector_by_id(self, id: str) -> bool:
        """Remove one chunk by its id; whether there was one."""
        return await self._delete({"ids": [id]}) > 0

    remove_vector_by_id = blocking(aremove_vector_by_id)

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
        """Remove every chunk this knowledge base inserted (those linked to it, when it
        isolates its searches) and its contents' rows; returns the chunks removed."""
        mine = {"linked_to": self.name} if self.isolate_vector_search else None
        deleted = await self._delete({"filter": mine or {"chunk": {"$exists": True}}})
        if self.contents_db is not None:
            rows, _ = await self._db("get_knowledge_contents", None, None, None, None, self.name)
            for row in rows:
                await self._db("delete_knowledge_content", row.id)
        return deleted

    remove_all_content = blocking(aremove_all_content)

    async def _delete(self, selector: dict[str, Any]) -> int:
        store, _ = await self._ready()
        deleted: int = (await self.runtime.acall_method(store, "delete", selector))["deleted"]
        return deleted

    async def _restamp(self, content_id: str, metadata: dict[str, Any]) -> None:
        """A document's chunks written again with ``metadata`` merged into theirs (their
        texts, vectors and version kept), in one transaction of the store."""
        store, _ = await self._ready()
        chunks: list[dict[str, Any]] = []
        while True:
            ids = [chunk_id(content_id, len(chunks) + i) for i in range(_PAGE)]
            got = await self.runtime.acall_method(
                store, "get", {"ids": ids, "include_vectors": True}
            )
            chunks += got["chunks"]
            if len(got["chunks"]) < _PAGE:
                break
        if chunks:
            for chunk in chunks:
                chunk["metadata"] = {**chunk["metadata"], **metadata}
            await self.runtime.acall_method(store, "replace_documents", {"chunks": chunks})


def _mode(upsert: bool, skip_if_exists: bool, reembed: bool) -> Mode:
    for field, value in (("upsert", upsert), ("skip_if_exists", skip_if_exists)):
        if not isinstance(value, bool):
            raise InvalidInputError("expected True or False", field=field)
    if reembed:
        return "reembed"
    if skip_if_exists or not upsert:
        return "keep"
    return "update"
