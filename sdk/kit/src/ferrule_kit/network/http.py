"""HTTP for provider plugins: a small aiohttp client, its retry policy and typed errors.

The client turns HTTP failures into typed `ferrule_kit.errors`, retries what may be
retried, and feeds streamed replies to the one SSE reader (`ferrule_kit.network.sse`).

A provider plugin is two pieces (as pydantic-ai splits them): a *translator* (our
`InferInput` to the provider's request JSON; the provider's stream events to our deltas)
and an *auth* piece (the headers carrying the key). Both meet here::

    client = HTTPClient(provider="openai", base_url="https://api.openai.com/v1",
                        headers={"Authorization": f"Bearer {key}"}, secrets=[key])
    events = await client.open_sse("/chat/completions", request_json)   # retried as needed
    try:
        async for event in events:            # SSEEvent(event, data, id, retry)
            ...translate event.data...
    finally:
        await events.aclose()                 # abandoning a stream drops its connection
    await client.close()                      # the component's close()

- `sse_events` (from `ferrule_kit.network.sse`, named here too) parses bytes as the WHATWG
  ``text/event-stream`` format.
- `RetryPolicy` decides whether and when to try again: 408, 409, 429, 5xx and 529 and
  connection failures before the first streamed byte; exponential backoff with jitter;
  ``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date) or a delay the provider
  put in the body (Gemini's ``RetryInfo.retryDelay``, parsed by that plugin); a bounded
  total deadline. Never 400, 401, 403, 404, or a 429 the provider marks as quota or
  billing exhaustion (the plugin's error parser says which, `ProviderErrorInfo.quota`).
- `HTTPClient` holds one aiohttp session per component, created lazily on the running
  loop. A read timeout catches stalled servers; a timeout is reported at once, not
  retried (a stalled server would otherwise cost several timeouts). Keys live only in request headers and are
  scrubbed from every provider message that reaches an error.

aiohttp is imported when the first request is made, never at ``import ferrule``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import time
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Mapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import get_logger

# ``scrub`` is the kernel's one scrubber under the name the kit's users import.
from ferrule_kernel import scrub_secrets as scrub

from ferrule_kit.errors import (
    AuthenticationError,
    MissingAPIKeyError,
    ModelError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderBadRequestError,
    ProviderConnectionError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    QuotaExceededError,
    RateLimitError,
    StreamInterruptedError,
)

from .sse import SSEEvent, sse_events

if TYPE_CHECKING:
    import aiohttp

    from ferrule_kit.models.providerspec import ProviderAttributes

__all__ = [
    "ErrorParser",
    "HTTPClient",
    "ProviderErrorInfo",
    "RetryPolicy",
    "SSEEvent",
    "Timeouts",
    "environment_base_url",
    "parse_error_body",
    "provider_error",
    "resolve_api_key",
    "retry_after_seconds",
    "scrub",
    "sse_events",
]

log = get_logger("ferrule.http")


# -- Errors ---------------------------------------------------------------------------


@attrs.frozen
class ProviderErrorInfo:
    """What a provider said about a failed request, parsed by its plugin."""

    message: str
    code: str | None = None
    type: str | None = None
    #: A quota or billing limit (an exhausted 429): never retried.
    quota: bool = False
    #: A delay the provider asked for in the body, in seconds (e.g. Gemini's retryDelay).
    retry_delay: float | None = None


def parse_error_body(status: int, body: bytes, headers: Mapping[str, str]) -> ProviderErrorInfo:
    """The generic error parser: ``{"error": {"message", "type", "code"}}`` (OpenAI and
    compatible servers), ``{"error": "text", "code": ...}`` (xAI), ``{"message": ...}``,
    or the body as text. Providers with their own shapes pass their own parser."""
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text) if text else None
    except ValueError:
        payload = None
    if isinstance(payload, list) and payload and isinstance(payload[0], dict):
        payload = payload[0]  # some servers wrap the error object in a list
    if not isinstance(payload, dict):
        return ProviderErrorInfo(message=text[:2000] or f"HTTP {status} with an empty body")
    error = payload.get("error", payload)
    if isinstance(error, str):
        code = payload.get("code")
        return ProviderErrorInfo(message=error, code=None if code is None else str(code))
    if not isinstance(error, dict):
        return ProviderErrorInfo(message=text[:2000])
    message = error.get("message") or payload.get("message") or text[:2000]
    code, kind = error.get("code"), error.get("type")
    return ProviderErrorInfo(
        message=str(message),
        code=None if code is None else str(code),
        type=None if kind is None else str(kind),
        quota=status == 429 and "insufficient_quota" in (code, kind),
    )


def provider_error(
    provider: str, status: int | None, info: ProviderErrorInfo, **details: Any
) -> ModelError:
    """The typed error for a provider's failure (HTTP status, or a mid-stream error event
    carrying the equivalent status)."""
    cls: type[ModelError]
    if info.quota:  # billing or quota exhaustion, whatever the status (Anthropic: 402)
        cls = QuotaExceededError
    elif status in (400, 422):
        cls = ProviderBadRequestError
    elif status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = PermissionDeniedError
    elif status == 404:
        cls = ModelNotFoundError
    elif status == 408:
        cls = ProviderTimeoutError
    elif status == 429:
        cls = RateLimitError
    elif status is not None and status >= 500:
        cls = ProviderUnavailableError
    else:
        cls = ModelError
    where = f" (HTTP {status})" if status is not None else ""
    return cls(
        f"{provider}{where}: {info.message}",
        provider=provider,
        status=status,
        provider_message=info.message,
        code=info.code,
        type=info.type,
        **details,
    )


def resolve_api_key(
    provider: str, api_key: str | None, variables: Sequence[str], *, required: bool = True
) -> str | None:
    """The key given, else the first of the environment ``variables`` that is set, else the
    one the user stored for ``provider`` (``ferrule keys set``, `ferrule_kit.network.keys`). A
    missing required key raises `MissingAPIKeyError` naming where it may come from."""
    import os

    from .keys import stored_key

    if api_key:
        return api_key
    for variable in variables:
        value = os.environ.get(variable)
        if value:
            return value
    stored = stored_key(provider)
    if stored or not required:
        return stored
    names = " or ".join(variables)
    raise MissingAPIKeyError(
        f"no API key for {provider}: set the {names} environment variable, store one with "
        f"`ferrule keys set {provider.lower()}`, or pass api_key=...",
        provider=provider,
        variables=list(variables),
    )


def environment_base_url(variables: Sequence[str], default: str) -> str:
    """A provider's endpoint when its component names no ``base_url``: the first of the
    environment ``variables`` that is set (the names the provider's official SDK reads,
    such as ``ANTHROPIC_BASE_URL``: a proxy, a gateway, a loopback server in tests), else
    ``default``. Without a trailing slash."""
    import os

    for variable in variables:
        value = os.environ.get(variable)
        if value:
            return value.rstrip("/")
    return default.rstrip("/")


# -- Retry policy ---------------------------------------------------------------------


def retry_after_seconds(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """The delay a server asked for: ``retry-after-ms`` (milliseconds), else ``retry-after``
    as seconds or as an HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(float(value) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


@attrs.frozen
class RetryPolicy:
    """When to try a failed request again, and after how long.

    Attempt n (1-based, counting the first try) that fails retryably is followed by a
    wait of ``min(initial_delay * multiplier**(n-1), max_delay)`` minus up to ``jitter``
    of it at random, unless the server named a delay, which is used as given. No retry
    starts past ``deadline`` seconds from the first try, nor beyond ``max_attempts``
    tries, nor when the server asks for more than ``max_retry_after`` seconds.
    """

    max_attempts: int = 4
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 8.0
    jitter: float = 0.25
    deadline: float = 60.0
    max_retry_after: float = 60.0
    random: Callable[[], float] = attrs.field(default=random.random, eq=False, repr=False)

    def retryable(
        self, status: int | None, *, quota: bool = False, headers: Mapping[str, str] | None = None
    ) -> bool:
        """Whether a failure is worth retrying. ``status`` None is a connection failure
        before the first streamed byte. ``x-should-retry`` (OpenAI, Anthropic) overrides
        the status, never a quota error."""
        if quota:
            return False
        hint = headers.get("x-should-retry") if headers else None
        if hint == "true":
            return True
        if hint == "false":
            return False
        if status is None:
            return True
        return status in (408, 409, 429) or status >= 500

    def backoff(self, attempt: int) -> float:
        delay = min(self.initial_delay * self.multiplier ** (attempt - 1), self.max_delay)
        return delay * (1.0 - self.jitter * self.random())

    def next_delay(self, attempt: int, elapsed: float, hinted: float | None = None) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or None to give up."""
        if attempt >= self.max_attempts:
            return None
        if hinted is not None:
            if hinted > self.max_retry_after:
                return None
            delay = hinted
        else:
            delay = self.backoff(attempt)
        if elapsed + delay > self.deadline:
            return None
        return delay


NO_RETRY = RetryPolicy(max_attempts=1)


@attrs.frozen
class Timeouts:
    """Seconds: to connect; between two reads of the reply (a stalled server); overall
    (None: a long generation may stream for as long as it keeps sending)."""

    connect: float = 10.0
    read: float = 60.0
    total: float | None = None


# -- The client -----------------------------------------------------------------------

ErrorParser = Callable[[int, bytes, Mapping[str, str]], ProviderErrorInfo]


class HTTPClient:
    """A provider's HTTP client: JSON requests and SSE streams with retries and typed errors.

    ``headers`` (the auth piece) are sent with every request and never shown: not in the
    repr, not in errors, not in logs; ``secrets`` are scrubbed from provider messages.
    """

    def __init__(
        self,
        *,
        provider: str,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        parse_error: ErrorParser = parse_error_body,
    ) -> None:
        self.provider = provider
        self.base_url = base_url.rstrip("/")
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        self._secrets = tuple(s for s in secrets if s)
        self._parse_error = parse_error
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def for_component(
        cls,
        connection: ProviderAttributes,
        *,
        provider: str,
        base_url: str,
        headers: Mapping[str, str],
        secrets: Sequence[str],
        parse_error: ErrorParser = parse_error_body,
    ) -> HTTPClient:
        """The client of a provider component, with the connection settings of the
        attributes every provider's ``define`` takes (`ferrule_kit.models.providerspec.
        ProviderAttributes`): ``read_timeout`` (seconds to wait for the next byte of a
        reply), ``max_retries`` (tries after the first), ``retry_delay`` /
        ``retry_multiplier`` (the first wait, and its growth) and ``extra_headers`` (under
        the plugin's own ``headers``, which win)."""
        return cls(
            provider=provider,
            base_url=base_url,
            headers={**(connection.extra_headers or {}), **headers},
            secrets=secrets,
            timeouts=Timeouts(read=connection.read_timeout),
            retry=RetryPolicy(
                max_attempts=connection.max_retries + 1,
                initial_delay=connection.retry_delay,
                multiplier=connection.retry_multiplier,
            ),
            parse_error=parse_error,
        )

    def __repr__(self) -> str:
        return f"HTTPClient(provider={self.provider!r}, base_url={self.base_url!r})"

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base_url}/{path.lstrip('/')}"

    async def _session_for_loop(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            import aiohttp

            timeout = aiohttp.ClientTimeout(
                total=self.timeouts.total,
                sock_connect=self.timeouts.connect,
                sock_read=self.timeouts.read,
            )
            self._session = aiohttp.ClientSession(timeout=timeout, raise_for_status=False)
            self._loop = loop
        return self._session

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            try:
                await session.close()
            except RuntimeError:  # its loop is gone; nothing left to release
                pass

    # -- errors ----------------------------------------------------------------------

    def _error(
        self, status: int, body: bytes, headers: Mapping[str, str], **details: Any
    ) -> tuple[ModelError, ProviderErrorInfo]:
        try:
            info = self._parse_error(status, body, headers)
        except Exception:  # a parser bug must not hide the provider's failure
            info = parse_error_body(status, body, headers)
        info = attrs.evolve(info, message=scrub(info.message, self._secrets))
        request_id = headers.get("x-request-id") or headers.get("request-id")
        if request_id:
            details["request_id"] = request_id
        return provider_error(self.provider, status, info, **details), info

    def _failure(
        self, cls: type[ModelError], what: str, exc: BaseException, **details: Any
    ) -> ModelError:
        # Only the exception's type and text, scrubbed: aiohttp exceptions hold the
        # request (headers included), so they are never chained or kept.
        reason = scrub(f"{type(exc).__name__}: {exc}".rstrip(": "), self._secrets)
        # ``details`` may name the reply's status (a 200 whose body is not JSON)
        details = {"provider": self.provider, "status": None, **details}
        return cls(f"{self.provider}: {what} ({reason})", provider_message=reason, **details)

    # -- requests --------------------------------------------------------------------

    async def _open(
        self,
        method: str,
        path: str,
        payload: Any,
        headers: Mapping[str, str] | None,
        params: Mapping[str, str] | None,
        stream: bool,
    ) -> tuple[aiohttp.ClientResponse, bytes]:
        """Send with retries until a 2xx reply whose first body bytes have arrived."""
        import aiohttp

        session = await self._session_for_loop()
        url = self.url(path)
        body = None if payload is None else json.dumps(payload, ensure_ascii=False).encode()
        request_headers = {**self._headers, **headers} if headers else self._headers
        start = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            hinted: float | None = None
            response: aiohttp.ClientResponse | None = None
            try:
                response = await session.request(
                    method, url, data=body, headers=request_headers, params=params
                )
                if response.status < 400:
                    first = await response.content.readany() if stream else await response.read()
                    return response, first
                error_body = await response.read()
                error, info = self._error(
                    response.status, error_body, response.headers, attempts=attempt
                )
                retryable = self.retry.retryable(
                    response.status, quota=info.quota, headers=response.headers
                )
                hinted = (
                    info.retry_delay
                    if info.retry_delay is not None
                    else retry_after_seconds(response.headers)
                )
                response.release()
            except asyncio.TimeoutError as exc:
                if response is not None:
                    response.close()
                raise self._failure(
                    ProviderTimeoutError,
                    f"no reply within the timeouts (connect {self.timeouts.connect:g}s, read {self.timeouts.read:g}s)",
                    exc,
                    attempts=attempt,
                ) from None
            except (aiohttp.ClientError, OSError) as exc:
                if response is not None:
                    response.close()
                error = self._failure(
                    ProviderConnectionError,
                    "connection failed before any reply",
                    exc,
                    attempts=attempt,
                )
                retryable = self.retry.retryable(None)
            if not retryable:
                raise error
            delay = self.retry.next_delay(attempt, time.monotonic() - start, hinted)
            if delay is None:
                raise error
            log.debug(
                "retrying",
                provider=self.provider,
                status=error.details.get("status"),
                attempt=attempt,
                delay=round(delay, 3),
            )
            await asyncio.sleep(delay)

    async def request_json(
        self,
        path: str,
        payload: Any = None,
        *,
        method: str = "POST",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> Any:
        """Send a request (retried as the policy allows) and return the decoded JSON reply."""
        response, body = await self._open(method, path, payload, headers, params, stream=False)
        response.release()
        try:
            return json.loads(body)
        except ValueError as exc:
            raise self._failure(
                StreamInterruptedError, "the reply is not valid JSON", exc, status=response.status
            ) from None

    async def open_sse(
        self,
        path: str,
        payload: Any = None,
        *,
        method: str = "POST",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, str] | None = None,
    ) -> AsyncGenerator[SSEEvent, None]:
        """Send a request (retried until its reply stream has started) and return its events.

        A failure after that ends the iteration with `StreamInterruptedError` (connection
        lost) or `ProviderTimeoutError` (nothing for ``timeouts.read`` seconds). Close the
        iterator (``aclose``) when abandoning it: that drops the connection.
        """
        request_headers = {"Accept": "text/event-stream", **(headers or {})}
        response, first = await self._open(
            method, path, payload, request_headers, params, stream=True
        )
        return sse_events(self._chunks(response, first))

    async def _chunks(self, response: aiohttp.ClientResponse, first: bytes) -> AsyncIterator[bytes]:
        import aiohttp

        content = response.content
        try:
            if first:
                yield first
            while True:
                try:
                    chunk = await content.readany()
                except asyncio.TimeoutError as exc:
                    raise self._failure(
                        ProviderTimeoutError,
                        f"the stream stalled for longer than the {self.timeouts.read:g}s read timeout",
                        exc,
                    ) from None
                except (aiohttp.ClientError, OSError) as exc:
                    raise self._failure(
                        StreamInterruptedError, "the stream broke off", exc
                    ) from None
                if not chunk:
                    return
                yield chunk
        finally:
            if content.is_eof():
                response.release()  # the whole reply arrived: the connection goes back to the pool
            else:
                response.close()  # abandoned mid-stream: drop the connection
