"""The Runtime's HTTP transport to `ferrule serve`: `HttpTransport` over `KernelClient`, and the wire's errors.

``Runtime(url=...)`` and ``AsyncRuntime(url=...)`` (`ferrule.runtime`) send their requests
through `HttpTransport`, which speaks the `ferrule._transport.Transport` protocol as the
in-process `KernelTransport` does, so the Runtime's methods are written once for both.

The wire protocol (docs/serve.md): each request is a JSON ``POST`` under ``/ferrule/v1``;
a result is ``{"output": {...}}`` (or ``{}``), an error is ``{"error": FerruleError.to_dict()}``
and is raised here again as the same type with the same message (`error_from_dict`).
``iter`` answers with NDJSON lines ``{"item": ...}`` ending in ``{"end": true}`` or one
``{"error": ...}``; closing the stream closes its connection, which stops the producer
on the server.

This module imports aiohttp, so ``import ferrule`` never imports it: `Runtime` loads it
only when given a ``url``. It imports nothing of `ferrule.runtime`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import aiohttp
from ferrule_kernel import FerruleError, InvalidInputError, error_from_dict, register_error_kind
from ferrule_kit import errors as _sdk_errors  # noqa: F401  (registers the sdk's error kinds for error_from_dict)

from ._transport import Awaiting, Listing

#: Where the kernel's requests live, below the server's URL.
KERNEL_API = "/ferrule/v1"
NDJSON = "application/x-ndjson"


@register_error_kind
class UnauthorizedError(FerruleError):
    """The ferrule server wants a bearer token and got none, or another one."""

    kind = "unauthorized"


@register_error_kind
class RequestTooLargeError(InvalidInputError):
    """The request body is larger than the server accepts."""

    kind = "request_too_large"


@register_error_kind
class UnsupportedMediaTypeError(InvalidInputError):
    """The request body is not sent as JSON (``Content-Type: application/json``)."""

    kind = "unsupported_media_type"


@register_error_kind
class RequestTimeoutError(InvalidInputError):
    """The client did not send its whole request body within the server's read timeout."""

    kind = "request_timeout"


@register_error_kind
class MisdirectedRequestError(FerruleError):
    """The request names a ``Host`` the server does not answer to (e.g. a DNS-rebinding
    page: a name of the attacker's that resolves to the server's address)."""

    kind = "misdirected_request"


@register_error_kind
class CrossOriginError(FerruleError):
    """The request comes from a web page of an origin the server does not allow."""

    kind = "cross_origin_refused"


@register_error_kind
class RemoteError(FerruleError):
    """The server could not be reached, or answered outside the protocol (e.g. a stream
    cut before its end)."""

    kind = "remote_error"


def _encode(body: dict[str, Any]) -> bytes:
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"inputs must be JSON-compatible to cross the network: {exc}", field="inputs"
        ) from None


