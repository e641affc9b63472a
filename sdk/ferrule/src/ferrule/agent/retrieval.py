"""An `Agent`'s knowledge (RAG): `AgentKnowledge`, with the Agent reference's names:
``knowledge``, ``search_knowledge`` (agentic RAG: the model may call ``search_knowledge_base``),
``add_knowledge_to_context`` (the run's input searched, the references put in the user's
message), ``knowledge_filters`` (metadata filters on every search) and
``enable_agentic_knowledge_filters`` (the model may add filters of its own);
`get_relevant_docs_from_knowledge`; ``knowledge_retriever`` (Agno's: a function that
searches in the knowledge's place); ``references_format`` (the references as JSON or
YAML) and ``update_knowledge`` (the model may add to the knowledge with
``add_to_knowledge``). The searches a run made are its ``RunOutput.references``.

``knowledge`` may also be Agno's knowledge factory: a function (not a class) called as a
run starts, with ``agent`` / ``session_state`` / ``run_context`` by name (it may be async),
whose knowledge base is that run's (its search tool, its references, its instructions, the
filters' checks; the run context's ``knowledge``); what it makes is kept per key as a tool
factory's tools are (`callable_cache`, ``callable_knowledge_cache_key``).

The knowledge is a `ferrule.knowledge.Knowledge`, or any object of Agno's knowledge
protocol (`ferrule.knowledge.protocol.KnowledgeProtocol`, e.g. `FileSystemKnowledge`):
the model then gets the object's own tools (``get_tools``), and its documents for a query
(``retrieve``) are what `get_relevant_docs_from_knowledge` and
``add_knowledge_to_context`` find.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import TextPart

from .._bridge import Bridge, blocking, on_bridge_loop
from ..knowledge.document import MessageReferences
from ..tools import Tool, ToolContext, Toolset, as_tools
from ..tools.tool_context import RunContext
from .callable_cache import CacheSettings, CallableCache
from .context import filters_dict
from .inputs import call_by_name, run_context_of
from .knowledge_kinds import (
    is_knowledge,
    is_knowledge_factory,
    is_protocol_knowledge,
    run_knowledge,
)
from .langmodel import polyfill_documents
from .request import MESSAGES

if TYPE_CHECKING:
    from .state import RunState

#: The references list of the run this task drives (set by `AgentKnowledge.track_references`
#: as each leg of a run starts): a tool's `ToolContext` carries no run, and the search
#: tool records what it found here.
_run_references: contextvars.ContextVar[list[MessageReferences] | None] = contextvars.ContextVar(
    "ferrule_run_references", default=None
)

SEARCH_TOOL = "search_knowledge_base"


def combine_filters(*filters: Any) -> dict[str, Any] | None:
    """Every given filter must hold (None when none is given); a list of
    `ferrule.filters` expressions counts as all of them."""
    given = [f for f in (filters_dict(f) for f in filters) if f]
    if not given:
        return None
    return given[0] if len(given) == 1 else {"$and": given}


def references_text(references: list[Any], format: str = "json") -> str:
    """The references as the model reads them: indented JSON, or YAML."""
    if format == "yaml":
        import yaml  # checked when the agent was made

        return str(yaml.dump(references, allow_unicode=True, default_flow_style=False))
    return json.dumps(references, ensure_ascii=False, indent=2, default=str)


def checked_knowledge(knowledge: Any, filters: Any, runtime: Any) -> Any:
    """``knowledge`` (adopting the agent's runtime) once it and ``filters`` are checked; a
    knowledge factory as it is."""
    if knowledge is not None and not is_knowledge(knowledge):
        if not is_knowledge_factory(knowledge):
            raise InvalidInputError(
                "knowledge must be a ferrule.knowledge.Knowledge, a knowledge base of Agno's "
                "protocol (build_context, get_tools, retrieve) or a function making one, "
                f"got {knowledge!r}",
                field="knowledge",
            )
    if filters is not None and not isinstance(filters, (dict, list)):
        raise InvalidInputError(
            "expected a dict of metadata filters or a list of filter expressions",
            field="knowledge_filters",
        )
    if is_knowledge(knowledge) and callable(getattr(knowledge, "adopt_runtime", None)):
        knowledge.adopt_runtime(runtime)
    return knowledge


def _documents(found: Any) -> list[dict[str, Any]]:
    return [_as_reference(document) for document in found or ()]


class KnowledgeSettings(CacheSettings, Protocol):
    """What `AgentKnowledge` reads of its agent, as it is at each call; the agent itself
    is what a ``knowledge_retriever`` (or a knowledge factory) is given as ``agent``."""

    runtime: Any
    knowledge: Any
    search_knowledge: bool
    add_knowledge_to_context: bool
    knowledge_filters: dict[str, Any] | list[Any] | None
    enable_agentic_knowledge_filters: bool | None
    knowledge_retriever: Any
    references_format: str
    update_knowledge: bool


class AgentKnowledge:
    """The knowledge of an `Agent` (see the module docstring), over its settings."""

    #: The name its sync twins' errors give (they are `Agent`'s methods to users).
    shown_as = "Agent"

    def __init__(self, agent: KnowledgeSettings, cache: Callable[[], CallableCache]) -> None:
        self.agent = agent
        #: The agent's cache of what its factories made (shared with its tools).
        self.cache = cache
        #: What the factory made for each run context, with the run's id: once per run.
        self.made: weakref.WeakKeyDictionary[RunContext, tuple[str, Any]] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.agent.runtime.sync_bridge
        return bridge

    async def for_run(self, run_context: RunContext | None) -> Any:
        """The run's knowledge, set as ``run_context``'s: the agent's, or what its knowledge
        factory makes for the run (`callable_cache`; called once per run)."""
        factory = self.agent.knowledge
        if not is_knowledge_factory(factory):
            knowledge = factory
        elif run_context is None:  # a step outside a run: made, never kept by a run
            knowledge = await self.cache().made("knowledge", factory, self.agent, None, self._made)
        else:
            earlier = self.made.get(run_context)
            if earlier is not None and earlier[0] == run_context.run_id:
                return earlier[1]
            cache = self.cache()
            knowledge = await cache.made("knowledge", factory, self.agent, run_context, self._made)
            self.made[run_context] = (run_context.run_id, knowledge)
        if run_context is not None:
            run_context.knowledge = knowledge
        return knowledge

    def _made(self, made: Any) -> Any:
        """What the knowledge factory made, checked (None: the run has no knowledge), on
        the agent's runtime."""
        if made is not None and not is_knowledge(made):
            raise InvalidInputError(
                "the knowledge function must return a ferrule.knowledge.Knowledge or a "
                f"knowledge base of Agno's protocol, got {type(made).__name__}",
                field="knowledge",
            )
        return checked_knowledge(made, None, self.agent.runtime)

    def _need_knowledge(self, run_context: RunContext | None) -> Any:
        knowledge = run_knowledge(self.agent, run_context)
        if knowledge is None and is_knowledge_factory(self.agent.knowledge):
            raise InvalidInputError(
                "this agent's knowledge is made for each run by its knowledge function: "
                "search a run's with its run_context",
                field="run_context",
            )
        if knowledge is None:
            raise InvalidInputError(
                "this agent has no knowledge: give it one, e.g. Agent(..., knowledge=Knowledge())",
                field="knowledge",
            )
        return knowledge

    @on_bridge_loop
    async def aget_relevant_docs_from_knowledge(
        self,
        query: str,
        num_documents: int | None = None,
        filters: dict[str, Any] | list[Any] | None = None,
        validate_filters: bool = False,
        run_context: RunContext | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """The documents most relevant to ``query`` (as `Document.to_dict`), at most
        ``num_documents``, passing ``filters`` (a dict, or a list of `ferrule.filters`
        expressions): from the ``knowledge_retriever`` when the agent has one (given
        ``run_context`` and ``kwargs`` by name too), else the knowledge's. With
        ``validate_filters``, filter keys the knowledge's documents do not hold are left
        out (the knowledge's ``validate_filters``)."""
        if validate_filters and filters:
            filters = await self._valid(filters, run_context)
        found = await self._references(query, num_documents, filters, run_context, kwargs)
        return found.references

    get_relevant_docs_from_knowledge = blocking(aget_relevant_docs_from_knowledge)

    async def _valid(self, filters: Any, run_context: RunContext | None) -> Any:
        """``filters`` without the keys the knowledge's documents do not hold."""
        knowledge = run_knowledge(self.agent, run_context)
        check = getattr(knowledge, "avalidate_filters", None)
        if callable(check):
            valid, _invalid = await check(filters)
        elif callable(getattr(knowledge, "validate_filters", None)):
            valid, _invalid = await asyncio.to_thread(knowledge.validate_filters, filters)
        else:
            raise InvalidInputError(
                "this agent's knowledge cannot say which filter keys its documents hold",
                field="validate_filters",
            )
        return valid or None

    async def _references(
        self,
        query: str,
        num_documents: int | None,
        filters: Any,
        run_context: RunContext | None,
        extra: dict[str, Any] | None = None,
        knowledge: Any = None,
    ) -> MessageReferences:
        """What a search of ``query`` finds: the ``knowledge_retriever``'s documents when
        the agent has one (called with those of ``agent``, ``query``, ``num_documents``,
        ``filters``, ``run_context`` and ``extra`` it names; a sync one in a worker
        thread), else those of ``knowledge`` (default: the run's; a protocol knowledge's
        ``retrieve``)."""
        retriever = self.agent.knowledge_retriever
        started = time.perf_counter()
        if retriever is None:
            knowledge = knowledge if knowledge is not None else self._need_knowledge(run_context)
            if not is_protocol_knowledge(knowledge):
                return await knowledge.areferences(query, num_documents, filters_dict(filters))  # type: ignore[no-any-return]
            found = await self._retrieve(knowledge, query, num_documents, filters)
            elapsed = round(time.perf_counter() - started, 4)
            return MessageReferences(query, _documents(found), elapsed)
        arguments = {
            **(extra or {}),
            "agent": self.agent,
            "query": query,
            "num_documents": num_documents,
            "filters": filters,
            "run_context": run_context,
        }
        if num_documents is None:  # the retriever's own default
            del arguments["num_documents"]
        if inspect.iscoroutinefunction(retriever):
            found = await call_by_name(retriever, **arguments)
        else:
            found = await asyncio.to_thread(call_by_name, retriever, **arguments)
        if found is not None and not isinstance(found, list):
            raise InvalidInputError(
                f"knowledge_retriever must return a list of documents, got {type(found).__name__}",
                field="knowledge_retriever",
            )
        return MessageReferences(query, _documents(found), round(time.perf_counter() - started, 4))

    @staticmethod
    async def _retrieve(knowledge: Any, query: str, limit: int | None, filters: Any) -> Any:
        """A protocol knowledge's documents for ``query`` (its ``aretrieve``, else its
        ``retrieve`` in a worker thread; none without either)."""
        limit = limit if limit is not None else getattr(knowledge, "max_results", 10)
        if callable(getattr(knowledge, "aretrieve", None)):
            return await knowledge.aretrieve(query, max_results=limit, filters=filters)
        if callable(getattr(knowledge, "retrieve", None)):
            return await asyncio.to_thread(
                knowledge.retrieve, query, max_results=limit, filters=filters
            )
        return []

    async def run_tools(self, run_context: RunContext | None) -> list[Tool | Toolset]:
        """The tools the run's knowledge (`for_run`) gives the model: ``search_knowledge_base``
        (or a protocol knowledge's own tools) when it may search, ``add_to_knowledge`` with
        ``update_knowledge``."""
        agent, knowledge = self.agent, await self.for_run(run_context)
        found: list[Tool | Toolset] = []
        if agent.search_knowledge and (knowledge is not None or agent.knowledge_retriever):
            own = getattr(knowledge, "get_tools", None)
            if agent.knowledge_retriever is None and is_protocol_knowledge(knowledge) and own:
                found += [as_tools(tool) for tool in own() or ()]
            else:
                found.append(self._search_tool(knowledge))
        if knowledge is not None and agent.update_knowledge:
            found.append(self._add_tool(knowledge))
        return found

    def _add_tool(self, knowledge: Any) -> Tool:
        async def add_to_knowledge(query: str, result: str) -> str:
            """Add information to the knowledge base for later use.

            Args:
                query: The question or topic the information answers.
                result: The information itself.
            """
            return await self._insert(knowledge, query, result)

        tool = as_tools(add_to_knowledge)
        assert isinstance(tool, Tool)
        return tool

    def _search_tool(self, knowledge: Any) -> Tool:
        agentic = bool(self.agent.enable_agentic_knowledge_filters)
        properties: dict[str, Any] = {
            "query": {"type": "string", "description": "What to look for."}
        }
        description = (
            "Search the knowledge base for information relevant to a query. Returns the "
            "most relevant passages."
        )
        if agentic:
            properties["filters"] = {
                "type": "object",
                "description": 'Optional metadata filters, e.g. {"topic": "billing"} or '
                '{"year": {"$gte": 2020}}.',
            }
            description += " Narrow it with metadata filters when the query names them."

        async def search(arguments: dict[str, Any], context: ToolContext[Any]) -> str:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                raise InvalidInputError("must be a non-empty string", field="query")
            asked = arguments.get("filters") if agentic else None
            if asked is not None and not isinstance(asked, dict):
                raise InvalidInputError("expected an object", field="filters")
            run_context = context.run_context
            own = run_context.knowledge_filters if run_context else self.agent.knowledge_filters
            filters = combine_filters(own, asked or None)
            found = await self._references(query, None, filters, run_context, None, knowledge)
            recorded = _run_references.get()
            if recorded is not None:
                recorded.append(found)
            if not found.references:
                return "No documents found."
            return references_text(found.references, self.agent.references_format)

        schema = {
            "type": "object",
            "properties": properties,
            "required": ["query"],
            "additionalProperties": False,
        }
        return Tool(SEARCH_TOOL, description, schema, search)

    @on_bridge_loop
    async def aadd_to_knowledge(self, query: str, result: str) -> str:
        """Add ``result``, the answer to ``query``, to the knowledge (a text named after
        the query, holding both as JSON); what happened, as Agno's tool says it. A knowledge
        factory's knowledge is a run's: its ``add_to_knowledge`` tool adds to it."""
        return await self._insert(run_knowledge(self.agent, None), query, result)

    add_to_knowledge = blocking(aadd_to_knowledge)

    @staticmethod
    async def _insert(knowledge: Any, query: str, result: str) -> str:
        insert = getattr(knowledge, "ainsert", None)
        if knowledge is None:
            return "Knowledge not available"
        if not callable(insert):
            return "Knowledge does not support insert"
        name = query.replace(" ", "_").replace("?", "").replace("!", "").replace(".", "")
        content = json.dumps({"query": query, "result": result}, ensure_ascii=False)
        await insert(name=name, text_content=content)
        return "Successfully added to knowledge base"

    def track_references(self, run: RunState) -> None:
        """Record the searches of ``run``'s tool calls in its references, from this task on."""
        if run.session is not None:
            _run_references.set(run.session.references)

    async def add_to_context(self, run: RunState, references: list[MessageReferences]) -> None:
        """With ``add_knowledge_to_context``, search ``run``'s input, record the search in
        ``references`` and put what is found in its last user message (the Agent
        reference's way)."""
        context = run_context_of(run)
        knowledge = run_knowledge(self.agent, context)
        if (knowledge is None and self.agent.knowledge_retriever is None) or not (
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
        found = await self._references(query, top_k, context.knowledge_filters, context)
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
            f"<references>\n{references_text(found.references, self.agent.references_format)}"
            "\n</references>"
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
