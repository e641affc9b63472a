"""ferrule_kit.models.sse_model: the connection half every SSE provider component shares, against
a loopback server; and the two http helpers it stands on (`HTTPClient.for_component`,
`SSEEvent.json_data`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import attrs
import pytest
from ferrule_kernel.trust import validating
from ferrule_kit.errors import MissingAPIKeyError, ProviderProtocolError, StreamInterruptedError
from ferrule_kit.models.lm import InferInput, finish, parse_infer_input, text_delta
from ferrule_kit.models.providerspec import ProviderAttributes
from ferrule_kit.models.sse_model import SSELanguageModel, keyed_client
from ferrule_kit.network.http import HTTPClient, SSEEvent, Timeouts, parse_error_body
from ferrule_kit.testing.loopback import LoopbackServer, Pause, Reply, sse

KEY = "sk-test-SECRET-0123456789"
ASK = parse_infer_input({"messages": [{"role": "user", "content": "Hi"}]})


class EchoingProvider(SSELanguageModel):
    """Events ``{"text": ...}`` become text deltas; ``{"end": true}`` finishes."""

    def __init__(self, server: LoopbackServer, max_retries: int = 0) -> None:
        client = HTTPClient.for_component(
            ProviderAttributes(model="echo-1", read_timeout=5.0, max_retries=max_retries),
            provider="echoing",
            base_url=server.url + "/v1",
            headers={"Authorization": f"Bearer {KEY}"},
            secrets=[KEY],
        )
        super().__init__(model="echo-1", url="/generate", client=client)
        self.translated = 0

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        return {"model": self.model, "prompt": inputs.messages[-1].text}

    async def translate(
        self, events: AsyncIterator[SSEEvent]
    ) -> AsyncGenerator[dict[str, Any], None]:
        async for event in events:
            data = event.json_data(self.client.provider)
            self.translated += 1
            if data.get("end"):
                yield finish("stop")
                return
            yield text_delta(data["text"])
        raise StreamInterruptedError("echoing: no end event", provider="echoing")


@pytest.fixture
async def server():
    async with LoopbackServer() as s:
        yield s


async def test_infer_posts_the_request_and_streams_the_translation(server):
    server.script(Reply.sse([sse('{"text": "Hel"}'), sse('{"text": "lo"}'), sse('{"end": true}')]))
    model = EchoingProvider(server)
    try:
        items = [item async for item in model.infer(ASK)]
    finally:
        await model.close()
    assert [i["message"]["content"][0]["text"] for i in items] == ["Hel", "lo", ""]
    assert items[-1]["finish_reason"] == "stop"
    (request,) = server.requests
    assert request.path == "/v1/generate" and request.json == {"model": "echo-1", "prompt": "Hi"}
    assert repr(model) == "EchoingProvider(model='echo-1', url='/generate')"
    assert KEY not in repr(model)


async def test_a_translation_that_ends_early_reads_no_further(server):
    server.script(Reply.sse([sse('{"end": true}'), sse('{"text": "ignored"}')]))
    model = EchoingProvider(server)
    try:
        assert [i["finish_reason"] async for i in model.infer(ASK)] == ["stop"]
    finally:
        await model.close()
    assert model.translated == 1


async def test_abandoning_the_reply_drops_its_connection(server):
    server.script(Reply.sse([sse('{"text": "a"}'), *[Pause(0.05), sse('{"text": "b"}')] * 100]))
    model = EchoingProvider(server)
    try:
        stream = model.infer(ASK)
        assert (await stream.__anext__())["message"]["content"][0]["text"] == "a"
        await stream.aclose()
        await server.wait_disconnected(0, timeout=2)
    finally:
        await model.close()


async def test_an_event_that_is_not_json_is_a_protocol_error(server):
    server.script(Reply.sse([sse('{"text": "a"}'), sse("{not json")]))
    model = EchoingProvider(server)
    try:
        with pytest.raises(ProviderProtocolError) as info:
            [item async for item in model.infer(ASK)]
    finally:
        await model.close()
    assert info.value.message == "echoing sent a stream event that is not JSON: '{not json'"
    assert info.value.details["provider_message"] == "{not json"


async def test_max_retries_counts_the_tries_after_the_first(server):
    busy = Reply.json({"error": {"message": "busy"}}, status=503)
    server.script(busy, busy, Reply.sse([sse('{"end": true}')]))
    model = EchoingProvider(server, max_retries=2)
    model.client.retry = attrs.evolve(model.client.retry, initial_delay=0.01, max_delay=0.02)
    try:
        assert [i["finish_reason"] async for i in model.infer(ASK)] == ["stop"]
    finally:
        await model.close()
    assert len(server.requests) == 3


def trusted(**fields: Any) -> ProviderAttributes:
    """Attributes as the host's own code gives them (``base_url`` and ``extra_headers``
    are refused from the network)."""
    with validating(True):
        return ProviderAttributes(model="m", **fields)


async def test_for_component_maps_the_provider_attributes_connection_settings():
    connection = trusted(
        read_timeout=7.5,
        max_retries=0,
        retry_delay=0.25,
        retry_multiplier=3.0,
        extra_headers={"x-gateway": "g", "x-api-key": "from-extra"},
    )
    async with LoopbackServer() as server:
        client = HTTPClient.for_component(
            connection, provider="p", base_url=server.url, headers={"x-api-key": "k"}, secrets=["k"]
        )
        assert client.timeouts == Timeouts(read=7.5)
        assert client.retry.max_attempts == 1
        assert (client.retry.initial_delay, client.retry.multiplier) == (0.25, 3.0)
        server.script(Reply.json({}))
        try:
            await client.request_json("/ping", {})
        finally:
            await client.close()
    sent = server.requests[0].headers
    assert sent["x-gateway"] == "g"
    assert sent["x-api-key"] == "k"  # the plugin's own header wins


class _Wire:
    """A provider's wire module, as `keyed_client` reads one."""

    PROVIDER = "echoing"

    @staticmethod
    def default_base_url() -> str:
        return "http://127.0.0.1:9/v1"

    @staticmethod
    def request_headers(api_key: str) -> dict[str, str]:
        return {"x-echo-key": api_key}

    parse_error = staticmethod(parse_error_body)


async def test_keyed_client_sends_the_key_of_the_first_variable_set(monkeypatch):
    monkeypatch.delenv("ECHO_KEY", raising=False)
    monkeypatch.setenv("ECHO_OTHER_KEY", KEY)
    default = keyed_client(ProviderAttributes(model="m"), _Wire, ["ECHO_KEY", "ECHO_OTHER_KEY"])
    assert default.base_url == "http://127.0.0.1:9/v1"
    assert KEY not in repr(default)
    async with LoopbackServer() as server:
        given = trusted(api_key="given", base_url=server.url)
        server.script(Reply.json({}), Reply.json({"error": {"message": f"bad key {KEY}"}}, 400))
        for attributes in (given, trusted(base_url=server.url)):
            client = keyed_client(attributes, _Wire, ["ECHO_KEY", "ECHO_OTHER_KEY"])
            try:
                await client.request_json("/ping", {})
            except Exception as exc:
                assert KEY not in str(exc)  # the key is the client's secret, scrubbed
            finally:
                await client.close()
    assert [r.headers["x-echo-key"] for r in server.requests] == ["given", KEY]


def test_keyed_client_without_a_key_names_the_variables(monkeypatch, tmp_path):
    monkeypatch.delenv("ECHO_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with pytest.raises(MissingAPIKeyError, match="ECHO_KEY"):
        keyed_client(ProviderAttributes(model="m"), _Wire, ["ECHO_KEY"])
