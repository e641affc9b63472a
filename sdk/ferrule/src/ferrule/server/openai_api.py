"""The OpenAI-compatible endpoint: ``POST /v1/chat/completions`` (streamed as server-sent
events or not) and ``GET /v1/models[/{id}]``, served by any installed language-model
backend. ``model`` is routed once by `ferrule.models.route_model` (an API model first,
then a local one); `ModelCatalog` defines one component per model id on first use.
Errors are OpenAI-shaped (`OpenAIError`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import Any, cast

from aiohttp import web
from ferrule_kernel import (
    ComponentTypeSpec,
    FerruleError,
    InvalidInputError,
    Kernel,
    PluginError,
    Prepared,
    UnknownComponentError,
    get_logger,
    refused_for_trust,
)
from ferrule_kernel.errors import interrupts_request, scrub_secrets
from ferrule_kit.errors import ModelError, UnknownModelError
from ferrule_kit.instrumentation import instrumentation_of, observed_model_stream
from ferrule_kit.models.lm import MessageAccumulator
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL, ModelRoute

from ..models import route_model
from .gate import Gate, Handler, Redactor, access_logged, dumps
from .openai_wire import (
    ChatRequest,
    OpenAIError,
    chat_request_from_openai,
    completion_message,
    delta_from_item,
    openai_usage,
)

log = get_logger("ferrule.server")

#: Model ids /v1/models lists whenever an installed plugin serves them.
WELL_KNOWN_MODELS = (DEFAULT_LOCAL_MODEL, "test")


class ModelCatalog:
    """Model ids -> language-model components of the server's kernel, defined on first
    use and reused by every request for that id. ``route`` and ``kind`` make it a catalog
    of other models (``route_embedder``, ``"embed"``: the embedders)."""

    def __init__(
        self,
        kernel: Kernel,
        redact: Redactor,
        declared: Iterable[str] = (),
        *,
        route: Callable[[Kernel, str], ModelRoute] = route_model,
        kind: str = "chat",
        well_known: Iterable[str] = WELL_KNOWN_MODELS,
    ) -> None:
        self.kernel = kernel
        self.redact = redact
        self._route_of = route
        self.kind = kind  # the prefix of its components' names
        self.well_known = tuple(well_known)
        self.created = int(time.time())
        self._routes: dict[str, ModelRoute] = {}
        self._ready: dict[str, str] = {}  # model id -> component name
        self._defining: dict[str, asyncio.Future[str]] = {}
        # The operator's own ids (``ferrule serve --model``) define as code in the server's
        # process would: they may name a model file or directory of the server. An id that
        # only a client sent is that client's request, defined untrusted.
        declared = tuple(declared)
        self._declared = frozenset(declared)
        for model_id in declared:  # in order: /v1/models lists them so
            self.route(model_id)

    def route(self, model_id: str) -> ModelRoute:
        """`route_model`'s route for ``model_id``, kept (its secrets join the redactor)."""
        route = self._routes.get(model_id)
        if route is not None:
            return route
        try:
            route = self._route_of(self.kernel, model_id)
        except UnknownModelError:
            # OpenAI's wording for its clients; what to install is for whoever runs the server
            raise UnknownModelError(
                f"The model {model_id!r} does not exist: no installed plugin serves it",
                model=model_id,
            ) from None
        except FerruleError:
            raise
        except BaseException as exc:
            # The plugins' route hooks run here, outside any kernel request: what they raise
            # (SystemExit included) ends this request as the kernel would end it.
            if interrupts_request(exc):
                raise
            text = str(exc)
            raise PluginError(
                scrub_secrets(
                    f"routing model {model_id!r} failed in a plugin's route hook: "
                    f"{type(exc).__name__}{': ' + text if text else ''}"
                ),
                target=f"routing model {model_id!r}",
                exception_type=type(exc).__name__,
            ) from exc
        self.redact.add_from(route.attributes)
        self._routes[model_id] = route
        return route

    def listed(self) -> list[dict[str, Any]]:
        """The declared models, those served so far, and the well-known ones installed."""
        for model_id in self.well_known:
            with contextlib.suppress(UnknownModelError):
                self.route(model_id)
        return [self.describe(model_id) for model_id in list(self._routes)]

    def describe(self, model_id: str) -> dict[str, Any]:
        route = self.route(model_id)
        entry = self.kernel.registry.component_types.get(route.component_type)
        return {
            "id": model_id,
            "object": "model",
            "created": self.created,
            "owned_by": entry.provider if entry is not None else "ferrule",
        }

    async def component(self, model_id: str, variant: Mapping[str, Any] | None = None) -> str:
        """The component serving ``model_id``; concurrent first requests share one define.
        ``variant``: attributes a request asks for on top of the route's (an embedder's
        ``dimensions``), one component per variant; an attribute the model's component
        type refuses is an `OpenAIError` naming it."""
        key = _variant_key(model_id, variant)
        name = self._ready.get(key)
        if name is not None:
            return name
        future = self._defining.get(key)
        if future is None:
            future = self._defining[key] = asyncio.ensure_future(
                self._define(model_id, key, dict(variant or {}))
            )
            future.add_done_callback(lambda _: self._defining.pop(key, None))
        # shield: a client that goes away must not cancel a define others wait for
        return await asyncio.shield(future)

    async def _define(self, model_id: str, key: str, variant: dict[str, Any]) -> str:
        route = await asyncio.to_thread(self.route, model_id)
        name = f"{self.kind}:{key}"
        if name not in self.kernel.components():
            try:
                await self.kernel.define(
                    route.component_type,
                    name,
                    {**route.attributes, **variant},
                    trusted=model_id in self._declared,
                )
            except InvalidInputError as exc:
                problems = "; ".join(error["message"] for error in exc.errors) or exc.message
                if refused_for_trust(exc):  # the client's id asks for a file of the server
                    raise OpenAIError(400, f"model: {problems}", param="model") from exc
                asked = [e["path"][2:] for e in exc.errors if e["path"][2:] in variant]
                if asked:  # what the request asked for, which this model does not take
                    raise OpenAIError(
                        400, f"{asked[0]}: model {model_id!r}: {problems}", param=asked[0]
                    ) from exc
                # a route's attributes that do not validate: the server's fault
                raise ModelError(
                    f"model {model_id!r} could not be set up: {exc.message}", model=model_id
                ) from exc
        self._ready[key] = name
        return name

    def forget(self, model_id: str, variant: Mapping[str, Any] | None = None) -> None:
        """The component was deleted behind our back (through the kernel API): define again."""
        self._ready.pop(_variant_key(model_id, variant), None)

    async def prepare(
        self,
        model_id: str,
        method: str,
        inputs: dict[str, Any],
        renames: dict[str, str],
        *,
        streaming: bool = False,
        variant: Mapping[str, Any] | None = None,
    ) -> Prepared:
        """``method`` of ``model_id``'s component (of its ``variant``: see `component`),
        its input validated (an invalid one is an `OpenAIError` naming the request's
        parameter: ``renames``)."""
        name = await self.component(model_id, variant)
        try:
            return self._prepare(name, method, inputs, renames, streaming)
        except UnknownComponentError:  # deleted through the kernel API: define it again
            self.forget(model_id, variant)
            name = await self.component(model_id, variant)
            return self._prepare(name, method, inputs, renames, streaming)

    def methods(self, model_id: str) -> frozenset[str]:
        """The methods of the component type serving ``model_id``."""
        entry = self.kernel.registry.component_types.get(self.route(model_id).component_type)
        spec = entry.spec if entry is not None else None
        return (
            frozenset(m.name for m in spec.methods)
            if isinstance(spec, ComponentTypeSpec)
            else frozenset()
        )

    def _prepare(
        self,
        name: str,
        method: str,
        inputs: dict[str, Any],
        renames: dict[str, str],
        streaming: bool,
    ) -> Prepared:
        try:
            return self.kernel.prepare_method(name, method, inputs, streaming=streaming)
        except InvalidInputError as exc:
            if exc.kind != "invalid_input":
                raise
            raise OpenAIError.from_ferrule(exc, renames) from None


