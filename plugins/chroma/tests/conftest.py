from __future__ import annotations

from collections.abc import Iterator

import pytest
from ferrule_chroma.testing import ChromaServer


@pytest.fixture(scope="module")
def chroma_server() -> Iterator[ChromaServer]:
    """One Chroma server per test module (starting one takes a second or two)."""
    with ChromaServer() as server:
        yield server
