"""The `chroma_vector_store` component: `ferrule_kit.embeddings.vectors`' contract over a collection of
a Chroma server, through Chroma's own HTTP client.

What lives where. Chroma keeps each chunk's id, vector and text (its "document"); the
rest of the chunk (ferrule metadata, ``document_id``, ``content_hash``) is one JSON string
under the Chroma metadata key ``ferrule``, because ferrule's metadata is any JSON (nested
objects, lists, integers past 2**53) and Chroma's is flat scalars. ``document_id`` is also
a metadata key of its own, so deleting a document is one Chroma ``where``. The
collection's dimension and ferrule distance are in the collection's metadata.

Distances. Chroma's HNSW spaces are ``cosine`` (``1 - cos``, ferrule's), ``ip``
(``1 - a.b``: ferrule's ``dot`` distance ``-a.b`` is that minus one) and ``l2`` (squared:
ferrule's is the root). HNSW is approximate; small collections come back exact.

Filters. ferrule's filter language (`ferrule_kit.embeddings.vectorfilters`) is not Chroma's ``where``
(types compare differently, keys may be paths into nested objects, lists match), so a
filter is evaluated here on the chunks' metadata, and the chunks that pass reach Chroma
as the query's ``ids``: Chroma ranks only those.

Chroma has no transactions: ``replace_documents`` checks everything before writing, then
deletes the old chunks and writes the new ones; a reader in between may see neither.
There is no keyword search.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

import numpy as np
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.embeddings.vectorfilters import Filter
from ferrule_kit.embeddings.vectors import (
    Chunk,
    CountInput,
    DeleteInput,
    DocumentsInput,
    EnsureCollectionInput,
    GetInput,
    InfoInput,
    KeywordSearchInput,
    ReplaceDocumentsInput,
    SearchInput,
    UpsertInput,
    VectorStoreUnavailableError,
    check_collection,
    check_dimension,
    check_query_dimension,
    match,
    matches,
    no_keyword_search,
    score,
)

from .plugin import COMPONENT_TYPE, DEFAULT_URL, URL_ENV, ChromaAttributes

T = TypeVar("T")

#: ferrule distance -> Chroma HNSW space, and back.
SPACES = {"cosine": "cosine", "dot": "ip", "l2": "l2"}
DISTANCES = {space: distance for distance, space in SPACES.items()}
DIMENSION_KEY = "ferrule_dimension"
DISTANCE_KEY = "ferrule_distance"
CHUNK_KEY = "ferrule"
DOCUMENT_KEY = "document_id"
#: Rows per `get` page when a filter is evaluated over the collection.
PAGE = 5000


def parse_url(url: str) -> tuple[str, int, bool]:
    """``http(s)://host[:port]`` -> (host, port, ssl); anything else is refused."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise InvalidInputError(
            f"expected an http(s)://host:port URL of a Chroma server, got {url!r}", field="url"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InvalidInputError("a Chroma server URL has no path, query or fragment", field="url")
    ssl = parts.scheme == "https"
    return parts.hostname, port if port is not None else (443 if ssl else 80), ssl


def _encode(chunk: Chunk) -> dict[str, Any]:
    body = {
        "metadata": chunk.metadata,
        "document_id": chunk.document_id,
        "content_hash": chunk.content_hash,
    }
    metadata: dict[str, Any] = {CHUNK_KEY: json.dumps(body, ensure_ascii=False)}
    if chunk.document_id is not None:
        metadata[DOCUMENT_KEY] = chunk.document_id
    return metadata


def _decode(stored: dict[str, Any] | None) -> tuple[dict[str, Any], str | None, str | None]:
    """(metadata, document_id, content_hash) of a stored chunk. A record written by
    another Chroma client (no ``ferrule`` key) reads as its Chroma metadata."""
    if not stored or CHUNK_KEY not in stored:
        return dict(stored or {}), None, None
    body = json.loads(stored[CHUNK_KEY])
    return body["metadata"], body["document_id"], body["content_hash"]


