"""ferrule_kit.network.http: the SSE reader (spec cases and any chunking), the retry policy, and the
HTTP client against a real loopback server (retries, typed errors, timeouts, secrets)."""

from __future__ import annotations

import asyncio
import email.utils
import time

import pytest
from ferrule_kit.errors import (
    AuthenticationError,
    ModelNotFoundError,
    ProviderConnectionError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
    StreamInterruptedError,
)
from ferrule_kit.network.http import (
    HTTPClient,
    ProviderErrorInfo,
    RetryPolicy,
    SSEEvent,
    Timeouts,
    parse_error_body,
    retry_after_seconds,
    scrub,
    sse_events,
)
from ferrule_kit.testing.loopback import LoopbackServer, Pause, Reply, Reset, sse
from hypothesis import given
from hypothesis import strategies as st


async def _parse(chunks: list[bytes]) -> list[SSEEvent]:
    async def source():
        for chunk in chunks:
            yield chunk

    return [e async for e in sse_events(source())]


# -- SSE ------------------------------------------------------------------------------


async def test_sse_spec_cases():
    body = (
        b"\xef\xbb\xbf: a comment\n"
        b"data: first\n\n"
        b"event: named\r\ndata:no space\r\ndata:  two spaces\r\nid: 7\r\n\r\n"
        b"data\rretry: 1500\r\r"
        b"id: bad\x00id\nevent: ignored-without-data\n\n"
        b'data: {"a": 1}\nunknown: field\n\n'
        b"data: unterminated at EOF"
    )
    events = await _parse([body])
    assert events == [
        SSEEvent("first"),
        SSEEvent("no space\n two spaces", "named", "7"),
        SSEEvent("", "message", "7", 1500),
        SSEEvent('{"a": 1}', "message", "7"),
    ]


async def test_sse_cr_split_across_chunks_and_utf8_split():
    snow = "☃".encode()
    events = await _parse([b"data: a\r", b"\ndata: ", snow[:1], snow[1:] + b"\r", b"\r"])
    assert events == [SSEEvent("a\n☃")]


async def test_sse_invalid_utf8_is_replaced():
    assert await _parse([b"data: \xff\n\n"]) == [SSEEvent("\ufffd")]


_text = st.text(
    alphabet=st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)),
    max_size=30,
)


@given(
    events=st.lists(
        st.tuples(
            st.lists(_text, min_size=1, max_size=3), st.sampled_from([None, "update", "done"])
        ),
        min_size=1,
        max_size=8,
    ),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
)
async def test_sse_any_chunking_any_newline(events, newline, cuts):
    body = b"".join(
        (
            (f"event: {name}{newline}" if name else "")
            + "".join(f"data: {line}{newline}" for line in lines)
            + newline
        ).encode()
        for lines, name in events
    )
    points = sorted({c % (len(body) + 1) for c in cuts})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    parsed = await _parse(chunks)
    assert [(e.data, e.event) for e in parsed] == [
        ("\n".join(lines), name or "message") for lines, name in events
    ]


async def test_sse_closes_its_source():
    closed = []

    async def source():
        try:
            yield b"data: 1\n\n"
            yield b"data: 2\n\n"
        finally:
            closed.append(True)

    events = sse_events(source())
    assert (await events.__anext__()).data == "1"
    await events.aclose()
    assert closed == [True]


# -- retry policy ---------------------------------------------------------------------


def test_retryable_statuses():
    policy = RetryPolicy()
    for status in (408, 409, 429, 500, 502, 503, 529, None):
        assert policy.retryable(status)
    for status in (400, 401, 403, 404, 422):
        assert not policy.retryable(status)
    assert not policy.retryable(429, quota=True)
    assert not policy.retryable(429, quota=True, headers={"x-should-retry": "true"})
    assert not policy.retryable(503, headers={"x-should-retry": "false"})
    assert policy.retryable(400, headers={"x-should-retry": "true"})


@given(attempt=st.integers(1, 10), r=st.floats(0, 1))
def test_backoff_bounds(attempt, r):
    policy = RetryPolicy(random=lambda: r)
    base = min(0.5 * 2 ** (attempt - 1), 8.0)
    assert base * 0.75 - 1e-9 <= policy.backoff(attempt) <= base


