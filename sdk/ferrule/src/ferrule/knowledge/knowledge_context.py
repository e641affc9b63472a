"""What an agent gets of a `Knowledge` (`KnowledgeContext`, which `Knowledge` is), as
Agno's knowledge protocol (`ferrule.knowledge.protocol`) names it: what its system message
says of the knowledge base (`build_context`), the ``search_knowledge_base`` tool
(`get_tools`; with agentic filters, the model may pass metadata filters, checked against
the keys the contents hold), documents for a query (`retrieve`), and the readers it reads
with (`get_readers`, `add_reader`, a property per kind: ``pdf_reader``...).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ferrule_kernel import InvalidInputError

from .._bridge import Bridge
from ..filters import FilterExpr
from .document import Document, MessageReferences
from .reader.base import Reader
from .sources import check_reader

__all__ = ["READER_KEYS", "KnowledgeContext"]

#: The reader kinds Agno's knowledge names, each a property (``pdf_reader``...); those
#: ferrule has no reader for are None, as Agno's are when unavailable.
READER_KEYS = (
    "pdf",
    "csv",
    "excel",
    "docx",
    "pptx",
    "json",
    "markdown",
    "text",
    "website",
    "firecrawl",
    "youtube",
)
SEARCH_TOOL = "search_knowledge_base"
INSTRUCTIONS = (
    f"A knowledge base is available through the {SEARCH_TOOL} tool. Search it for what a "
    "question asks before answering from memory, and search first when a question is "
    "unclear."
)


def _reader_property(key: str) -> property:
    def get(self: KnowledgeContext) -> Any:
        return self.reader_of(key)

    get.__doc__ = f"The {key} reader (one given in ``readers`` first), or None: ferrule has none."
    return property(get)


def documents_text(documents: list[Document]) -> str:
    """What the search tool answers: the documents' texts, in order."""
    if not documents:
        return "No documents found"
    texts = [d.content for d in documents if d.content]
    return "\n\n---\n\n".join(texts) if texts else "No content found"


def agentic_filters(asked: Any) -> dict[str, Any]:
    """A model's filters (``[{"key": ..., "value": ...}]``, or dicts of key and value) as
    one dict."""
    found: dict[str, Any] = {}
    for item in asked or ():
        if isinstance(item, dict) and set(item) == {"key", "value"}:
            found[str(item["key"])] = item["value"]
        elif isinstance(item, dict):
            found.update(item)
        elif hasattr(item, "key") and hasattr(item, "value"):
            found[item.key] = item.value
    return found


