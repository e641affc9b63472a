"""`DuckDuckGoTools`: web search for an agent, under the name and import path Agno uses.

    from ferrule.tools.duckduckgo import DuckDuckGoTools
    agent = Agent(model=model, tools=[DuckDuckGoTools()])

A face over the ``duckduckgo_search`` and ``duckduckgo_news`` operators of ferrule-duckduckgo
(``pip install ferrule-duckduckgo``): each tool calls its operator on the agent's runtime,
so the search runs wherever the runtime does. The endpoint: ``base_url``, else
``$FERRULE_DUCKDUCKGO_URL``, else DuckDuckGo's own (plugins/duckduckgo/README.md).
"""

from __future__ import annotations

from typing import Any, Literal

from ferrule_kit.network.hostpolicy import checked_arguments

from . import Tool, ToolContext

__all__ = ["DuckDuckGoTools"]

_OPERATORS = {
    "duckduckgo_search": "Search the web with DuckDuckGo for a query; returns the top results "
    "(title, href, body).",
    "duckduckgo_news": "Search DuckDuckGo for the latest news on a query; returns articles "
    "(date, title, body, url, image, source).",
}


class DuckDuckGoTools:
    """The model gets ``duckduckgo_search(query, max_results=5)`` (with ``enable_search``) and
    ``duckduckgo_news(query, max_results=5)`` (with ``enable_news``). ``fixed_max_results``
    takes ``max_results`` from the model; ``modifier`` goes before every query
    (``"site:python.org"``); ``region``, ``safesearch``, ``timelimit`` and ``timeout`` are
    the operators' own settings (see ferrule-duckduckgo). A failed search (rate limited,
    unreachable) is the tool's result, as an error the model reads; the run goes on.
    """

    def __init__(
        self,
        *,
        enable_search: bool = True,
        enable_news: bool = True,
        fixed_max_results: int | None = None,
        modifier: str | None = None,
        region: str = "wt-wt",
        safesearch: Literal["on", "moderate", "off"] = "moderate",
        timelimit: Literal["d", "w", "m", "y"] | None = None,
        timeout: float = 10.0,
        base_url: str | None = None,
    ) -> None:
        self.enabled = [
            name
            for name, on in (("duckduckgo_search", enable_search), ("duckduckgo_news", enable_news))
            if on
        ]
        self.fixed_max_results = fixed_max_results
        self.modifier = modifier
        self.settings: dict[str, Any] = {
            "region": region,
            "safesearch": safesearch,
            "timeout": timeout,
        }
        if timelimit is not None:
            self.settings["timelimit"] = timelimit
        if base_url is not None:
            self.settings["base_url"] = base_url

    def __repr__(self) -> str:
        return f"DuckDuckGoTools({self.enabled!r})"

    def _tool(self, operator: str) -> Tool:
        properties: dict[str, Any] = {
            "query": {"type": "string", "description": "The query to search for."}
        }
        if self.fixed_max_results is None:
            properties["max_results"] = {
                "type": "integer",
                "minimum": 1,
                "maximum": 30,
                "description": "How many results to return (default 5).",
            }
        parameters = {"type": "object", "properties": properties, "required": ["query"]}

        async def search(arguments: dict[str, Any], context: ToolContext[Any]) -> Any:
            checked_arguments(operator, arguments, offered=properties)  # the host's settings win
            query = arguments.get("query", "")
            if self.modifier:
                query = f"{self.modifier} {query}"
            max_results = self.fixed_max_results or arguments.get("max_results", 5)
            inputs = {**self.settings, "query": query, "max_results": max_results}
            output = await context.runtime.acall(operator, inputs)
            return output["results"]

        return Tool(operator, _OPERATORS[operator], parameters, search)

    async def list_tools(self) -> list[Tool]:
        return [self._tool(operator) for operator in self.enabled]

    async def aclose(self) -> None:
        """Nothing to close: each search is one request."""
