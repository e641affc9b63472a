"""`FallbackModel`: an agent's models, tried in order when one fails (pydantic-ai's
``FallbackModel``), and `ModelSlot`, one model of an agent with its component.

Each model request goes to the first model. When it fails with an error ``fallback_on``
accepts before the model streamed anything, the next model gets the same request, and
so on; the next request starts from the first model again. What counts by default is
any `ModelError`: everything a provider or backend can answer with (HTTP 4xx and 5xx,
authentication, rate limits and quotas, connection failures, timeouts), as pydantic-ai's
default ``ModelAPIError`` does. A failure after the first streamed item is final: the
caller has already seen that model's output, and a second model's would duplicate or
contradict it. Bad input (`InvalidInputError`, `UnsupportedContentError`), a model's
malformed tool call and cancellation never fall back, and neither does a model that
cannot be defined (a missing key, missing weights): that is configuration, for the
user to fix. When every model failed, the run ends with `FallbackModelsFailedError`
carrying each failure.

Built from Agno's `FallbackConfig` (``Agent(fallback_config=...)``; ``fallback_models`` is
its ``on_error``), the first model's failure picks which fallbacks are tried, as
`ferrule.models.fallback.fallbacks_listed` reads it (``on_rate_limit``, ``on_context_overflow``, else
``on_error``; never for a client error), and a fallback that fails too hands over to the
next of them whatever its failure; the config's ``callback(primary_id, fallback_id,
error)`` is told once a fallback's answer has streamed to its end.

The first model is defined when the agent first runs, as a single model is; the others
only when a request first falls back to them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable
from typing import Any

import attrs
from ferrule_kernel import FerruleError, InvalidInputError, get_logger
from ferrule_kit.errors import ModelError
from ferrule_kit.models.lmspec import ModelRoute

from ..models.fallback import FallbackConfig, fallbacks_listed
from .langmodel import LangModel, component_name, default_runtime, routing_kernel

log = get_logger("ferrule.agent")

#: What ``fallback_on`` takes: error classes, or a predicate on the error.
FallbackOn = tuple[type[FerruleError], ...] | Callable[[FerruleError], bool]


@attrs.frozen(init=False)
class FallbackModel:
    """``FallbackModel(APIModel("gpt-4o"), APIModel("claude-sonnet-4-20250514"),
    LocalModel())``: models tried in order on failure (see the module docstring). Each is
    a `LocalModel`, `APIModel`, `TestModel` or `LangModel` (the `LangModel`s on the
    agent's runtime). ``fallback_on``: the error classes that fall back (default:
    `ModelError`), or a function of the error saying whether to. ``config``: Agno's
    `FallbackConfig` the fallbacks came from (see the module docstring)."""

    models: tuple[Any, ...]
    fallback_on: FallbackOn
    config: FallbackConfig | None

    def __init__(
        self,
        default_model: Any,
        *fallback_models: Any,
        fallback_on: FallbackOn = (ModelError,),
        config: FallbackConfig | None = None,
    ) -> None:
        models = (default_model, *fallback_models)
        for index, model in enumerate(models):
            if isinstance(model, FallbackModel) or not (
                isinstance(model, LangModel) or hasattr(model, "route")
            ):
                raise InvalidInputError(
                    "a FallbackModel's models are LocalModels, APIModels, TestModels or "
                    f"LangModels, got {type(model).__name__}",
                    field=f"models[{index}]",
                )
        self.__attrs_init__(models, fallback_on, config)  # type: ignore[attr-defined]

    def falls_back_on(self, error: FerruleError) -> bool:
        if isinstance(self.fallback_on, tuple):
            return isinstance(error, self.fallback_on)
        return bool(self.fallback_on(error))

    def fallbacks_for(self, error: FerruleError) -> list[int]:
        """Which models (their indices) to try, in order, after the first one failed with
        ``error``: the config's list for it, else every other model if `falls_back_on`."""
        if self.config is None:
            return list(range(1, len(self.models))) if self.falls_back_on(error) else []
        if not isinstance(error, ModelError):  # bad input, a malformed call: never
            return []
        chosen = fallbacks_listed(self.config, error)
        return [next(i for i, m in enumerate(self.models) if m is model) for model in chosen]

    def told(
        self, stream: AsyncGenerator[dict[str, Any], None], index: int, error: FerruleError
    ) -> AsyncGenerator[dict[str, Any], None]:
        """``stream``, model ``index``'s answer after the first model failed with ``error``,
        telling the config's ``callback`` once it has streamed to its end."""
        callback = self.config.callback if self.config is not None else None
        if callback is None:
            return stream
        ids = [str(getattr(m, "id", None) or getattr(m, "name", "")) for m in self.models]

        async def streamed() -> AsyncGenerator[dict[str, Any], None]:
            try:
                async for item in stream:
                    yield item
            finally:
                await stream.aclose()
            try:
                callback(ids[0], ids[index], error)
            except Exception as exc:  # the host's callback: its failure is not the run's
                log.warning("fallback_callback_failed", error=repr(exc))

        return streamed()


