"""`LocalModel` and `APIModel`: thin descriptions of a model that resolve, through the
installed plugins, to a language-model component type and its attributes; and
`route_model`, the one place a bare model id is routed ("an API model first, then a local
one"), for the CLI and `ferrule serve`; `route_embedder`, the same for embedding models.

The subpackages give Agno's names for them, each class in the module Agno keeps it in:
`ferrule.models.openai.chat` (``OpenAIChat``), `ferrule.models.openai.like`
(``OpenAILike``), `ferrule.models.anthropic.claude` (``Claude``),
`ferrule.models.google.gemini` (``Gemini``), `ferrule.models.xai.xai` (``xAI``),
`ferrule.models.llama_cpp.llama_cpp` (``LlamaCpp``), `ferrule.models.ollama.chat`
(``Ollama``) and `ferrule.models.vllm.vllm` (``VLLM``); each package re-exports its
classes (``from ferrule.models.openai import OpenAIChat``). Their sampling parameters
(``temperature``, ``top_p``, ``max_tokens``, ``stop``, ``reasoning_effort``...) are
`APIModel.infer_options`, sent with every request of a run."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.errors import UnknownModelError
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL, ModelRoute, resolve_model_alias


def check_device_id(device_id: Any, field: str = "device_id") -> None:
    """Ailoy's device (0.2's ``device_id``, 0.1's ``LocalModel.device``): ferrule's local
    models run on this process's CPU (llama.cpp, numpy), which is device 0 or none."""
    if device_id not in (None, 0) or isinstance(device_id, bool):
        raise InvalidInputError(
            f"ferrule's local models run on the CPU: give no {field} (or 0)", field=field
        )


def _check_device(_instance: Any, _attribute: Any, device: Any) -> None:
    check_device_id(device, "device")


@attrs.frozen
class LocalModel:
    """A model run on this machine (Qwen3 on exllamav2 with CUDA, llama.cpp elsewhere). An
    id that ``$FERRULE_MODEL_ALIASES`` maps to another runs that one
    (``Qwen/Qwen3-0.6B=SmolLM2-135M-Instruct``: see docs/agent.md)."""

    id: str = DEFAULT_LOCAL_MODEL
    #: Extra attributes for the backend component (e.g. ``{"n_ctx": 4096}``).
    options: dict[str, Any] = attrs.field(factory=dict)
    #: An Agno class's keyword values (`ferrule.models.base.Model`).
    agno_settings: dict[str, Any] = attrs.field(factory=dict, kw_only=True, repr=False, eq=False)
    #: Ailoy 0.1's ``LocalModel(id, device=0)``: None or 0, the CPU (others are refused).
    device: int | None = attrs.field(
        default=None, kw_only=True, repr=False, eq=False, validator=_check_device
    )

    def route(self, kernel: Kernel) -> ModelRoute:
        kernel.load_plugins()  # registers the plugins that answer the hook
        model_id = resolve_model_alias(self.id)  # $FERRULE_MODEL_ALIASES
        route = kernel.plugin_manager.hook.ferrule_resolve_local_model(model_id=model_id)
        if route is None:
            alias = f" (an alias of {model_id!r})" if model_id != self.id else ""
            raise UnknownModelError(
                f"no installed backend runs local model {self.id!r}{alias}; install "
                "ferrule-llamacpp (any machine) or ferrule-exllama (CUDA)",
                model=self.id,
            )
        return ModelRoute(route.component_type, {**route.attributes, **self.options})


@attrs.frozen
class APIModel:
    """A model behind a provider's API. ``api_key`` never appears in reprs."""

    id: str
    provider: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    base_url: str | None = None
    options: dict[str, Any] = attrs.field(factory=dict)
    #: The inference inputs every request of a run with this model carries
    #: (``temperature``, ``top_p``, ``max_tokens``, ``stop``, ``reasoning``): under the
    #: agent's own ``options`` and a run's, which win.
    infer_options: dict[str, Any] = attrs.field(factory=dict, kw_only=True)
    #: The provider plugin that serves it, when ``provider`` is a name to show (an Agno
    #: class's ``provider="OpenAI"``) rather than the plugin's (``"openai"``).
    route_provider: str | None = attrs.field(default=None, kw_only=True)
    #: An Agno class's keyword values (`ferrule.models.base.Model`): none for a plain
    #: `APIModel`.
    agno_settings: dict[str, Any] = attrs.field(factory=dict, kw_only=True, repr=False, eq=False)

    def request_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """One request's ``infer`` inputs as this model sends them: as given here; a
        subclass adds what it computes per request (Claude's system prompt blocks)."""
        return inputs

    def route(self, kernel: Kernel) -> ModelRoute:
        kernel.load_plugins()  # registers the plugins that answer the hook
        provider = self.route_provider or self.provider
        route = kernel.plugin_manager.hook.ferrule_resolve_api_model(
            model_id=self.id, provider=provider
        )
        if route is None:
            if provider is None:
                message = (
                    f"model id {self.id!r} has no well-known prefix; name its provider, e.g. "
                    f"APIModel({self.id!r}, provider='openai')"
                )
            else:
                message = f"no installed plugin provides {provider!r}; install ferrule-{provider}"
            raise UnknownModelError(message, model=self.id, provider=provider)
        attributes = {**route.attributes, **self.options}
        if self.api_key is not None:
            attributes["api_key"] = self.api_key
        if self.base_url is not None:
            attributes["base_url"] = self.base_url
        return ModelRoute(route.component_type, attributes)


