"""An `Agent`'s knowledge (RAG): `AgentKnowledge`, with the Agent reference's names:
``knowledge``, ``search_knowledge`` (agentic RAG: the model may call ``search_knowledge_base``),
``add_knowledge_to_context`` (the run's input searched, the references put in the user's
message), ``knowledge_filters`` (metadata filters on every search) and
``enable_agentic_knowledge_filters`` (the model may add filters of its own);
`get_relevant_docs_from_knowledge`; ``knowledge_retriever`` (Agno's: a function that
searches in the knowledge's place). The searches a run made are its
``RunOutput.references``.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import time
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.messages import TextPart

from .._bridge import Bridge, blocking, on_bridge_loop
from ..knowledge.document import MessageReferences
from ..tools import Tool, ToolContext
from ..tools.context import RunContext
from .inputs import call_by_name, run_context_of
from .langmodel import polyfill_documents
from .request import MESSAGES

if TYPE_CHECKING:
    from ..knowledge import Knowledge
    from .state import RunState

#: The references list of the run this task drives (set by `AgentKnowledge.track_references`
#: as each leg of a run starts): a tool's `ToolContext` carries no run, and the search
#: tool records what it found here.
_run_references: contextvars.ContextVar[list[MessageReferences] | None] = contextvars.ContextVar(
    "ferrule_run_references", default=None
)

SEARCH_TOOL = "search_knowledge_base"


def combine_filters(*filters: dict[str, Any] | None) -> dict[str, Any] | None:
    """Every given filter must hold (None when none is given)."""
    given = [f for f in filters if f]
    if not given:
        return None
    return given[0] if len(given) == 1 else {"$and": given}


def references_text(references: list[dict[str, Any]]) -> str:
    return json.dumps(references, ensure_ascii=False, indent=2)


def checked_knowledge(knowledge: Any, filters: Any, runtime: Any) -> Knowledge | None:
    """``knowledge`` (adopting the agent's runtime) once it and ``filters`` are checked."""
    if knowledge is not None and not hasattr(knowledge, "asearch"):
        raise InvalidInputError(
            f"knowledge must be a ferrule.knowledge.Knowledge, got {knowledge!r}",
            field="knowledge",
        )
    if filters is not None and not isinstance(filters, dict):
        raise InvalidInputError("expected a dict of metadata filters", field="knowledge_filters")
    if knowledge is not None:
        knowledge.adopt_runtime(runtime)
    return knowledge  # type: ignore[no-any-return]


class KnowledgeSettings(Protocol):
    """What `AgentKnowledge` reads of its agent, as it is at each call; the agent itself
    is what a ``knowledge_retriever`` is given as ``agent``."""

    runtime: Any
    knowledge: Knowledge | None
    search_knowledge: bool
    add_knowledge_to_context: bool
    knowledge_filters: dict[str, Any] | None
    enable_agentic_knowledge_filters: bool
    knowledge_retriever: Any


class AgentKnowledge:
    """The knowledge of an `Agent` (see the module docstring), over its settings."""

    #: The name its sync twins' errors give (they are `Agent`'s methods to users).
    shown_as = "Agent"

    def __init__(self, agent: KnowledgeSettings) -> None:
        self.agent = agent

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.agent.runtime.sync_bridge
        return bridge

    def _need_knowledge(self) -> Knowledge:
        if self.agent.knowledge is None:
            raise InvalidInputError(
                "this agent has no knowledge: give it one, e.g. Agent(..., knowledge=Knowledge())",
                field="knowledge",
            )
        return self.agent.knowledge

    @on_bridge_loop
    async def aget_relevant_docs_from_knowledge(
        self,
        query: str,
        num_documents: int | None = None,
        filters: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """The knowledge chunks most relevant to ``query`` (as `Document.to_dict`), at most
        ``num_documents``, passing ``filters`` and the agent's ``knowledge_filters`` (from
        the ``knowledge_retriever`` when the agent has one)."""
        found = await self._references(
            query, num_documents, combine_filters(self.agent.knowledge_filters, filters), None
        )
        return found.references

    get_relevant_docs_from_knowledge = blocking(aget_relevant_docs_from_knowledge)

    async def _references(
        self,
        query: str,
        num_documents: int | None,
        filters: dict[str, Any] | None,
        run_context: RunContext | None,
    ) -> MessageReferences:
        """What a search of ``query`` finds: the ``knowledge_retriever``'s documents when
        the agent has one (called with those of ``agent``, ``query``, ``num_documents``,
        ``filters`` and ``run_context`` it names; a sync one in a worker thread), else the
        knowledge's."""
        retriever = self.agent.knowledge_retriever
        if retriever is None:
            return await self._need_knowledge().areferences(query, num_documents, filters)
        arguments = {
            "agent": self.agent,
            "query": query,
            "num_documents": num_documents,
            "filters": filters,
            "run_context": run_context,
        }
        if num_documents is None:  # the retriever's own default
            del arguments["num_documents"]
        started = time.perf_counter()
        if inspect.iscoroutinefunction(retriever):
            found = await call_by_name(retriever, **arguments)
        else:
            found = await asyncio.to_thread(call_by_name, retriever, **arguments)
        if found is not None and not isinstance(found, list):
            raise InvalidInputError(
                f"knowledge_retriever must return a list of documents, got {type(found).__name__}",
                field="knowledge_retriever",
            )
        references = [_as_reference(document) for document in found or ()]
        return MessageReferences(query, references, round(time.perf_counter() - started, 4))

    def tools(self) -> list[Tool]:
        """``search_knowledge_base``, when the model may search the agent's knowledge."""
        if (
            self.agent.knowledge is None and self.agent.knowledge_retriever is None
        ) or not self.agent.search_knowledge:
            return []
        properties: dict[str, Any] = {
            "query": {"type": "string", "description": "What to look for."}
        }
        description = (
            "Search the knowledge base for information relevant to a query. Returns the "
            "most relevant passages as JSON."
        )
        if self.agent.enable_agentic_knowledge_filters:
            properties["filters"] = {
                "type": "object",
                "description": 'Optional metadata filters, e.g. {"topic": "billing"} or '
                '{"year": {"$gte": 2020}}.',
            }
            description += " Narrow it with metadata filters when the query names them."
        own_filters = self.agent.knowledge_filters

        async def search(arguments: dict[str, Any], context: ToolContext[Any]) -> str:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                raise InvalidInputError("must be a non-empty string", field="query")
            asked = (
                arguments.get("filters") if self.agent.enable_agentic_knowledge_filters else None
            )
            if asked is not None and not isinstance(asked, dict):
                raise InvalidInputError("expected an object", field="filters")
            found = await self._references(
                query, None, combine_filters(own_filters, asked or None), context.run_context
            )
            recorded = _run_references.get()
            if recorded is not None:
                recorded.append(found)
            if not found.references:
                return "No documents found."
            return references_text(found.references)

        return [
            Tool(
                SEARCH_TOOL,
                description,
                {
                    "type": "object",
                    "properties": properties,
                    "required": ["query"],
                    "additionalProperties": False,
                },
                search,
            )
        ]

    def track_references(self, run: RunState) -> None:
        """Record the searches of ``run``'s tool calls in its references, from this task on."""
        if run.session is not None:
            _run_references.set(run.session.references)

    async def add_to_context(self, run: RunState, references: list[MessageReferences]) -> None:
        """With ``add_knowledge_to_context``, search ``run``'s input, record the search in
        ``references`` and put what is found in its last user message (the Agent
        reference's way)."""
        if (self.agent.knowledge is None and self.agent.knowledge_retriever is None) or not (
            self.agent.add_knowledge_to_context
        ):
            return
        at = next(
            (i for i in range(len(run.messages) - 1, -1, -1) if run.messages[i].role == "user"),
            None,
        )
        query = run.messages[at].text if at is not None else ""
        if at is None or not query.strip():
            return
        config = run.config
        top_k = config.knowledge.top_k if config is not None and config.knowledge else None
        if top_k is None and run.kind is MESSAGES:  # Ailoy's run: its KnowledgeConfig's default
            from ..knowledge.knowledge import AILOY_TOP_K

            top_k = AILOY_TOP_K
        found = await self._references(
            query, top_k, self.agent.knowledge_filters, run_context_of(run)
        )
        references.append(found)
        if not found.references:
            return
        inference = config.inference if config is not None else None
        if inference is not None and inference.document_polyfill is not None:
            documents = [{"text": r["content"]} for r in found.references]
            polyfilled = polyfill_documents(run.messages, documents, inference.document_polyfill)
            run.first_new += len(polyfilled) - len(run.messages)  # a system message added
            run.messages[:] = polyfilled
            return
        message = run.messages[at]
        block = (
            "\n\nUse the following references from the knowledge base if it helps:\n"
            f"<references>\n{references_text(found.references)}\n</references>"
        )
        run.messages[at] = attrs.evolve(message, contents=[*message.contents, TextPart(block)])


def _as_reference(document: Any) -> dict[str, Any]:
    """A retriever's document as a reference: a dict as it is, a `Document` (or anything
    with ``to_dict``) as its dict, a string as its ``content``."""
    if isinstance(document, dict):
        return document
    if isinstance(document, str):
        return {"content": document}
    if callable(getattr(document, "to_dict", None)):
        return dict(document.to_dict())
    raise InvalidInputError(
        f"knowledge_retriever returned a {type(document).__name__}; expected dicts, "
        "Documents or strings",
        field="knowledge_retriever",
    )
