"""Where an agent's model lives: `LangModel`, a model defined on a runtime (the process's
shared one when none is named), shared by any number of agents.

It also answers Ailoy 0.2's ``LangModel`` calls: `LangModel.new_local` with a
``progress_callback`` (and `LangModel.new_local_sync`), `LangModel.new_stream_api`, and
inference without an agent (`LangModel.infer_delta` / `LangModel.infer` and their ``_sync``
twins), yielding the `ferrule.agent.deltas` types.
"""

from __future__ import annotations

import itertools
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, TextPart, converter
from ferrule_kit.models.lmspec import ModelRoute

from .._bridge import Bridge, blocking, blocking_iter
from ..models import (
    APIModel,
    LocalModel,
    check_device_id,
    fetches_weights,
    prepare_model_inputs,
)
from ..runtime import new_kernel
from ..shared_runtime import default_runtime
from .configs import DocumentPolyfill, KVCacheConfig, LangModelInferConfig
from .deltas import MessageDelta, MessageDeltaOutput, delta_of, messages_of
from .inputs import tool_description
from .results import MessageOutput

_names = itertools.count(1)


#: Each remote runtime's routing kernel, made once (discovery is not free, and every agent
#: made on the runtime asks it: for its model's route and its instrumentation).
_remote_kernels: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def routing_kernel(runtime: Any) -> Any:
    """The kernel whose plugins say which component type serves a model. A remote Runtime
    has none here: this process's plugins answer (they should match the server's)."""
    kernel = getattr(runtime, "kernel", None)
    if kernel is not None:
        return kernel
    try:
        return _remote_kernels[runtime]
    except KeyError:
        kernel = _remote_kernels[runtime] = new_kernel()
        return kernel
    except TypeError:  # a runtime that cannot be weakly referenced: no cache
        return new_kernel()


def takes_attribute(kernel: Any, component_type: str, name: str) -> bool:
    """Whether ``component_type``'s attributes (on ``kernel``) have a field ``name``."""
    kernel.load_plugins()
    entry = kernel.registry.component_types.get(component_type)
    if entry is None:
        return False
    fields = getattr(entry.named(entry.spec.attributes), "__attrs_attrs__", ())
    return any(field.name == name for field in fields)


def checksum_attributes(
    kernel: Any, component_type: str, validate_checksum: bool | None
) -> dict[str, Any]:
    """Ailoy's ``validate_checksum`` as ``component_type``'s attribute: None is Ailoy's
    default (check), where the component can check its files against published checksums;
    True where it cannot is refused, naming the field; False asks nothing."""
    if validate_checksum is not None and not isinstance(validate_checksum, bool):
        raise InvalidInputError("must be a bool", field="validate_checksum")
    if takes_attribute(kernel, component_type, "validate_checksum"):
        return {"validate_checksum": validate_checksum is not False}
    if validate_checksum:
        raise InvalidInputError(
            f"{component_type} has no published checksums to check its files against: "
            "leave validate_checksum unset or False",
            field="validate_checksum",
        )
    return {}


def kv_cache_attributes(kernel: Any, component_type: str, kv_cache: Any) -> dict[str, Any]:
    """Ailoy's `KVCacheConfig` as a local model's attributes (llama.cpp's ``n_ctx`` and
    ``n_batch``); a setting the component has no attribute for is refused, naming it."""
    if kv_cache is None:
        return {}
    if not isinstance(kv_cache, KVCacheConfig):
        raise InvalidInputError(
            f"expected a KVCacheConfig, got {type(kv_cache).__name__}", field="kv_cache"
        )
    chosen: dict[str, Any] = {}
    for setting, attribute in (
        ("context_window_size", "n_ctx"),
        ("prefill_chunk_size", "n_batch"),
        ("sliding_window_size", None),
    ):
        value = getattr(kv_cache, setting)
        if value is None:
            continue
        if attribute is None or not takes_attribute(kernel, component_type, attribute):
            raise InvalidInputError(
                f"{component_type} does not take this setting", field=f"kv_cache.{setting}"
            )
        chosen[attribute] = value
    return chosen


def component_name(prefix: str) -> str:
    return f"{prefix}-{next(_names)}-{uuid.uuid4().hex[:8]}"