def model_infer_options(model: object) -> dict[str, Any]:
    """The inference inputs a model object carries for every request (an `APIModel`'s
    `APIModel.infer_options`); none for other models."""
    options = getattr(model, "infer_options", None)
    return dict(options) if isinstance(options, dict) else {}


def model_request(model: object, inputs: dict[str, Any]) -> dict[str, Any]:
    """One ``infer``'s inputs for ``model``: its own settings (`model_infer_options`)
    under ``inputs``, then what it adds to each request (`APIModel.request_inputs`)."""
    request = {**model_infer_options(model), **inputs}
    if request.get("provider_tools"):
        from ..tools.provider_tools import check_provider_tools

        check_provider_tools(model, request["provider_tools"])
    add = getattr(model, "request_inputs", None)
    return add(request) if callable(add) else request


def fetches_weights(route: ModelRoute) -> bool:
    """Whether ``route``'s weights are fetched by its ``prepare_model`` operator (with byte
    progress) before it is defined: llama.cpp's, the one backend that does; other backends'
    files are theirs to find when defined."""
    return (
        route.component_type == "llamacpp_language_model"
        and "model" in route.attributes
        and route.attributes.get("download") is not False
    )


def prepare_model_inputs(route: ModelRoute) -> dict[str, Any]:
    """The model-management operators' inputs (``prepare_model``...) for a llama.cpp route."""
    inputs = {"model": route.attributes["model"]}
    if route.attributes.get("cache_dir") is not None:
        inputs["cache_dir"] = route.attributes["cache_dir"]
    return inputs


def route_model(
    kernel: Kernel,
    model_id: str,
    provider: str | None = None,
    options: dict[str, Any] | None = None,
) -> ModelRoute:
    """The route of a model known by its id alone (``ferrule chat -m``, ``ferrule serve``'s
    ``model``): with a ``provider`` (given, or named before a colon: ``openai:gpt-4o``),
    that provider's API model; else an API model the installed plugins know by its prefix,
    and failing that a local model. When neither serves it, the `UnknownModelError` gives
    both reasons."""
    options = options or {}
    if provider is None:
        provider, model_id = split_provider(kernel, model_id)
    if provider is not None:
        return APIModel(model_id, provider, options=options).route(kernel)
    try:
        return APIModel(model_id, options=options).route(kernel)
    except UnknownModelError as api_error:
        try:
            return LocalModel(model_id, options).route(kernel)
        except UnknownModelError as local_error:
            raise UnknownModelError(
                f"{local_error.message}; as an API model: {api_error.message}", model=model_id
            ) from None


def split_provider(kernel: Kernel, model_id: str) -> tuple[str | None, str]:
    """``provider:model`` -> (provider, model) when ``provider`` is one: a provider of this
    repository's plugins (installed or not: `APIModel` then says what to install) or one an
    installed plugin accepts for that model. Anything else is a whole id, (None, id):
    ``owner/repo:Q4_K_M`` (a quant), ``ft:gpt-4o-mini:...`` (an OpenAI fine-tune)."""
    from ..catalog import PROVIDERS

    prefix, colon, rest = model_id.partition(":")
    if not colon or not rest or "/" in prefix:
        return None, model_id
    if prefix.lower() in PROVIDERS:
        return prefix, rest
    kernel.load_plugins()  # registers the plugins that answer the hook
    if kernel.plugin_manager.hook.ferrule_resolve_api_model(model_id=rest, provider=prefix):
        return prefix, rest
    return None, model_id


def route_embedder(kernel: Kernel, model_id: str, provider: str | None = None) -> ModelRoute:
    """The route of an embedding model known by its id (``ferrule serve``'s
    ``/v1/embeddings``): the embedder component type the installed plugins'
    ``ferrule_resolve_embedder`` hooks name for it (``provider``: the one to ask), after
    ``$FERRULE_MODEL_ALIASES`` (``BAAI/bge-m3=all-MiniLM-L6-v2``)."""
    model_id = resolve_model_alias(model_id)
    kernel.load_plugins()  # registers the plugins that answer the hook
    route = kernel.plugin_manager.hook.ferrule_resolve_embedder(
        model_id=model_id, provider=provider
    )
    if route is None:
        raise UnknownModelError(
            f"no installed plugin serves embedding model {model_id!r}; install ferrule-minilm "
            "(all-MiniLM-L6-v2, offline), or ferrule-openai or ferrule-gemini for their "
            "embeddings APIs",
            model=model_id,
            provider=provider,
        )
    return route