class KnowledgeContext:
    """`Knowledge` as an agent uses it (see the module docstring)."""

    readers: dict[str, Any] | None
    #: The metadata keys of the contents, as last read or written by this process.
    known_filter_keys: set[str]

    @property
    def sync_bridge(self) -> Bridge:
        raise NotImplementedError

    #: `Knowledge.search`: `asearch` waited for.
    search: Callable[..., Any]

    async def asearch(
        self,
        query: str,
        max_results: int | None = None,
        filters: Any = None,
        search_type: Any = None,
    ) -> Any:
        raise NotImplementedError

    def get_valid_filters(self) -> set[str]:
        raise NotImplementedError

    async def aget_valid_filters(self) -> set[str]:
        raise NotImplementedError

    def validate_filters(self, filters: Any) -> tuple[dict[str, Any] | list[FilterExpr], list[str]]:
        raise NotImplementedError

    async def avalidate_filters(
        self, filters: Any
    ) -> tuple[dict[str, Any] | list[FilterExpr], list[str]]:
        raise NotImplementedError

    # -- readers -------------------------------------------------------------------------

    def construct_readers(self) -> None:
        """Start the readers' dict (readers are made when first asked for)."""
        if self.readers is None:
            self.readers = {}

    def add_reader(self, reader: Any) -> Any:
        """Read with ``reader`` the kinds of content it says it reads; the reader."""
        check_reader(reader)
        self.construct_readers()
        assert self.readers is not None
        key = str(getattr(reader, "name", None) or type(reader).__name__)
        self.readers[key.lower().replace(" ", "_")] = reader
        return reader

    def get_readers(self) -> dict[str, Reader]:
        """The readers given (``readers``, `add_reader`), by key."""
        if self.readers is None:
            self.readers = {}
        elif isinstance(self.readers, list):  # a list given: keyed as add_reader keys
            given, self.readers = self.readers, {}
            for reader in given:
                self.add_reader(reader)
        return self.readers

    def reader_of(self, key: str) -> Any:
        """The reader of kind ``key``: one given under that key, else ferrule's (made
        once), else None."""
        from .reader.reader_factory import ReaderFactory

        given = self.get_readers().get(key)
        if given is not None:
            return given
        try:
            return ReaderFactory.create_reader(key)
        except InvalidInputError:
            return None

    pdf_reader = _reader_property("pdf")
    csv_reader = _reader_property("csv")
    excel_reader = _reader_property("excel")
    docx_reader = _reader_property("docx")
    pptx_reader = _reader_property("pptx")
    json_reader = _reader_property("json")
    markdown_reader = _reader_property("markdown")
    text_reader = _reader_property("text")
    website_reader = _reader_property("website")
    firecrawl_reader = _reader_property("firecrawl")
    youtube_reader = _reader_property("youtube")

    # -- the system message and the tool -------------------------------------------------

    def _context(self, valid: set[str] | None) -> str:
        parts = [INSTRUCTIONS]
        if valid:
            keys = ", ".join(sorted(valid))
            parts.append(
                f"Its documents carry these metadata keys: {keys}. When a question names "
                f"one of them, pass {SEARCH_TOOL} a filter on it, e.g. "
                '[{"key": "<key>", "value": "<value>"}].'
            )
        return "<knowledge_base>\n" + "\n".join(parts) + "\n</knowledge_base>"

    def build_context(self, enable_agentic_filters: bool = False, **kwargs: Any) -> str:
        """What the system message says of this knowledge base and its search tool (with
        agentic filters, the metadata keys the model may filter on; called on the
        runtime's own loop, where it cannot wait for the contents db, the keys last read
        or written by this process: `abuild_context` reads them)."""
        if not enable_agentic_filters:
            return self._context(None)
        bridge = self.sync_bridge
        on_loop = getattr(bridge, "in_loop_thread", lambda: False)()
        if bridge.can_block and not on_loop:
            return self._context(self.get_valid_filters())
        return self._context(set(self.known_filter_keys))

    async def abuild_context(self, enable_agentic_filters: bool = False, **kwargs: Any) -> str:
        """`build_context`, awaited."""
        valid = await self.aget_valid_filters() if enable_agentic_filters else None
        return self._context(valid)

    def get_tools(
        self,
        run_response: Any = None,
        run_context: Any = None,
        knowledge_filters: Any = None,
        async_mode: bool = False,
        enable_agentic_filters: bool = False,
        agent: Any = None,
        **kwargs: Any,
    ) -> list[Any]:
        """The ``search_knowledge_base`` tool on this knowledge base, searching with
        ``knowledge_filters`` (and, with ``enable_agentic_filters``, the model's own,
        kept to the keys the contents hold); what it finds is added to
        ``run_response.references`` when given."""
        from ..tools.function import Function

        knowledge = self

        def record(query: str, documents: list[Document], started: float) -> str:
            if run_response is not None and documents:
                found = MessageReferences(
                    query, [d.to_dict() for d in documents], round(time.time() - started, 4)
                )
                if getattr(run_response, "references", None) is None:
                    run_response.references = []
                run_response.references.append(found)
            return documents_text(documents)

        def merged(filters: Any) -> Any:
            asked = agentic_filters(filters)
            if not asked:
                return knowledge_filters
            own = knowledge_filters if isinstance(knowledge_filters, dict) else {}
            valid, _ = knowledge.validate_filters({**asked, **own})
            return valid or None

        async def amerged(filters: Any) -> Any:
            asked = agentic_filters(filters)
            if not asked:
                return knowledge_filters
            own = knowledge_filters if isinstance(knowledge_filters, dict) else {}
            valid, _ = await knowledge.avalidate_filters({**asked, **own})
            return valid or None

        tool: Callable[..., Any]
        if async_mode:

            async def asearch_knowledge_base(query: str, filters: list[Any] | None = None) -> str:
                """Search the knowledge base for passages about ``query``.

                Args:
                    query: What to look for.
                    filters: Metadata filters, each {"key": ..., "value": ...}.
                """
                started = time.time()
                found = await knowledge.asearch(query, filters=await amerged(filters))
                return record(query, found, started)

            tool = asearch_knowledge_base
        else:

            def search_knowledge_base(query: str, filters: list[Any] | None = None) -> str:
                """Search the knowledge base for passages about ``query``.

                Args:
                    query: What to look for.
                    filters: Metadata filters, each {"key": ..., "value": ...}.
                """
                started = time.time()
                found = knowledge.search(query, filters=merged(filters))
                return record(query, found, started)

            tool = search_knowledge_base
        function = Function.from_callable(tool, name=SEARCH_TOOL)
        if not enable_agentic_filters and function.parameters:
            # the model is offered the query alone
            function.parameters["properties"].pop("filters", None)
        return [function]

    async def aget_tools(
        self,
        run_response: Any = None,
        run_context: Any = None,
        knowledge_filters: Any = None,
        async_mode: bool = True,
        enable_agentic_filters: bool = False,
        agent: Any = None,
        **kwargs: Any,
    ) -> list[Any]:
        """`get_tools`, async by default."""
        return self.get_tools(
            run_response,
            run_context,
            knowledge_filters,
            async_mode,
            enable_agentic_filters,
            agent,
            **kwargs,
        )

    # -- documents for a query -------------------------------------------------------------

    def retrieve(
        self, query: str, max_results: int | None = None, filters: Any = None, **kwargs: Any
    ) -> list[Document]:
        """The documents relevant to ``query`` (`search`)."""
        found: list[Document] = self.search(query, max_results, filters)
        return found

    async def aretrieve(
        self, query: str, max_results: int | None = None, filters: Any = None, **kwargs: Any
    ) -> list[Document]:
        """`retrieve`, awaited."""
        found: list[Document] = await self.asearch(query, max_results, filters)
        return found
