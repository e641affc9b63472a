"""The agent-step API (execute-agent-step-api) for clients that run their own tools, as
the Node client does: ``POST {KERNEL_API}/define_model`` routes a model id the way
`LocalModel` / `APIModel` do and defines its component, and ``POST
{KERNEL_API}/agent_step`` runs one stateless inference step on such a component;
``POST {KERNEL_API}/define_embedder`` defines the embedder a model id routes to, and
``POST {KERNEL_API}/prepare_local_model`` fetches a local model's weights first, streaming
the bytes as they come (Ailoy's ``progressCallback``). The
step streams NDJSON like ``iter``: ``{"item": {"type": "output_text" | "reasoning",
"content": "..."}}`` as the model generates, then one ``{"item": {"type": "step",
"message", "tool_requests", "finish_reason", "usage"}}`` with the whole assistant message
and the tool calls it asks the client to run, then ``{"end": true}``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from typing import Any, cast

from aiohttp import web
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidInputError,
    Kernel,
    UnknownComponentTypeError,
    structure_input,
)
from ferrule_kit.content.messages import converter
from ferrule_kit.instrumentation import instrumentation_of, observed_model_stream
from ferrule_kit.models.lm import MessageAccumulator
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL, ModelRoute

from ..agent.agent import DEFAULT_STEP_INSTRUCTIONS
from ..agent.inputs import as_message
from ..embedding_model import embedder_definition
from ..models import APIModel, LocalModel, fetches_weights, prepare_model_inputs
from ..remote import KERNEL_API
from .kernel_api import KernelRoutes, output_response

#: The fields of each request's JSON body.
DEFINE_MODEL_FIELDS = frozenset({"name", "model", "local", "provider", "api_key", "options"})
DEFINE_EMBEDDER_FIELDS = frozenset({"name", "model"})
PREPARE_LOCAL_MODEL_FIELDS = frozenset({"model", "options"})
STEP_FIELDS = frozenset({"name", "messages", "tools", "reasoning", "options"})


class AgentRoutes:
    """``define_model`` and ``agent_step``, through the kernel routes' token check, body
    checks and error answers."""

    def __init__(self, kernel_routes: KernelRoutes) -> None:
        self.routes = kernel_routes
        self.kernel: Kernel = kernel_routes.kernel

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        api = f"{prefix}{KERNEL_API}"
        handler = self.routes.handler
        router.add_post(f"{api}/define_model", handler(self.define_model, DEFINE_MODEL_FIELDS))
        router.add_post(f"{api}/agent_step", handler(self.agent_step, STEP_FIELDS))
        router.add_post(
            f"{api}/define_embedder", handler(self.define_embedder, DEFINE_EMBEDDER_FIELDS)
        )
        router.add_post(
            f"{api}/prepare_local_model",
            handler(self.prepare_local_model, PREPARE_LOCAL_MODEL_FIELDS),
        )

    async def define_model(self, body: dict[str, Any], request: web.Request) -> web.Response:
        name = _string(body, "name")
        local = body.get("local", False)
        if not isinstance(local, bool):
            raise InvalidInputError("must be true or false", field="local")
        options = _options(body)
        model: LocalModel | APIModel
        if local:
            model_id = _string(body, "model") if "model" in body else DEFAULT_LOCAL_MODEL
            model = LocalModel(model_id, options)
        else:
            model = APIModel(
                _string(body, "model"),
                _optional_string(body, "provider"),
                _optional_string(body, "api_key"),
                options=options,
            )
        # A route hook is plugin code that may block (a local model's file lookup).
        route: ModelRoute = await asyncio.to_thread(model.route, self.kernel)
        self.routes.gate.redact.add_from(route.attributes)  # an API key never comes back
        await self.kernel.define(route.component_type, name, route.attributes)
        return output_response({"component_type": route.component_type})

    async def prepare_local_model(
        self, body: dict[str, Any], request: web.Request
    ) -> web.StreamResponse:
        """Make a local model's weights ready before ``define_model`` (routed the same way,
        from the same ``model`` and ``options``), streamed as ``iter`` streams: the
        ``prepare_model`` operator's events, each file's bytes as it downloads, then the file
        ready (as `LangModel.new_local` reports them in Python). No items for a model whose
        backend finds its files when it is defined."""
        model_id = _string(body, "model") if "model" in body else DEFAULT_LOCAL_MODEL
        model = LocalModel(model_id, _options(body))
        route: ModelRoute = await asyncio.to_thread(model.route, self.kernel)
        # What define_model would refuse (a template, a file name, a folder), refused
        # here too, before anything is fetched.
        check_definition(self.kernel, route)
        if not fetches_weights(route):
            return await self.routes.stream(request, _no_items())
        prepared = self.kernel.prepare("prepare_model", prepare_model_inputs(route), streaming=True)
        items = cast(AsyncGenerator[dict[str, Any], None], prepared.stream())
        return await self.routes.stream(request, _without_server_paths(items))

    async def define_embedder(self, body: dict[str, Any], request: web.Request) -> web.Response:
        """Define the embedder that serves a model id (as `EmbeddingModel` routes it: an
        aliased id keeps its own model's dimension); answers its type and dimension."""
        name = _string(body, "name")
        model = _string(body, "model")
        component_type, attributes = await asyncio.to_thread(
            embedder_definition, self.kernel, model
        )
        await self.kernel.define(component_type, name, attributes)
        try:
            info = await self.kernel.call_method(name, "info", {})
        except BaseException:
            await self.kernel.delete(name)
            raise
        return output_response({"component_type": component_type, "dimension": info["dimension"]})

    async def agent_step(self, body: dict[str, Any], request: web.Request) -> web.StreamResponse:
        inputs: dict[str, Any] = _options(body)
        inputs["messages"] = _step_messages(body.get("messages"))
        tools = _step_tools(body.get("tools"))
        if tools:
            inputs["tools"] = tools
        if body.get("reasoning"):
            inputs["reasoning"] = body["reasoning"]
        # Resolution and validation raise before the stream starts, with their own status.
        name = _string(body, "name")
        prepared = self.kernel.prepare_method(name, "infer", inputs, streaming=True)
        items = cast(AsyncGenerator[dict[str, Any], None], prepared.stream())  # it is one
        instrumentation = instrumentation_of(self.kernel.plugin_manager)  # tracing plugins
        if instrumentation is not None:
            route = ModelRoute(self.kernel.components()[name])
            items = observed_model_stream(instrumentation, route, inputs, items)
        return await self.routes.stream(request, _step_items(items))


def check_definition(kernel: Kernel, route: ModelRoute) -> None:
    """Validate ``route``'s attributes as `Kernel.define` validates a network client's
    (``InvalidInputError`` naming each field it refuses), without defining anything."""
    entry = kernel.registry.component_types.get(route.component_type)
    if entry is None:  # define would say so, naming the installed types
        raise UnknownComponentTypeError(
            f"unknown component type {route.component_type!r}",
            component_type=route.component_type,
        )
    spec = entry.spec
    assert isinstance(spec, ComponentTypeSpec)  # (a component type's entry)
    structure_input(  # outside a trusted request: validated as a network client's
        route.attributes,
        entry.named(spec.attributes),
        target=f"component type {spec.name!r}",
        conv=entry.named(spec.converter),
    )


async def _without_server_paths(
    events: AsyncGenerator[dict[str, Any], None],
) -> AsyncGenerator[dict[str, Any], None]:
    """The events less the server's own file paths (a client needs the file's name)."""
    async with contextlib.aclosing(events) as items:
        async for event in items:
            yield {key: value for key, value in event.items() if key != "path"}


async def _no_items() -> AsyncGenerator[dict[str, Any], None]:
    return
    yield  # an async generator that yields nothing


async def _step_items(
    stream: AsyncGenerator[dict[str, Any], None],
) -> AsyncGenerator[dict[str, Any], None]:
    """The step's deltas as they come, then the folded assistant message."""
    accumulator = MessageAccumulator()
    async with contextlib.aclosing(stream) as items:
        async for item in items:
            accumulator.add(item)
            delta = item["message"]
            for part in delta.get("reasoning", ()):
                if part.get("text"):
                    yield {"type": "reasoning", "content": part["text"]}
            for part in delta.get("content", ()):
                if part.get("type") == "text" and part["text"]:
                    yield {"type": "output_text", "content": part["text"]}
    message = accumulator.message()  # InvalidToolCallError when arguments are not JSON
    yield {
        "type": "step",
        "message": converter.unstructure(message),
        "tool_requests": [converter.unstructure(call) for call in message.tool_calls],
        "finish_reason": accumulator.finish_reason,
        "usage": accumulator.usage,
    }


def _step_messages(value: Any) -> list[dict[str, Any]]:
    """The conversation, each message checked (named ``messages[i]`` as sent), with the
    step's default instructions first when it carries no system message."""
    if not isinstance(value, list) or not value:
        raise InvalidInputError("must be a non-empty list of messages", field="messages")
    messages = [converter.unstructure(as_message(m, i)) for i, m in enumerate(value)]
    if messages[0]["role"] != "system":
        messages.insert(
            0, {"role": "system", "content": [{"type": "text", "text": DEFAULT_STEP_INSTRUCTIONS}]}
        )
    return messages


def _step_tools(value: Any) -> list[dict[str, Any]]:
    """The tool descriptions the client sent (bare, ``{"name", "description",
    "parameters"}``, or in the OpenAI shape, ``{"type": "function", "function": {...}}``),
    each checked here, named ``$.tools[i]...`` as sent: the kernel would name the
    description after it was reshaped."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise _invalid("$.tools", "must be a list of tool descriptions")
    return [_step_tool(spec, f"$.tools[{i}]") for i, spec in enumerate(value)]


def _step_tool(spec: Any, where: str) -> dict[str, Any]:
    if not isinstance(spec, dict):
        raise _invalid(where, 'must be a tool description: an object with a "name"')
    if spec.get("type", "function") != "function":
        raise _invalid(f"{where}.type", 'must be "function"')
    if "function" in spec:
        _known_keys(spec, {"type", "function"}, where)
        where, spec = f"{where}.function", spec["function"]
        if not isinstance(spec, dict):
            raise _invalid(where, 'must be an object with a "name"')
    else:  # bare, or the Responses API's shape: {"type": "function", "name": ...}
        spec = {key: value for key, value in spec.items() if key != "type"}
    _known_keys(spec, set(_FUNCTION_FIELDS), where)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise _invalid(f"{where}.name", "must be a non-empty string")
    if not isinstance(spec.get("description", ""), str):
        raise _invalid(f"{where}.description", "must be a string")
    if not isinstance(spec.get("parameters", {}), dict):
        raise _invalid(f"{where}.parameters", "must be a JSON schema (an object)")
    function = {"description": "", "parameters": {"type": "object", "properties": {}}, **spec}
    return {"type": "function", "function": function}


#: The fields of a function's description (`ferrule_kit.models.lm.FunctionDescription`).
_FUNCTION_FIELDS = ("name", "description", "parameters")


def _known_keys(spec: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(key for key in spec if key not in known)
    if unknown:
        raise _invalid(f"{where}.{unknown[0]}", "unknown field")


def _invalid(where: str, problem: str) -> InvalidInputError:
    return InvalidInputError(f"{where}: {problem}", field=where)


def _options(body: dict[str, Any]) -> dict[str, Any]:
    options = {} if body.get("options") is None else body["options"]
    if not isinstance(options, dict):
        raise InvalidInputError("must be an object", field="options")
    return dict(options)


def _string(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise InvalidInputError("must be a non-empty string", field=key)
    return value


def _optional_string(body: dict[str, Any], key: str) -> str | None:
    return None if body.get(key) is None else _string(body, key)
