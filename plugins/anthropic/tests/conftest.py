"""A loopback Anthropic (validating every request) and a runtime with a Claude component
pointed at it, as `ferrule_kit.testing.providers.ProviderConformance` takes it."""

from __future__ import annotations

import pytest
from ferrule import AsyncRuntime
from ferrule_anthropic.testing import error_reply, message_events, stream_reply, validator
from ferrule_kit.testing.loopback import server_fixture
from ferrule_kit.testing.providers import ProviderUnderTest, ProviderWire

#: A key shaped like Anthropic's; tests check it never leaks.
KEY = "sk-ant-api03-LOOPBACK-secret-0123456789abcdef"
MODEL = "claude-sonnet-4-20250514"
#: Anthropic's error types by HTTP status.
ERROR_TYPES = {401: "authentication_error", 503: "api_error"}
WIRE = ProviderWire(
    pieces=lambda texts: message_events(text=list(texts)),
    stream=stream_reply,
    error=lambda status, message, headers: error_reply(
        status, ERROR_TYPES[status], message, headers=headers
    ),
    not_json=b'event: content_block_delta\ndata: {"type": "content_bl\n\n',
    opening=3,  # message_start, ping, content_block_start
)


@pytest.fixture
def api_key() -> str:
    return KEY


server = server_fixture(validator)


@pytest.fixture
async def claude(server):
    """``claude`` defined against the loopback server as the provider suite has it."""
    async with AsyncRuntime() as rt:
        yield await ProviderUnderTest.define(
            rt, server, WIRE, "anthropic_language_model", MODEL, KEY
        )