def test_next_delay_respects_attempts_deadline_and_hints():
    policy = RetryPolicy(max_attempts=3, deadline=10, max_retry_after=5, random=lambda: 0.0)
    assert policy.next_delay(1, 0.0) == 0.5
    assert policy.next_delay(2, 0.0) == 1.0
    assert policy.next_delay(3, 0.0) is None  # attempts used up
    assert policy.next_delay(1, 0.0, hinted=2.5) == 2.5
    assert policy.next_delay(1, 0.0, hinted=6.0) is None  # asks longer than we wait
    assert policy.next_delay(1, 9.0, hinted=2.0) is None  # past the deadline


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    now = time.time()
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert 28 <= retry_after_seconds({"retry-after": date}, now=now) <= 31
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_parse_error_body_shapes():
    info = parse_error_body(
        429,
        b'{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}',
        {},
    )
    assert info.quota and info.message.startswith("You exceeded")
    info = parse_error_body(
        429, b'{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}', {}
    )
    assert not info.quota
    info = parse_error_body(
        400, b'{"code":"Client specified an invalid argument","error":"Incorrect API key"}', {}
    )
    assert (
        info.message == "Incorrect API key" and info.code == "Client specified an invalid argument"
    )
    assert (
        parse_error_body(502, b"<html>bad gateway</html>", {}).message == "<html>bad gateway</html>"
    )
    assert "empty body" in parse_error_body(503, b"", {}).message


def test_scrub():
    assert scrub("key sk-secret-123 was wrong", ["sk-secret-123"]) == "key *** was wrong"
    assert (
        scrub("Incorrect API key provided: sk-ab12********wxyz.", [])
        == "Incorrect API key provided: ***"
    )


# -- the client against a loopback server ---------------------------------------------

KEY = "sk-test-SECRET-0123456789"
FAST = RetryPolicy(initial_delay=0.01, max_delay=0.05, deadline=5)


def client(server: LoopbackServer, **kw) -> HTTPClient:
    kw.setdefault("retry", FAST)
    return HTTPClient(
        provider="testprov",
        base_url=server.url + "/v1",
        headers={"Authorization": f"Bearer {KEY}"},
        secrets=[KEY],
        **kw,
    )


def events_reply(*datas: str, **kw) -> Reply:
    return Reply.sse([sse(d) for d in datas], **kw)


async def read_all(c: HTTPClient) -> list[str]:
    events = await c.open_sse("/stream", {"q": 1})
    return [e.data async for e in events]


@pytest.fixture
async def server():
    async with LoopbackServer() as s:
        yield s


async def test_stream_and_request_shape(server):
    server.script(events_reply("a", "b"))
    c = client(server)
    try:
        assert await read_all(c) == ["a", "b"]
    finally:
        await c.close()
    request = server.requests[0]
    assert request.path == "/v1/stream" and request.json == {"q": 1}
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["accept"] == "text/event-stream"
    assert KEY not in repr(c)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503, 529])
async def test_retries_retryable_statuses(server, status):
    server.script(
        Reply.json({"error": {"message": "try later"}}, status=status), events_reply("ok")
    )
    c = client(server)
    try:
        assert await read_all(c) == ["ok"]
    finally:
        await c.close()
    assert len(server.requests) == 2


async def test_retry_after_is_honoured(server):
    server.script(
        Reply.json(
            {"error": {"message": "slow down"}}, status=429, headers={"retry-after-ms": "300"}
        ),
        events_reply("ok"),
    )
    c = client(server)
    start = time.monotonic()
    try:
        assert await read_all(c) == ["ok"]
    finally:
        await c.close()
    assert time.monotonic() - start >= 0.3


async def test_provider_delay_is_honoured(server):
    def parse(status, body, headers):
        return ProviderErrorInfo("busy", retry_delay=0.25)

    server.script(Reply.json({}, status=503), events_reply("ok"))
    c = client(server, parse_error=parse)
    start = time.monotonic()
    try:
        assert await read_all(c) == ["ok"]
    finally:
        await c.close()
    assert time.monotonic() - start >= 0.25


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (
            401,
            {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}},
            AuthenticationError,
        ),
        (
            404,
            {
                "error": {
                    "message": "The model `gpt-4-32k` does not exist",
                    "code": "model_not_found",
                }
            },
            ModelNotFoundError,
        ),
        (
            429,
            {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota"}},
            QuotaExceededError,
        ),
    ],
)
async def test_never_retried_and_typed(server, status, body, error):
    server.script(Reply.json(body, status=status))
    c = client(server)
    try:
        with pytest.raises(error) as info:
            await read_all(c)
    finally:
        await c.close()
    assert len(server.requests) == 1
    err = info.value
    assert err.details["status"] == status and err.details["provider"] == "testprov"
    assert body["error"]["message"].split(":")[0] in err.message
    text = repr(err) + str(err) + repr(err.details) + repr(err.__cause__) + repr(err.__context__)
    assert KEY not in text


