"""Agno's ``agno.utils`` as programs import it: `ferrule.utils.log` (the ``agno`` loggers and
``log_*``), `pprint` (printing a run), `media` (downloads, base64 data), `audio` (writing
audio), `encryption` (a Fernet key), `http` (refused: no shared HTTP client) and
`models.claude` (`MCPServerConfiguration`)."""