def _variant_key(model_id: str, variant: Mapping[str, Any] | None) -> str:
    if not variant:
        return model_id
    return model_id + "?" + "&".join(f"{k}={v}" for k, v in sorted(variant.items()))


class OpenAIRoutes:
    """The OpenAI-compatible routes of one server: each handler checks the token and
    answers every failure as an OpenAI error."""

    def __init__(self, kernel: Kernel, gate: Gate, catalog: ModelCatalog) -> None:
        self.kernel = kernel
        self.gate = gate
        self.catalog = catalog
        #: What /v1/models lists: the chat models, then other catalogs' (the embedders').
        self.catalogs = [catalog]

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        for path, method, handle in (
            (f"{prefix}/v1/chat/completions", "POST", self.chat_completions),
            (f"{prefix}/v1/models", "GET", self.models),
            (f"{prefix}/v1/models/{{model:.+}}", "GET", self.model),
        ):
            self.add_route(router, method, path, handle)

    def add_route(self, router: web.UrlDispatcher, method: str, path: str, handle: Handler) -> None:
        """Serve ``handle`` at ``path`` as an OpenAI route (`handler`), with CORS
        (preflights, Access-Control-* headers) for the origins the server allows, so a web
        page of one can use the endpoint, as it can OpenAI's."""
        router.add_route(method, path, self.handler(handle))
        router.add_route("OPTIONS", path, self.handler(self.gate.preflight, preflight=True))

    def handler(
        self,
        handle: Handler,
        preflight: bool = False,
        *,
        authorize: Callable[[web.Request], None] | None = None,
        error: Callable[[OpenAIError], web.Response] | None = None,
    ) -> Handler:
        """``handle`` behind the gate, with its failures as error responses: ``authorize``
        raises the route's 401 (a bearer token by default), ``error`` writes an error in
        the route's shape (OpenAI's by default; the Messages routes pass Anthropic's)."""
        check = authorize or self.require_bearer
        respond = error or self.error

        async def route(request: web.Request) -> web.StreamResponse:
            try:
                self.gate.admit(request)
                # A browser's preflight never carries the token: it asks whether to send it.
                if not preflight:
                    check(request)
                response = await handle(request)
            except FerruleError as exc:
                response = respond(OpenAIError.from_ferrule(self.gate.public(exc)))
            except OpenAIError as exc:
                response = respond(exc)
            except BaseException as exc:
                if interrupts_request(exc):  # the client left, the server stops, a Ctrl-C
                    raise
                # A bug of ours, or a plugin's BaseException that got past the kernel: it
                # ends this request only (let through, it would stop the server's loop).
                log.error("request_failed", path=request.path, error=repr(exc))
                response = respond(internal_error())
            if not response.prepared:  # a stream has its CORS headers already
                response.headers.update(self.gate.cors_headers(request))
            return response

        return access_logged(route)

    def require_bearer(self, request: web.Request) -> None:
        if not self.gate.authorized(request):
            raise OpenAIError(
                401,
                "a valid bearer token is required",
                code="invalid_api_key",
                headers={"WWW-Authenticate": "Bearer"},
            )

    def error(self, exc: OpenAIError) -> web.Response:
        return web.Response(
            body=dumps(self.gate.redact(exc.body())),
            status=exc.status,
            content_type="application/json",
            headers=exc.headers,
        )

    async def models(self, request: web.Request) -> web.Response:
        data = await asyncio.to_thread(lambda: [m for c in self.catalogs for m in c.listed()])
        return web.Response(
            body=dumps({"object": "list", "data": data}), content_type="application/json"
        )

    async def model(self, request: web.Request) -> web.Response:
        model_id = request.match_info["model"]
        described = await asyncio.to_thread(self._describe, model_id)
        return web.Response(body=dumps(described), content_type="application/json")

    def _describe(self, model_id: str) -> dict[str, Any]:
        """The first catalog's description of ``model_id``; the chat catalog's error if
        none serves it."""
        for catalog in self.catalogs[1:]:
            with contextlib.suppress(UnknownModelError):
                return catalog.describe(model_id)
        return self.catalog.describe(model_id)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        chat = chat_request_from_openai(await self.gate.read_json(request))
        items = await self.infer(chat.model, chat.inputs, chat.renames)
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        async with contextlib.aclosing(items):
            if chat.stream:
                return await self._stream_chunks(request, chat, items, completion_id, created)
            acc = MessageAccumulator()
            async for item in items:
                acc.add(item)
        reply: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion",
            "created": created,
            "model": chat.model,
            "choices": [
                {
                    "index": 0,
                    "message": completion_message(acc),
                    "finish_reason": acc.finish_reason or "stop",
                    "logprobs": None,
                }
            ],
        }
        if acc.usage is not None:
            reply["usage"] = openai_usage(acc.usage)
        return web.Response(body=dumps(reply), content_type="application/json")

    async def infer(
        self, model_id: str, inputs: dict[str, Any], renames: dict[str, str]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """The ``infer`` stream of ``model_id`` on ``inputs`` (validated: an invalid one is
        an `OpenAIError` naming the request's parameter, through ``renames``)."""
        prepared = await self.catalog.prepare(model_id, "infer", inputs, renames, streaming=True)
        items = cast(AsyncGenerator[dict[str, Any], None], prepared.stream())  # it is one
        instrumentation = instrumentation_of(self.kernel.plugin_manager)  # tracing plugins
        if instrumentation is None:
            return items
        route = self.catalog.route(model_id)
        return observed_model_stream(instrumentation, route, inputs, items)

    def stream_error(self, request: web.Request, exc: BaseException) -> OpenAIError:
        """What a failure after a stream's headers is told as: ``exc`` as an `OpenAIError`
        (interruptions re-raised)."""
        if isinstance(exc, FerruleError):
            return OpenAIError.from_ferrule(self.gate.public(exc))
        if interrupts_request(exc):
            raise exc
        # e.g. a backend item outside the LM contract
        log.error("stream_failed", path=request.path, error=repr(exc))
        return internal_error()

    async def _stream_chunks(
        self,
        request: web.Request,
        chat: ChatRequest,
        items: AsyncGenerator[dict[str, Any], None],
        completion_id: str,
        created: int,
    ) -> web.StreamResponse:
        head = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": chat.model,
        }
        if chat.include_usage:
            head["usage"] = None

        def chunk(delta: dict[str, Any], finish_reason: str | None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            return b"data: " + dumps({**head, "choices": [choice]}) + b"\n\n"

        # The first item before the headers: an error that comes at once (a model that
        # fails to load, a refused image) still gets its HTTP status.
        first = await anext(items, None)
        response = await self.gate.open_event_stream(request)
        usage = None
        try:
            try:
                item, first_chunk = first, True
                while item is not None:
                    delta = delta_from_item(item)
                    finish_reason = item.get("finish_reason")
                    if first_chunk:
                        delta = {"role": "assistant", **delta}
                    if delta or finish_reason is not None:  # an item carrying nothing is no chunk
                        await response.write(chunk(delta, finish_reason))
                        first_chunk = False
                    if item.get("usage") is not None:
                        usage = item["usage"]
                    item = await anext(items, None)
                if chat.include_usage and usage is not None:
                    await response.write(
                        b"data: "
                        + dumps({**head, "choices": [], "usage": openai_usage(usage)})
                        + b"\n\n"
                    )
            except ConnectionError:
                raise
            except BaseException as exc:  # after the headers, an error ends the stream as an event
                error = self.stream_error(request, exc)
                last = b"data: " + dumps(self.gate.redact(error.body())) + b"\n\n"
            else:
                last = b"data: [DONE]\n\n"
            await response.write(last)
            await response.write_eof()
        except ConnectionError:  # the client left: its producer is closed with the request
            log.debug("client_disconnected", path=request.path)
        return response


def internal_error() -> OpenAIError:
    return OpenAIError(500, "internal server error", "server_error", code="internal")