class LangModel:
    """A language model defined on a runtime, which any number of agents may use.

    ``lm = await LangModel.new_local("Qwen/Qwen3-0.6B")``, then ``Agent(lm)``: as in the
    stateless multi-turn guide. The model stays defined until `adelete` (or its runtime
    stops); agents using it do not delete it.
    """

    def __init__(self, runtime: Any, name: str, route: ModelRoute, model: Any = None) -> None:
        self.runtime = runtime
        self.name = name
        self.route = route
        self.model = model

    def __repr__(self) -> str:
        return f"LangModel({self.model!r}, name={self.name!r})"

    @classmethod
    async def new(
        cls, model: Any, *, runtime: Any = None, placement: dict[str, Any] | None = None
    ) -> LangModel:
        """Define ``model`` (a `LocalModel`, `APIModel`, `TestModel`, ...) on ``runtime``
        (the default runtime if None); ``placement`` puts it where a placement plugin runs
        it (``{"kind": "ray", "replicas": 4, "num_gpus": 1}``: docs/deployment.md)."""
        runtime = runtime if runtime is not None else default_runtime()
        route = model.route(routing_kernel(runtime))
        name = component_name("lm")
        if placement is None:
            await runtime.adefine(route.component_type, name, route.attributes)
        else:
            await runtime.adefine(route.component_type, name, route.attributes, placement=placement)
        return cls(runtime, name, route, model)

    @classmethod
    async def new_local(
        cls,
        model_id: str | None = None,
        device_id: int | None = None,
        validate_checksum: bool | None = None,
        kv_cache: KVCacheConfig | None = None,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        model_name: str | None = None,
        runtime: Any = None,
        **options: Any,
    ) -> LangModel:
        """A local model (``options``: its backend's attributes), with Ailoy's arguments:
        ``model_name`` (Ailoy's keyword for ``model_id``); ``device_id`` (only None or 0:
        the CPU); ``validate_checksum`` (None means check where the backend has published
        checksums for its files, True where it has none is refused); ``kv_cache``
        (`KVCacheConfig`: llama.cpp's ``n_ctx`` and ``n_batch``). ``progress_callback``
        (Ailoy's) is told what happens, as `CacheProgress`: on llama.cpp's backend, the
        bytes of each weights file as it downloads (``current`` of ``total`` bytes), then
        the file ready (step 1 of 2); then the model loaded (the last step)."""
        if model_name is not None:
            if model_id is not None:
                raise InvalidInputError(
                    "give model_id or model_name (Ailoy's), not both", field="model_name"
                )
            model_id = model_name
        check_device_id(device_id)
        runtime = runtime if runtime is not None else default_runtime()
        if validate_checksum is not None or kv_cache is not None:
            kernel = routing_kernel(runtime)
            first = LocalModel(model_id, options) if model_id is not None else None
            component_type = (first or LocalModel(options=options)).route(kernel).component_type
            options = {
                **options,
                **checksum_attributes(kernel, component_type, validate_checksum),
                **kv_cache_attributes(kernel, component_type, kv_cache),
            }
        model = (
            LocalModel(model_id, options) if model_id is not None else LocalModel(options=options)
        )
        if progress_callback is None:
            return await cls.new(model, runtime=runtime)
        if not callable(progress_callback):
            raise InvalidInputError("must be callable", field="progress_callback")
        route = model.route(routing_kernel(runtime))
        steps = 2 if fetches_weights(route) else 1
        if steps == 2:
            bridge: Bridge = runtime.sync_bridge
            async for event in bridge.astream(_preparing(runtime, prepare_model_inputs(route))):
                progress_callback(_progress(event, steps))
        lm = await cls.new(model, runtime=runtime)
        progress_callback(CacheProgress("Initialized", steps, steps))
        return lm

    @classmethod
    async def new_api(
        cls,
        model_id: str,
        *,
        provider: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        runtime: Any = None,
        **options: Any,
    ) -> LangModel:
        return await cls.new(
            APIModel(model_id, provider, api_key, base_url, options), runtime=runtime
        )

    async def adelete(self) -> None:
        await self.runtime.adelete(self.name)

    def delete(self) -> None:
        self.runtime.delete(self.name)

    # -- Ailoy 0.2 ----------------------------------------------------------------------------

    @classmethod
    def new_local_sync(
        cls,
        model_name: str,
        device_id: int | None = None,
        validate_checksum: bool | None = None,
        kv_cache: KVCacheConfig | None = None,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        runtime: Any = None,
        **options: Any,
    ) -> LangModel:
        """`new_local` for synchronous callers (Ailoy's ``new_local_sync``, its arguments
        in its order)."""
        runtime = runtime if runtime is not None else default_runtime()
        bridge: Bridge = runtime.sync_bridge
        return bridge.run(
            cls.new_local(
                model_name,
                device_id,
                validate_checksum,
                kv_cache,
                progress_callback,
                runtime=runtime,
                **options,
            )
        )

    @classmethod
    def download(
        cls,
        model_name: str,
        progress_callback: Callable[[CacheProgress], Any] | None = None,
        *,
        runtime: Any = None,
        **options: Any,
    ) -> None:
        """Fetch a local model's weights now, without loading it (Ailoy's ``download``):
        ``progress_callback`` gets each file's bytes as it downloads, then the file ready.
        ``options`` are the backend's attributes (``cache_dir``)."""
        runtime = runtime if runtime is not None else default_runtime()
        route = LocalModel(model_name, options).route(routing_kernel(runtime))
        if not fetches_weights(route):
            raise InvalidInputError(
                f"{model_name!r} runs on {route.component_type}, whose files are found when "
                "it is defined: there is nothing to download first",
                field="model_name",
            )
        for event in runtime.iter("prepare_model", prepare_model_inputs(route)):
            if progress_callback is not None:
                progress_callback(_progress(event, 1))

    @classmethod
    def remove(cls, model_name: str, *, runtime: Any = None, **options: Any) -> None:
        """Remove a local model's downloaded weights (Ailoy's ``remove``)."""
        runtime = runtime if runtime is not None else default_runtime()
        route = LocalModel(model_name, options).route(routing_kernel(runtime))
        runtime.call("remove_model", prepare_model_inputs(route))

    @classmethod
    def new_stream_api(
        cls,
        spec: Literal["ChatCompletion", "OpenAI", "Gemini", "Claude", "Responses", "Grok"],
        model_name: str,
        api_key: str | None = None,
        *,
        runtime: Any = None,
    ) -> LangModel:
        """A provider's model by Ailoy's API spec name (``"OpenAI"``, ``"Claude"``,
        ``"Gemini"``, ``"Grok"``; ``"ChatCompletion"`` and ``"Responses"`` are OpenAI's),
        defined now. The endpoint is the provider plugin's: its base-URL variable
        (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ...) moves it."""
        provider = _API_SPECS.get(spec) if isinstance(spec, str) else None
        if provider is None:
            raise InvalidInputError(
                f"unknown API spec {spec!r}; one of {', '.join(_API_SPECS)}", field="spec"
            )
        runtime = runtime if runtime is not None else default_runtime()
        bridge: Bridge = runtime.sync_bridge
        return bridge.run(cls.new(APIModel(model_name, provider, api_key), runtime=runtime))

    @property
    def sync_bridge(self) -> Bridge:
        bridge: Bridge = self.runtime.sync_bridge
        return bridge

    def _infer_inputs(
        self,
        messages: str | Sequence[Message],
        tools: Sequence[Any] | None,
        documents: Sequence[Any] | None,
        config: LangModelInferConfig | None,
    ) -> dict[str, Any]:
        if config is not None and not isinstance(config, LangModelInferConfig):
            raise InvalidInputError(
                f"expected a LangModelInferConfig, got {type(config).__name__}", field="config"
            )
        history = messages_of(messages)
        if documents and config is not None and config.document_polyfill is not None:
            history = polyfill_documents(history, documents, config.document_polyfill)
        inputs: dict[str, Any] = {
            **(config.infer_options() if config is not None else {}),
            "messages": [converter.unstructure(m) for m in history],
        }
        if tools:
            inputs["tools"] = [tool_description(t, i) for i, t in enumerate(tools)]
        return inputs

    async def _items(self, inputs: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        stream = self.runtime.acall_iter_method(self.name, "infer", inputs)
        try:
            async for item in stream:
                yield item
        finally:
            await stream.aclose()

    async def infer_delta(
        self,
        messages: str | Sequence[Message],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        config: LangModelInferConfig | None = None,
    ) -> AsyncIterator[MessageDeltaOutput]:
        """Stream the model's reply to ``messages`` (a string is one user message) as
        `MessageDeltaOutput`s; the last carries the ``finish_reason``. ``tools`` are
        `Tool`s, functions or descriptions; ``documents`` (objects with ``text``) reach the
        model through ``config.document_polyfill`` (without one they are left out, as
        Ailoy does)."""
        inputs = self._infer_inputs(messages, tools, documents, config)
        async for item in self.sync_bridge.astream(self._items(inputs)):
            yield delta_of(item)

    async def infer(
        self,
        messages: str | Sequence[Message],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        config: LangModelInferConfig | None = None,
    ) -> MessageOutput:
        """The model's whole reply: a `MessageOutput` with the message and why it ended."""
        accumulated = MessageDelta()
        finish_reason = None
        usage = None
        inputs = self._infer_inputs(messages, tools, documents, config)
        async for item in self.sync_bridge.astream(self._items(inputs)):
            output = delta_of(item)
            accumulated += output.delta
            finish_reason = output.finish_reason or finish_reason
            usage = item.get("usage") or usage
        return MessageOutput(accumulated.finish(), usage, finish_reason=finish_reason)

    infer_sync = blocking(infer)
    infer_delta_sync = blocking_iter(infer_delta)


@attrs.frozen
class CacheProgress:
    """A step of making a local model ready (Ailoy's): ``current`` of ``total`` steps
    done, ``comment`` saying which."""

    comment: str
    current: int
    total: int


#: Ailoy's API spec names -> ferrule's provider plugins.
_API_SPECS = {
    "OpenAI": "openai",
    "ChatCompletion": "openai",
    "Responses": "openai",
    "Claude": "anthropic",
    "Gemini": "gemini",
    "Grok": "xai",
}


def _progress(event: dict[str, Any], steps: int) -> CacheProgress:
    """One event of ``prepare_model`` as Ailoy's progress: a file's bytes as it
    downloads, or the file ready (step 1 of ``steps``)."""
    if event["event"] == "download":
        total = event["total"] if event["total"] is not None else 0
        return CacheProgress(f"Downloading {event['filename']}", event["current"], total)
    return CacheProgress(f"{event['filename']} ready", 1, steps)


async def _preparing(runtime: Any, inputs: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    stream = runtime.acall_iter("prepare_model", inputs)
    try:
        async for event in stream:
            yield event
    finally:
        await stream.aclose()


def polyfill_documents(
    messages: list[Message], documents: Sequence[Any], polyfill: DocumentPolyfill
) -> list[Message]:
    """``messages`` with ``documents`` written in by ``polyfill``'s templates: the system
    message (one is added when there is none) and the last user message's text (its
    other parts, images, stay after it)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    environment = ImmutableSandboxedEnvironment()
    docs = [_document(d, i) for i, d in enumerate(documents)]
    out = list(messages)
    if polyfill.system_message_template is not None:
        template = environment.from_string(polyfill.system_message_template)
        if out and out[0].role == "system":
            out[0] = attrs.evolve(out[0], contents=template.render(text=out[0].text))
        else:
            out.insert(0, Message("system", template.render(text="")))
    if polyfill.query_message_template is not None:
        template = environment.from_string(polyfill.query_message_template)
        for index in range(len(out) - 1, -1, -1):
            if out[index].role == "user":
                rendered = template.render(text=out[index].text, documents=docs)
                others = [p for p in out[index].contents if not isinstance(p, TextPart)]
                out[index] = attrs.evolve(out[index], contents=[TextPart(rendered), *others])
                break
    return out


def _document(document: Any, index: int) -> Mapping[str, Any]:
    if isinstance(document, str):
        return {"text": document}
    if isinstance(document, Mapping) and isinstance(document.get("text"), str):
        return document
    text = getattr(document, "text", None)
    if not isinstance(text, str):
        raise InvalidInputError(
            f"a document needs a text, got {type(document).__name__}", field=f"documents[{index}]"
        )
    return {
        "text": text,
        "id": getattr(document, "id", None),
        "title": getattr(document, "title", None),
    }