async def test_retries_run_out_with_typed_error(server):
    server.script(*[Reply.json({"error": {"message": "overloaded"}}, status=529)] * 4)
    c = client(server, retry=RetryPolicy(max_attempts=3, initial_delay=0.01, deadline=5))
    try:
        with pytest.raises(ProviderUnavailableError, match="overloaded") as info:
            await read_all(c)
    finally:
        await c.close()
    assert info.value.details["attempts"] == 3 and len(server.requests) == 3
    assert server.pending == 1


async def test_rate_limit_beyond_deadline_gives_up(server):
    server.script(
        Reply.json({"error": {"message": "later"}}, status=429, headers={"retry-after": "120"})
    )
    c = client(server)
    try:
        with pytest.raises(RateLimitError):
            await read_all(c)
    finally:
        await c.close()
    assert len(server.requests) == 1


async def test_reset_before_first_byte_is_retried(server):
    server.script(Reply.reset(), events_reply("ok"))
    c = client(server)
    try:
        assert await read_all(c) == ["ok"]
    finally:
        await c.close()


async def test_reset_before_first_byte_gives_connection_error(server):
    server.script(*[Reply.reset()] * 2)
    c = client(server, retry=RetryPolicy(max_attempts=2, initial_delay=0.01))
    try:
        with pytest.raises(ProviderConnectionError):
            await read_all(c)
    finally:
        await c.close()


async def test_reset_after_first_byte_interrupts_the_stream(server):
    server.script(Reply.sse([sse("a"), Pause(0.05), Reset()]), events_reply("never"))
    c = client(server)
    got = []
    try:
        with pytest.raises(StreamInterruptedError):
            async for event in await c.open_sse("/stream", {}):
                got.append(event.data)
    finally:
        await c.close()
    # not retried: the stream had started
    assert got == ["a"] and len(server.requests) == 1 and server.pending == 1


async def test_stall_hits_read_timeout(server):
    server.script(Reply.sse([sse("a"), Pause(2.0), sse("b")]))
    c = client(server, timeouts=Timeouts(read=0.3))
    start = time.monotonic()
    try:
        with pytest.raises(ProviderTimeoutError):
            async for _ in await c.open_sse("/stream", {}):
                pass
    finally:
        await c.close()
    assert time.monotonic() - start < 1.5


async def test_abandoning_a_stream_closes_its_connection(server):
    server.script(Reply.sse([sse("a"), *[Pause(0.05), sse("more")] * 100]))
    c = client(server)
    try:
        events = await c.open_sse("/stream", {})
        assert (await events.__anext__()).data == "a"
        await events.aclose()
        await server.wait_disconnected(0, timeout=2)
    finally:
        await c.close()


async def test_request_json(server):
    server.script(Reply.json({"error": {"message": "boom"}}, status=500), Reply.json({"data": [1]}))
    c = client(server)
    try:
        assert await c.request_json("/models", method="GET") == {"data": [1]}
    finally:
        await c.close()


async def test_bad_request_reaches_the_validator_problem_list():
    def validate(request):
        return [] if request.json.get("model") else ["model: required"]

    async with LoopbackServer(validate=validate) as s:
        c = client(s)
        try:
            with pytest.raises(Exception, match="model: required"):
                await c.request_json("/x", {})
        finally:
            await c.close()
        assert s.problems and "model: required" in s.problems[0]
        s.problems.clear()


def test_threaded_server_with_sync_code():
    import urllib.request

    with LoopbackServer() as s:
        s.script(Reply.json({"ok": True}))
        with urllib.request.urlopen(s.url + "/ping") as response:
            assert response.read() == b'{"ok": true}'


async def test_session_per_loop_and_close(server):
    server.script(events_reply("x"))
    c = client(server)
    assert await read_all(c) == ["x"]
    session = c._session
    await c.close()
    assert session.closed
    await asyncio.sleep(0)


async def test_a_finished_stream_gives_its_connection_back(server):
    # The reader stops at [DONE] (before reading to EOF); the connection is still reused.
    server.script(events_reply("a", "[DONE]"), events_reply("b", "[DONE]"))
    c = client(server)
    try:
        for expected in ("a", "b"):
            events = await c.open_sse("/stream", {})
            try:
                async for event in events:
                    if event.data == "[DONE]":
                        break
                    assert event.data == expected
            finally:
                await events.aclose()
    finally:
        await c.close()
    assert server.requests[0].peer == server.requests[1].peer


async def test_an_abandoned_stream_is_not_reused(server):
    server.script(Reply.sse([sse("a"), Pause(0.2), sse("b")]), events_reply("c"))
    c = client(server)
    try:
        events = await c.open_sse("/stream", {})
        assert (await events.__anext__()).data == "a"
        await events.aclose()
        assert await read_all(c) == ["c"]
    finally:
        await c.close()
    assert server.requests[0].peer != server.requests[1].peer