class KernelClient:
    """Sends the five requests to a ferrule server; one aiohttp session, on the loop of
    its first use."""

    def __init__(self, url: str, token: str | None = None, timeout: float | None = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidInputError(
                f"url must start with http:// or https://, got {url!r}", field="url"
            )
        self.url = url.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:  # never the token
        return f"KernelClient({self.url!r})"

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers,
                # A stream may run for as long as a model generates: only connecting is bounded.
                timeout=aiohttp.ClientTimeout(total=self._timeout, sock_connect=30),
                # The caller's own concurrency bounds the connections (e.g. 500 parallel streams).
                connector=aiohttp.TCPConnector(limit=0),
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _unreachable(self, exc: BaseException) -> RemoteError:
        return RemoteError(
            f"ferrule server at {self.url} failed: {type(exc).__name__}: {exc}", url=self.url
        )

    async def _post(self, request: str, body: dict[str, Any]) -> aiohttp.ClientResponse:
        data = _encode(body)
        try:
            response = await self._get_session().post(
                f"{self.url}{KERNEL_API}/{request}", data=data
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise self._unreachable(exc) from exc
        if response.status != 200:
            raise await self._error(response)
        return response

    async def _error(self, response: aiohttp.ClientResponse) -> FerruleError:
        try:
            text = await response.text()
        except (aiohttp.ClientError, TimeoutError) as exc:
            return self._unreachable(exc)
        finally:
            response.release()
        try:
            error = json.loads(text)["error"]
            if isinstance(error, dict) and "kind" in error:
                return error_from_dict(error)
        except (ValueError, KeyError, TypeError):
            pass
        return RemoteError(
            f"ferrule server at {self.url} answered HTTP {response.status}: {text[:200]}",
            url=self.url,
            status=response.status,
        )

    async def request(self, request: str, body: dict[str, Any]) -> dict[str, Any]:
        """A request with one answer: ``call``, ``call_method``, ``define`` or ``delete``."""
        response = await self._post(request, body)
        try:
            answer = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise self._unreachable(exc) from exc
        finally:
            response.release()
        return answer.get("output", {})

    async def get(self, what: str) -> Any:
        """Introspection: ``plugins``, ``operators``, ``component_types``, ``components``."""
        try:
            response = await self._get_session().get(f"{self.url}{KERNEL_API}/{what}")
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise self._unreachable(exc) from exc
        if response.status != 200:
            raise await self._error(response)
        try:
            return await response.json(content_type=None)
        finally:
            response.release()

    async def open_stream(self, body: dict[str, Any]) -> aiohttp.ClientResponse:
        """Start ``iter``: resolution and validation errors raise here, as in-process."""
        return await self._post("iter", body)

    async def items(self, response: aiohttp.ClientResponse) -> AsyncGenerator[dict[str, Any], None]:
        """The items of an open stream; leaving early closes the connection, which
        cancels the producer on the server."""
        complete = False
        buffer = b""
        try:
            async for chunk in response.content.iter_any():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    frame = json.loads(line)
                    if "item" in frame:
                        yield frame["item"]
                    elif "error" in frame:
                        complete = True
                        raise error_from_dict(frame["error"])
                    else:  # {"end": true}
                        complete = True
                        return
            raise RemoteError(
                f"ferrule server at {self.url} ended a stream before its end", url=self.url
            )
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise self._unreachable(exc) from exc
        finally:
            if complete:
                response.release()
            else:
                response.close()


class Posting:
    """An `Exchange` sent when run: ``call`` / ``call_method`` (`run`) or ``iter`` (`open`)."""

    inline = False
    __slots__ = ("_body", "_client", "_request")

    def __init__(self, client: KernelClient, request: str, body: dict[str, Any]) -> None:
        self._client, self._request, self._body = client, request, body

    def run_inline(self) -> dict[str, Any]:
        raise AssertionError("a request to a ferrule server runs on the loop")

    def stream_inline(self) -> Iterator[dict[str, Any]]:
        raise AssertionError("a request to a ferrule server runs on the loop")

    async def run(self) -> dict[str, Any]:
        return await self._client.request(self._request, self._body)

    async def open(self) -> AsyncGenerator[dict[str, Any], None]:
        return self._client.items(await self._client.open_stream(self._body))


class HttpTransport:
    """The kernel of a ferrule server, over HTTP. It keeps the names of the components
    defined through it: `aclose` deletes those (and only those), as closing the in-process
    transport deletes its kernel's."""

    def __init__(self, client: KernelClient) -> None:
        self.client = client
        self.names: list[str] = []

    def define(self, component_type: str, name: str, attrs: Any, placement: Any) -> Awaiting[None]:
        body = {"component_type": component_type, "name": name, "attrs": attrs}
        if placement is not None:
            body["placement"] = placement
        return Awaiting(lambda: self._define(name, body))

    async def _define(self, name: str, body: dict[str, Any]) -> None:
        await self.client.request("define", body)
        self.names.append(name)

    def delete(self, name: str) -> Awaiting[None]:
        return Awaiting(lambda: self._delete(name))

    async def _delete(self, name: str) -> None:
        await self.client.request("delete", {"name": name})
        if name in self.names:
            self.names.remove(name)

    def call(self, target: str, inputs: Any) -> Posting:
        return Posting(self.client, "call", {"operator": target, "inputs": inputs})

    def call_method(self, name: str, method: str, inputs: Any) -> Posting:
        body = {"name": name, "method": method, "inputs": inputs}
        return Posting(self.client, "call_method", body)

    def iter(self, target: str, inputs: Any) -> Posting:
        return Posting(self.client, "iter", {"operator": target, "inputs": inputs})

    def iter_method(self, name: str, method: str, inputs: Any) -> Posting:
        return Posting(self.client, "iter", {"name": name, "method": method, "inputs": inputs})

    def describe(self, listing: Listing) -> Awaiting[list[dict[str, Any]]]:
        return Awaiting(lambda: self.client.get(listing))

    async def aclose(self) -> None:
        try:
            for name in list(self.names):
                try:
                    await self._delete(name)
                except FerruleError:  # already gone, or the server is: nothing left to close
                    self.names.remove(name)
        finally:
            await self.client.close()
