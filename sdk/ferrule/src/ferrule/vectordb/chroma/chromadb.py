"""Agno's ``agno.vectordb.chroma.chromadb``: `ChromaDb`, a collection of chunks as Agno's
Chroma keeps them: in the process by default, on a Chroma server when given one.

ferrule does not embed the chromadb library: in the process, the collection is kept by
ferrule's embedded store (ferrule-sqlite-vec), in a file under ``path`` with
``persistent_client=True`` (kept between runs, as Chroma's on-disk client keeps it), else in
a temporary file removed at exit (as Chroma's in-memory client forgets it). Given a server
(``host``, ``port``, ``ssl``: chromadb's ``HttpClient`` keywords) it is that server's
collection (ferrule-chroma). The chromadb ``client`` object is refused. ``batch_size``
chunks go per request; ``hybrid_rrf_k`` is the hybrid search's fusion constant; the rest is
`ferrule.vectordb.base.VectorDb`'s.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from ferrule_kernel import InvalidInputError
from ferrule_kit.embeddings.vectorspec import COLLECTION_NAME

from ..base import VectorDb
from ..distance import Distance, store_distance
from ..search import SearchType

__all__ = ["NO_CLIENT", "STORE_FILE", "ChromaDb", "reciprocal_rank_fusion"]

NO_CLIENT = (
    "ChromaDb.client: ferrule keeps the collection in its own embedded store (or on the "
    "Chroma server given as host=/port=), with no chromadb client object: use the db's methods"
)
#: The file of a persistent collection, under ``path``.
STORE_FILE = "ferrule-chroma.db"


def embedded_collection(name: str) -> str:
    """The embedded store's collection (an SQL table) for a Chroma collection's name: the
    name itself where SQL takes it, else (``thai-recipes``) its other characters as ``_``
    and 8 hex digits of the name's hash, so that two names never share a table."""
    if COLLECTION_NAME.fullmatch(name):
        return name
    safe = re.sub(r"[^A-Za-z0-9_]", "_", name)[:53]
    return (
        f"{'' if safe[:1].isalpha() else 'c'}{safe}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    )


#: Chunks per request when ``batch_size`` is not given.
DEFAULT_BATCH_SIZE = 1000
_CLIENT_KEYWORDS = ("host", "port", "ssl")


def reciprocal_rank_fusion(
    ranked_lists: list[list[tuple[str, float]]], k: int = 60
) -> list[tuple[str, float]]:
    """Rankings of ``(id, score)`` fused: each id scores the sum over the rankings of
    ``1 / (k + its rank)`` (rank from 1); best first."""
    fused: dict[str, float] = defaultdict(float)
    for ranking in ranked_lists:
        for rank, (ident, _) in enumerate(ranking, 1):
            fused[ident] += 1.0 / (k + rank)
    return sorted(fused.items(), key=lambda item: -item[1])


class ChromaDb(VectorDb):
    """``ChromaDb(collection="docs", host="localhost", port=8000)`` (see the module docstring)."""

    collection_name: str
    path: str
    persistent_client: bool
    hybrid_rrf_k: int
    kwargs: dict[str, Any]

    def __init__(
        self,
        collection: str | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        id: str | None = None,
        embedder: Any = None,
        distance: Distance | str = Distance.cosine,
        path: str = "tmp/chromadb",
        persistent_client: bool = False,
        search_type: SearchType | str = SearchType.vector,
        hybrid_rrf_k: int = 60,
        batch_size: int | None = None,
        reranker: Any = None,
        **kwargs: Any,
    ) -> None:
        unknown = sorted(set(kwargs) - set(_CLIENT_KEYWORDS))
        if unknown:
            raise InvalidInputError(
                f"ChromaDb takes the server's {', '.join(_CLIENT_KEYWORDS)}, not "
                f"{', '.join(unknown)}",
                field=unknown[0],
            )
        if collection is None:
            if name is None:
                raise InvalidInputError("give collection or name", field="collection")
            collection = name.lower().replace(" ", "_")
        if batch_size is not None and batch_size < 1:
            raise InvalidInputError("must be at least 1", field="batch_size")
        self.collection_name = collection
        self.embedder = embedder
        self.distance = Distance(distance)
        self.path = path
        self.persistent_client = persistent_client
        self.search_type = SearchType(search_type)
        self.hybrid_rrf_k = hybrid_rrf_k
        self.rrf_k = hybrid_rrf_k
        self.reranker = reranker
        self.kwargs = dict(kwargs)
        self._batch_size = batch_size
        self._server = "host" in self.kwargs
        self.component_type = "chroma_vector_store" if self._server else "sqlite_vec_store"
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        super().__init__(id=id, name=name, description=description)

    def __repr__(self) -> str:
        return f"ChromaDb(collection={self.collection_name!r})"

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """The store's attributes: the collection, its metric and the server."""
        out: dict[str, Any] = {
            "collection": embedded_collection(self.collection_name),
            "distance": store_distance(self.distance),
        }
        if self._server:  # Chroma's own server takes Chroma's names as they are
            out["collection"] = self.collection_name
            scheme = "https" if self.kwargs.get("ssl") else "http"
            out["url"] = f"{scheme}://{self.kwargs['host']}:{int(self.kwargs.get('port', 8000))}"
        elif self.persistent_client:
            folder = Path(self.path).expanduser().resolve()
            folder.mkdir(parents=True, exist_ok=True)
            out["path"] = str(folder / STORE_FILE)
        else:
            if self._scratch is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="ferrule-chroma-")
            out["path"] = str(Path(self._scratch.name) / STORE_FILE)
        return out

    @property
    def batch_size(self) -> int:
        """Chunks per request."""
        return self._batch_size or DEFAULT_BATCH_SIZE

    @property
    def client(self) -> Any:
        raise InvalidInputError(NO_CLIENT, field="client")

    async def async_upsert(
        self, content_hash: str, documents: list[Any], filters: dict[str, Any] | None = None
    ) -> None:
        """Store the documents, `batch_size` at a time."""
        for start in range(0, len(documents), self.batch_size):
            await VectorDb.async_upsert(
                self, content_hash, documents[start : start + self.batch_size], filters
            )

    async def async_name_exists(self, name: str) -> bool:  # type: ignore[override]
        """Whether a chunk of a document named ``name`` is stored."""
        return bool(await self._count({"name": name}))
