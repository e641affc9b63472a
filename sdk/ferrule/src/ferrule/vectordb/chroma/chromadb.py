"""Agno's ``agno.vectordb.chroma.chromadb``: `ChromaDb`, chunks in a collection of a Chroma
server (ferrule-chroma's ``chroma_vector_store``): ``ChromaDb(collection="docs")``.

ferrule speaks to Chroma over HTTP; it does not embed the chromadb library. The server is
the one ``host`` / ``port`` / ``ssl`` name (chromadb's ``HttpClient`` keywords), else
``$FERRULE_CHROMA_URL``, else ``http://localhost:8000``. The collection lives on the server,
so it outlasts the process: Agno's on-disk client (``persistent_client=True`` with a
``path``) is refused, naming the server (or `SqliteVecDb` for a file of one's own), as is
the chromadb ``client`` object. ``batch_size`` chunks go per request; ``hybrid_rrf_k`` is
the hybrid search's fusion constant. The rest is `ferrule.vectordb.base.VectorDb`'s.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, ClassVar

from ferrule_kernel import InvalidInputError

from ..base import VectorDb
from ..distance import Distance, store_distance
from ..search import SearchType

__all__ = ["NO_EMBEDDED_CHROMA", "ChromaDb", "reciprocal_rank_fusion"]

NO_EMBEDDED_CHROMA = (
    "ferrule talks to a Chroma server (ferrule-chroma: host/port, or $FERRULE_CHROMA_URL), "
    "whose collections persist there; it does not run Chroma in the process. For an "
    "embedded store in a file of your own, use SqliteVecDb(db_file=...)"
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

    component_type: ClassVar[str] = "chroma_vector_store"
    collection_name: str
    path: str
    persistent_client: bool
    hybrid_rrf_k: int
    kwargs: dict[str, Any]

    def __init__(
        self,
        collection: str | None = None,
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
        if persistent_client:
            raise InvalidInputError(NO_EMBEDDED_CHROMA, field="persistent_client")
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
        super().__init__(id=id, name=name, description=description)

    def __repr__(self) -> str:
        return f"ChromaDb(collection={self.collection_name!r})"

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """The store's attributes: the collection, its metric and the server."""
        out: dict[str, Any] = {
            "collection": self.collection_name,
            "distance": store_distance(self.distance),
        }
        if "host" in self.kwargs:
            scheme = "https" if self.kwargs.get("ssl") else "http"
            out["url"] = f"{scheme}://{self.kwargs['host']}:{int(self.kwargs.get('port', 8000))}"
        return out

    @property
    def batch_size(self) -> int:
        """Chunks per request."""
        return self._batch_size or DEFAULT_BATCH_SIZE

    @property
    def client(self) -> Any:
        raise InvalidInputError(NO_EMBEDDED_CHROMA, field="client")

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
