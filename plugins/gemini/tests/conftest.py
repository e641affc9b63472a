"""A loopback Gemini (validating every request) and a runtime with a Gemini component
pointed at it, as `ferrule_kit.testing.providers.ProviderConformance` takes it."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_gemini.testing import error_body, reply_records, stream_reply, validator
from ferrule_kit.testing.loopback import Reply, server_fixture
from ferrule_kit.testing.providers import ProviderUnderTest, ProviderWire

#: A key shaped like Google's; tests check it never leaks.
KEY = "AIzaSyLOOPBACK-secret-0123456789abcdefXYZ"
MODEL = "gemini-2.5-flash"
#: Google's status names by HTTP status.
STATUSES = {401: "UNAUTHENTICATED", 503: "UNAVAILABLE"}
WIRE = ProviderWire(
    pieces=lambda texts: reply_records(text=list(texts)),
    stream=stream_reply,
    error=lambda status, message, headers: Reply.json(
        error_body(status, STATUSES[status], message), status=status, headers=headers
    ),
    not_json=b'data: {"candidates": [\r\n\r\n',
)


@pytest.fixture
def api_key() -> str:
    return KEY


server = server_fixture(validator)


@pytest.fixture
async def gemini(server):
    """``gemini`` defined against the loopback server as the provider suite has it."""
    async with AsyncRuntime() as rt:
        yield await ProviderUnderTest.define(
            rt, server, WIRE, "gemini_language_model", MODEL, KEY, path="/v1beta"
        )
