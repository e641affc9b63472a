"""What every client test shares: a real `ferrule serve` process per test module, started
the way a user starts it (``python -m ferrule serve``), once with a token and once
without, serving the test model (``test``: it echoes the last user message, reasons when
asked, answers a JSON schema with a value that fits it, and calls the forced tool of a
``tool_choice``), ``tool-bot`` (`serve_models.tool_bot`) and the offline embedder
(``all-MiniLM-L6-v2``).

Each client is used as its own documentation shows, pointed at the server by its base
URL and given the token as its API key (any non-empty key when there is none).

Not run, because they need the internet: langchain's ``OpenAIEmbeddings`` with its
default ``check_embedding_ctx_length=True`` (it downloads tiktoken's encoding first, to
send token ids), and ``llm``'s embedding models (OpenAI's own, with no base-URL setting).
docs/serve.md's Clients table says the same."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# --import-mode=importlib does not put test folders on sys.path; the helper modules here need it.
sys.path.insert(0, str(Path(__file__).parent))

from client_server import TOKEN, Served, serving


@pytest.fixture(scope="module", params=[TOKEN, None], ids=["token", "no-token"])
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    with serving(request.param) as server:
        yield server
