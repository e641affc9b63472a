"""Web search through DuckDuckGo: the ``duckduckgo_search`` and ``duckduckgo_news`` operators,
the tools of ``ferrule.tools.duckduckgo.DuckDuckGoTools``."""