def with_fallbacks(model: Any, settings: Any, model_of: Callable[[str], Any]) -> Any:
    """``model``, or a `FallbackModel` trying its fallbacks after it: Agno's
    ``fallback_config`` (a `FallbackConfig`) or, without one, ``fallback_models`` (models
    or ``"provider:model_id"`` names, which ``model_of`` makes models), as the config's
    ``on_error`` (``settings``: the agent's `settings.ModelSettings`). ``model`` itself may
    be such a name (Agno's ``Agent(model="openai:gpt-4o")``)."""
    model = model_of(model) if isinstance(model, str) else model
    config, field = settings.fallback_config, "fallback_config"
    if config is None and settings.fallback_models:
        config, field = FallbackConfig(on_error=list(settings.fallback_models)), "fallback_models"
    if config is None or not config.has_fallbacks:
        return model
    if isinstance(model, FallbackModel):
        raise InvalidInputError(
            f"the model is a FallbackModel already: list every model in it, or give a "
            f"single model with {field}",
            field=field,
        )
    extra: list[Any] = []
    for name in ("on_error", "on_rate_limit", "on_context_overflow"):
        made = []
        for index, fallback in enumerate(getattr(config, name)):
            fallback = model_of(fallback) if isinstance(fallback, str) else fallback
            if not (isinstance(fallback, LangModel) or hasattr(fallback, "route")):
                where = field if field == "fallback_models" else f"{field}.{name}"
                raise InvalidInputError(
                    "expected a model or a 'provider:model_id' name, got "
                    f"{type(fallback).__name__}",
                    field=f"{where}[{index}]",
                )
            made.append(fallback)
            if not any(fallback is m for m in extra):
                extra.append(fallback)
        setattr(config, name, made)  # as Agno's resolve_models leaves them: models
    return FallbackModel(model, *extra, fallback_on=(ModelError,), config=config)


@attrs.define(eq=False)
class ModelSlot:
    """One model of an agent: the component serving it, defined on first use (and deleted
    with the agent) unless it is a shared `LangModel`'s."""

    model: Any
    component: str
    route: ModelRoute
    owned: bool
    defined: bool
    _lock: asyncio.Lock | None = None
    #: The model's ``options`` when it was routed: a model remade with other settings
    #: (``GeminiInteractions``' keywords set between runs) has new ones, and is routed again.
    _options: Any = None

    @classmethod
    def of(cls, model: Any, runtime: Any) -> ModelSlot:
        if isinstance(model, LangModel):
            if model.runtime is not runtime:
                raise InvalidInputError(
                    "the LangModels of a FallbackModel must share one runtime", field="model"
                )
            return cls(model, model.name, model.route, owned=False, defined=True)
        if not hasattr(model, "route"):
            raise InvalidInputError(
                "model must be a LocalModel, APIModel, TestModel, LangModel or FallbackModel, "
                f"got {type(model).__name__}",
                field="model",
            )
        route = model.route(routing_kernel(runtime))
        slot = cls(model, component_name("agent"), route, owned=True, defined=False)
        slot._options = getattr(model, "options", None)
        return slot

    async def ensure_defined(self, runtime: Any) -> None:
        if self.owned and getattr(self.model, "options", None) is not self._options:
            await self._reroute(runtime)
        if self.defined:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if not self.defined:
                await runtime.adefine(
                    self.route.component_type, self.component, self.route.attributes
                )
                self.defined = True

    async def _reroute(self, runtime: Any) -> None:
        """Define the component again for the model's new settings (before the next run)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            options = getattr(self.model, "options", None)
            if options is self._options:
                return
            if self.defined:
                await runtime.adelete(self.component)
                self.defined = False
            self.route = self.model.route(routing_kernel(runtime))
            self._options = options


def model_slots(runtime: Any, model: Any) -> tuple[Any, list[ModelSlot]]:
    """The runtime an agent given ``runtime`` and ``model`` runs on (a `LangModel`'s own,
    else ``runtime``, else the default one), and its models' slots, the first one first."""
    models = model.models if isinstance(model, FallbackModel) else (model,)
    shared = next((m for m in models if isinstance(m, LangModel)), None)
    if shared is not None:
        runtime = shared.runtime  # where its component lives
    elif runtime is None:
        runtime = default_runtime()
    return runtime, [ModelSlot.of(m, runtime) for m in models]
