"""Ailoy 0.2's knowledge: `AiloyKnowledge`, the `Knowledge` that Ailoy's only constructor,
``Knowledge.new_vector_store(store, embedding_model)``, makes.

Ailoy and Agno both name a knowledge base's search ``retrieve``, differently: Ailoy's is a
coroutine of ``(query, KnowledgeConfig)`` answering one document by default, Agno's a plain
method of ``(query, max_results, filters)``. Which one a knowledge base has follows from how
it was made (by design, never guessed from arguments): one made by Ailoy's constructor has
Ailoy's, with Ailoy's ``as_tool``; every other, Agno's (`Knowledge.retrieve`).
"""

from __future__ import annotations

from typing import Any

from ferrule_kernel import InvalidInputError

from .._bridge import on_bridge_loop
from ..tools import Tool
from .document import Document
from .knowledge import AILOY_TOOL, AILOY_TOP_K, Knowledge

__all__ = ["AiloyKnowledge"]


class AiloyKnowledge(Knowledge):
    """A `Knowledge` made by Ailoy 0.2's constructor (see the module docstring)."""

    @classmethod
    def of(cls, store: Any, embedding_model: Any, **options: Any) -> AiloyKnowledge:
        """The knowledge in a `ferrule.vector_store.VectorStore`, searched with a
        `ferrule.EmbeddingModel` (both on one runtime, and used, not owned: closing this
        knowledge deletes neither). ``options``: `Knowledge`'s."""
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
        return cls(
            vector_db=store.name, embedder=embedding_model.name, runtime=store.runtime, **options
        )

    @on_bridge_loop
    async def retrieve(self, query: str, config: Any = None) -> list[Document]:  # type: ignore[override]
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
        """This knowledge as a tool a model may call (Ailoy 0.2's): ``retrieve-from-knowledge``
        with a ``query``, answering the nearest documents as Ailoy shapes them (``id``,
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
                        "description": "The input query to search for.",
                    }
                },
                "required": ["query"],
            },
            retrieve,
        )