class ChromaStore:
    """The contract's methods on a Chroma collection (the module docstring)."""

    def __init__(self, attributes: ChromaAttributes) -> None:
        self.collection = attributes.collection
        self.distance: str = attributes.distance
        url = attributes.url or os.environ.get(URL_ENV) or DEFAULT_URL
        self.host, self.port, self.ssl = parse_url(url)
        self.server = f"{'https' if self.ssl else 'http'}://{self.host}:{self.port}"
        self._tenant, self._database = attributes.tenant, attributes.database
        self._client: Any = None
        self._handle: Any = None  # the Chroma collection, once it exists
        self._lock = threading.Lock()
        if attributes.dimension is not None:
            self.ensure_collection(EnsureCollectionInput(attributes.dimension, attributes.distance))

    # -- the server ------------------------------------------------------------------------

    def _call(self, action: Callable[[], T]) -> T:
        """Run one exchange with the server; a server that cannot serve it ends the call
        with `VectorStoreUnavailableError` (ferrule's own errors pass through)."""
        try:
            return action()
        except FerruleError:
            raise
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise VectorStoreUnavailableError(
                f"{COMPONENT_TYPE} at {self.server} is unavailable: {reason}",
                store=COMPONENT_TYPE,
                collection=self.collection,
                server=self.server,
                reason=reason,
            ) from None

    def _connect(self) -> Any:
        if self._client is None:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False)
            self._client = self._call(
                lambda: chromadb.HttpClient(
                    host=self.host,
                    port=self.port,
                    ssl=self.ssl,
                    tenant=self._tenant,
                    database=self._database,
                    settings=settings,
                )
            )
        return self._client

    def _existing(self) -> Any:
        """The Chroma collection, or None while it does not exist."""
        if self._handle is None:
            from chromadb.errors import NotFoundError

            client = self._connect()

            def lookup() -> Any:
                try:
                    return client.get_collection(self.collection, embedding_function=None)
                except NotFoundError:
                    return None

            self._handle = self._call(lookup)
        return self._handle

    def _create(self, dimension: int, distance: str) -> Any:
        client = self._connect()
        self._handle = self._call(
            lambda: client.get_or_create_collection(
                self.collection,
                configuration={"hnsw": {"space": SPACES[distance]}},
                metadata={DIMENSION_KEY: dimension, DISTANCE_KEY: distance},
                embedding_function=None,
            )
        )
        self.distance = distance
        return self._handle

    def _shape(self, handle: Any) -> tuple[int | None, str]:
        """(dimension, distance) of an existing collection. One made by another client
        says its dimension only through a stored vector."""
        metadata = handle.metadata or {}
        distance = metadata.get(DISTANCE_KEY)
        if distance is None:
            space = (handle.configuration.get("hnsw") or {}).get("space", "l2")
            distance = DISTANCES.get(space, "l2")
        dimension = metadata.get(DIMENSION_KEY)
        if dimension is None:
            first = self._call(lambda: handle.get(limit=1, include=["embeddings"]))
            embeddings = first.get("embeddings")
            dimension = len(embeddings[0]) if embeddings is not None and len(embeddings) else None
        return dimension, distance

    def _pages(self, handle: Any, include: list[str]) -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            page = self._call(
                lambda: handle.get(limit=PAGE, offset=offset, include=include)  # noqa: B023
            )
            yield page
            if len(page["ids"]) < PAGE:
                return
            offset += PAGE

    def _passing(self, handle: Any, where: Filter | None) -> list[str]:
        """The ids of the chunks whose metadata pass ``where`` (all chunks for None)."""
        ids: list[str] = []
        for page in self._pages(handle, ["metadatas"]):
            for chunk_id, stored in zip(page["ids"], page["metadatas"], strict=True):
                if matches(where, _decode(stored)[0]):
                    ids.append(chunk_id)
        return ids

    def _of_documents(self, handle: Any, document_ids: list[str]) -> list[str]:
        if not document_ids:
            return []
        found = self._call(
            lambda: handle.get(where={DOCUMENT_KEY: {"$in": document_ids}}, include=[])
        )
        return list(found["ids"])

    def _write(self, handle: Any, chunks: list[Chunk]) -> None:
        if not chunks:
            return
        batch = self._call(lambda: self._connect().get_max_batch_size())
        for start in range(0, len(chunks), batch):
            part = chunks[start : start + batch]
            self._call(
                lambda part=part: handle.upsert(  # type: ignore[misc]
                    ids=[c.id for c in part],
                    embeddings=[c.vector for c in part],
                    documents=[c.text for c in part],
                    metadatas=[_encode(c) for c in part],
                )
            )

    def _delete_ids(self, handle: Any, ids: list[str]) -> None:
        for start in range(0, len(ids), PAGE):
            self._call(lambda start=start: handle.delete(ids=ids[start : start + PAGE]))  # type: ignore[misc]

    def _ready_for(self, chunks: list[Chunk]) -> Any:
        """The collection to write ``chunks`` into (created on the first write), after
        checking their dimension: nothing is written before this."""
        handle = self._existing()
        dimension = self._shape(handle)[0] if handle is not None else None
        dimension = check_dimension(chunks, dimension, self.collection)
        if handle is None and dimension is not None:
            handle = self._create(dimension, self.distance)
        return handle

    def _distance(self, raw: float, distance: str) -> float:
        if distance == "dot":
            return raw - 1.0
        if distance == "l2":
            return math.sqrt(max(raw, 0.0))
        return raw

    # -- methods -----------------------------------------------------------------------

    def info(self, inputs: InfoInput | None = None) -> dict[str, Any]:
        handle = self._existing()
        dimension, distance = self._shape(handle) if handle is not None else (None, self.distance)
        return {
            "collection": self.collection,
            "exists": handle is not None,
            "dimension": dimension,
            "distance": distance,
            "count": self._call(handle.count) if handle is not None else 0,
            "keyword_search": False,
        }

    def ensure_collection(self, inputs: EnsureCollectionInput) -> dict[str, Any]:
        with self._lock:
            handle = self._existing()
            if handle is None:
                self._create(inputs.dimension, inputs.distance)
            else:
                dimension, distance = self._shape(handle)
                if dimension is None:  # another client's empty collection: now it has one
                    dimension = inputs.dimension
                    metadata = {**(handle.metadata or {}), DIMENSION_KEY: dimension}
                    self._call(lambda: handle.modify(metadata=metadata))
                check_collection(
                    self.collection, (dimension, distance), (inputs.dimension, inputs.distance)
                )
        return self.info()

    def upsert(self, inputs: UpsertInput) -> dict[str, Any]:
        with self._lock:
            handle = self._ready_for(inputs.chunks)
            if handle is not None:
                self._write(handle, inputs.chunks)
        return {"upserted": len(inputs.chunks)}

    def replace_documents(self, inputs: ReplaceDocumentsInput) -> dict[str, Any]:
        with self._lock:
            handle = self._ready_for(inputs.chunks)
            if handle is None:
                return {"deleted": 0, "inserted": 0}
            old = self._of_documents(handle, inputs.all_document_ids())
            self._delete_ids(handle, old)
            self._write(handle, inputs.chunks)
        return {"deleted": len(old), "inserted": len(inputs.chunks)}

    def delete(self, inputs: DeleteInput) -> dict[str, Any]:
        with self._lock:
            handle = self._existing()
            if handle is None:
                return {"deleted": 0}
            if inputs.ids is not None:
                wanted = list(dict.fromkeys(inputs.ids))
                ids = list(self._call(lambda: handle.get(ids=wanted, include=[]))["ids"])
            elif inputs.document_ids is not None:
                ids = self._of_documents(handle, list(dict.fromkeys(inputs.document_ids)))
            else:
                ids = self._passing(handle, inputs.where)
            self._delete_ids(handle, ids)
        return {"deleted": len(ids)}

    def count(self, inputs: CountInput) -> dict[str, Any]:
        handle = self._existing()
        if handle is None:
            return {"count": 0}
        where = inputs.where
        if where is None:
            return {"count": self._call(handle.count)}
        return {"count": len(self._passing(handle, where))}

    def search(self, inputs: SearchInput) -> dict[str, Any]:
        handle = self._existing()
        if handle is None:
            return {"matches": []}
        dimension, distance = self._shape(handle)
        check_query_dimension(inputs.vector, dimension, self.collection)
        where = inputs.where
        if where is None:
            ids, available = None, self._call(handle.count)
        else:
            ids = self._passing(handle, where)
            available = len(ids)
        if available == 0:
            return {"matches": []}
        found = self._call(
            lambda: handle.query(
                query_embeddings=[inputs.vector],
                ids=ids,
                n_results=min(inputs.top_k, available),
                include=["distances", "documents", "metadatas"],
            )
        )
        out = []
        for chunk_id, raw, text, stored in zip(
            found["ids"][0],
            found["distances"][0],
            found["documents"][0],
            found["metadatas"][0],
            strict=True,
        ):
            metadata, document_id, content_hash = _decode(stored)
            d = self._distance(float(raw), distance)
            out.append(
                match(
                    chunk_id,
                    document_id,
                    text or "",
                    metadata,
                    content_hash,
                    distance=d,
                    score=score(distance, d),
                )
            )
        out.sort(key=lambda m: m["distance"])  # stable: Chroma's order among equals
        return {"matches": out}

    def keyword_search(self, inputs: KeywordSearchInput) -> dict[str, Any]:
        raise no_keyword_search(COMPONENT_TYPE)

    def get(self, inputs: GetInput) -> dict[str, Any]:
        handle = self._existing()
        wanted = list(dict.fromkeys(inputs.ids))
        if handle is None or not wanted:
            return {"chunks": []}
        include = ["documents", "metadatas"] + (["embeddings"] if inputs.include_vectors else [])
        found = self._call(lambda: handle.get(ids=wanted, include=include))
        by_id: dict[str, dict[str, Any]] = {}
        for i, chunk_id in enumerate(found["ids"]):
            metadata, document_id, content_hash = _decode(found["metadatas"][i])
            chunk: dict[str, Any] = {
                "id": chunk_id,
                "document_id": document_id,
                "text": found["documents"][i] or "",
                "content_hash": content_hash,
                "metadata": metadata,
            }
            if inputs.include_vectors:
                # Chroma's JSON carries float32s in their shortest decimals: read back as
                # float32, they are exactly the float32s stored
                chunk["vector"] = np.asarray(found["embeddings"][i], dtype=np.float32).tolist()
            by_id[chunk_id] = chunk
        return {"chunks": [by_id[i] for i in wanted if i in by_id]}

    def documents(self, inputs: DocumentsInput) -> dict[str, Any]:
        handle = self._existing()
        wanted = list(dict.fromkeys(inputs.document_ids))
        if handle is None or not wanted:
            return {"documents": []}
        stored = self._call(
            lambda: handle.get(where={DOCUMENT_KEY: {"$in": wanted}}, include=["metadatas"])
        )
        found: dict[str, dict[str, Any]] = {}
        for raw in stored["metadatas"]:
            _, document, content_hash = _decode(raw)
            if document is None:
                continue
            entry = found.setdefault(
                document, {"document_id": document, "chunks": 0, "content_hashes": set()}
            )
            entry["chunks"] += 1
            if content_hash is not None:
                entry["content_hashes"].add(content_hash)
        for entry in found.values():
            entry["content_hashes"] = sorted(entry["content_hashes"])
        return {"documents": [found[d] for d in wanted if d in found]}


def create(attributes: ChromaAttributes) -> ChromaStore:
    return ChromaStore(attributes)
