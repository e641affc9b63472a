"""The kernel's requests over HTTP, what ``Runtime(url=...)`` (`ferrule.remote`) speaks:
``POST {KERNEL_API}/{define,delete,call,call_method,iter}`` with a JSON body of the
request's fields, ``GET {KERNEL_API}/{plugins,operators,component_types}``. A result is
``{"output": ...}``, an error ``{"error": FerruleError.to_dict()}`` with the status of its
kind family (`ferrule.server.statuses`); ``iter`` streams NDJSON lines ``{"item": ...}`` ending in ``{"end": true}`` or one
``{"error": ...}``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from aiohttp import web
from ferrule_kernel import FerruleError, InvalidInputError, Kernel, get_logger
from ferrule_kernel.errors import interrupts_request

from ..remote import KERNEL_API, NDJSON, UnauthorizedError
from .gate import Gate, Handler, access_logged, dumps
from .statuses import status_of

log = get_logger("ferrule.server")

#: Each kernel request and the fields of its JSON body.
REQUESTS = {
    "define": frozenset({"component_type", "name", "attrs", "placement"}),
    "delete": frozenset({"name"}),
    "call": frozenset({"operator", "inputs"}),
    "call_method": frozenset({"name", "method", "inputs"}),
    "iter": frozenset({"operator", "name", "method", "inputs"}),
}


class KernelRoutes:
    """The kernel routes of one server: each handler checks the token, reads and checks
    the body, and answers every failure as ``{"error": ...}``."""

    def __init__(self, kernel: Kernel, gate: Gate) -> None:
        self.kernel = kernel
        self.gate = gate

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        kernel_api = f"{prefix}{KERNEL_API}"
        for name, fields in REQUESTS.items():
            router.add_post(f"{kernel_api}/{name}", self.handler(getattr(self, name), fields))
        for name in ("plugins", "operators", "component_types"):
            router.add_get(f"{kernel_api}/{name}", self.introspection(name))

    def handler(
        self,
        handle: Callable[[Any, web.Request], Awaitable[web.StreamResponse]],
        fields: frozenset[str] | None = None,
    ) -> Handler:
        """A kernel request: ``fields`` are the keys its JSON body may have (None: no body)."""

        async def route(request: web.Request) -> web.StreamResponse:
            try:
                self.gate.admit(request)
                if not self.gate.authorized(request):
                    raise UnauthorizedError("a valid bearer token is required")
                body = None
                if fields is not None:
                    body = await self.gate.read_json(request)
                    if not isinstance(body, dict):
                        raise InvalidInputError(
                            "the request body must be a JSON object", field="body"
                        )
                    unknown = sorted(set(body) - fields)
                    if unknown:
                        raise InvalidInputError(
                            f"unknown field(s) in the request: {', '.join(unknown)}",
                            errors=[
                                {"path": f"$.{k}", "message": "unknown field"} for k in unknown
                            ],
                        )
                return await handle(body, request)
            except FerruleError as exc:
                return self.error(exc)
            except BaseException as exc:
                if interrupts_request(exc):  # the client left, the server stops, a Ctrl-C
                    raise
                # A bug of ours, or a plugin's BaseException that got past the kernel: it
                # ends this request only (let through, it would stop the server's loop).
                log.error("request_failed", path=request.path, error=repr(exc))
                return self.error(FerruleError("internal server error"))

        return access_logged(route)

    def error_line(self, exc: FerruleError) -> bytes:
        """``{"error": ...}`` as the client may see it; it always encodes."""
        return dumps({"error": self.gate.redact(self.gate.public(exc).to_dict())})

    def error(self, exc: FerruleError) -> web.Response:
        status = status_of(exc).ferrule
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return web.Response(
            body=self.error_line(exc),
            status=status,
            content_type="application/json",
            headers=headers,
        )

    async def define(self, body: dict[str, Any], request: web.Request) -> web.Response:
        await self.kernel.define(
            _field(body, "component_type"),
            _field(body, "name"),
            _field(body, "attrs"),
            placement=_field(body, "placement"),
        )
        return output_response({})

    async def delete(self, body: dict[str, Any], request: web.Request) -> web.Response:
        await self.kernel.delete(_field(body, "name"))
        return output_response({})

    async def call(self, body: dict[str, Any], request: web.Request) -> web.Response:
        prepared = self.kernel.prepare(_field(body, "operator"), _inputs(body))
        return output_response(await prepared.run())

    async def call_method(self, body: dict[str, Any], request: web.Request) -> web.Response:
        prepared = self.kernel.prepare_method(
            _field(body, "name"), _field(body, "method"), _inputs(body)
        )
        return output_response(await prepared.run())

    async def iter(self, body: dict[str, Any], request: web.Request) -> web.StreamResponse:
        # Resolve and validate first, so those errors get a status of their own, as
        # they raise at once in-process; then stream.
        if "operator" in body:
            prepared = self.kernel.prepare(body["operator"], _inputs(body), streaming=True)
        else:
            prepared = self.kernel.prepare_method(
                _field(body, "name"), _field(body, "method"), _inputs(body), streaming=True
            )
        return await self.stream(request, prepared.stream())

    async def stream(
        self, request: web.Request, items: AsyncGenerator[Any, None]
    ) -> web.StreamResponse:
        """Send ``items`` as the NDJSON lines of a stream (`iter`, ``agent_step``); a client
        that leaves closes ``items``."""
        response = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-cache"})
        await response.prepare(request)
        try:
            # Whatever happens after the headers, the stream ends with one last line: the
            # end, or one error (a line that cannot be encoded included).
            async with contextlib.aclosing(items):
                try:
                    async for item in items:
                        await response.write(dumps({"item": item}) + b"\n")
                except FerruleError as exc:
                    last = self.error_line(exc)
                except ConnectionError:
                    raise
                except BaseException as exc:
                    if interrupts_request(exc):
                        raise
                    log.error("stream_failed", path=request.path, error=repr(exc))
                    last = self.error_line(FerruleError("internal server error"))
                else:
                    last = b'{"end":true}'
            await response.write(last + b"\n")
            await response.write_eof()
        except ConnectionError:  # the client left: its producer is closed already
            log.debug("client_disconnected", path=request.path)
        return response

    def introspection(self, what: str) -> Handler:
        async def handle(body: Any, request: web.Request) -> web.Response:
            return web.Response(
                body=dumps(getattr(self.kernel, what)()), content_type="application/json"
            )

        return self.handler(handle)


def _field(body: dict[str, Any], key: str) -> Any:
    """A request field as sent; the kernel validates it and names it when it is wrong."""
    return body.get(key)


def _inputs(body: dict[str, Any]) -> Any:
    inputs = body.get("inputs")
    return {} if inputs is None else inputs


def output_response(output: dict[str, Any]) -> web.Response:
    """A request's answer as the kernel API gives it: ``{"output": ...}``."""
    return web.Response(body=dumps({"output": output}), content_type="application/json")
