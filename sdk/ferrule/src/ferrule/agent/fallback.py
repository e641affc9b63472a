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

The first model is defined when the agent first runs, as a single model is; the others
only when a request first falls back to them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import FerruleError, InvalidInputError
from ferrule_kit.errors import ContextWindowExceededError, ModelError, RateLimitError
from ferrule_kit.lmspec import ModelRoute

from .langmodel import LangModel, component_name, default_runtime, routing_kernel

#: What ``fallback_on`` takes: error classes, or a predicate on the error.
FallbackOn = tuple[type[FerruleError], ...] | Callable[[FerruleError], bool]


@attrs.frozen(init=False)
class FallbackModel:
    """``FallbackModel(APIModel("gpt-4o"), APIModel("claude-sonnet-4-20250514"),
    LocalModel())``: models tried in order on failure (see the module docstring). Each is
    a `LocalModel`, `APIModel`, `TestModel` or `LangModel` (the `LangModel`s on the
    agent's runtime). ``fallback_on``: the error classes that fall back (default:
    `ModelError`), or a function of the error saying whether to."""

    models: tuple[Any, ...]
    fallback_on: FallbackOn

    def __init__(
        self, default_model: Any, *fallback_models: Any, fallback_on: FallbackOn = (ModelError,)
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
        self.__attrs_init__(models, fallback_on)  # type: ignore[attr-defined]

    def falls_back_on(self, error: FerruleError) -> bool:
        if isinstance(self.fallback_on, tuple):
            return isinstance(error, self.fallback_on)
        return bool(self.fallback_on(error))


def agno_fallback_on(error: FerruleError) -> bool:
    """Agno's ``fallback_models`` (its `FallbackConfig.on_error`): any model failure but a
    client error, a 4xx other than a rate limit or an input over the context window (a bad
    key or request is the program's to fix, not a fallback's to hide)."""
    if not isinstance(error, ModelError):
        return False
    if isinstance(error, (RateLimitError, ContextWindowExceededError)):
        return True
    return not 400 <= error.status_code < 500


def with_fallbacks(
    model: Any, fallback_models: Sequence[Any] | None, model_of: Callable[[str], Any]
) -> Any:
    """``model``, or (Agno's ``Agent(fallback_models=[...])``, models or
    ``"provider:model_id"`` names, which ``model_of`` makes models) a `FallbackModel` trying
    them after it, on the failures Agno's fall back on (`agno_fallback_on`). ``model``
    itself may be such a name (Agno's ``Agent(model="openai:gpt-4o")``)."""
    model = model_of(model) if isinstance(model, str) else model
    if not fallback_models:
        return model
    if isinstance(model, FallbackModel):
        raise InvalidInputError(
            "the model is a FallbackModel already: list every model in it, or give a "
            "single model with fallback_models",
            field="fallback_models",
        )
    extra = [model_of(m) if isinstance(m, str) else m for m in fallback_models]
    for index, fallback in enumerate(extra):
        if not (isinstance(fallback, LangModel) or hasattr(fallback, "route")):
            raise InvalidInputError(
                f"expected a model or a 'provider:model_id' name, got {type(fallback).__name__}",
                field=f"fallback_models[{index}]",
            )
    return FallbackModel(model, *extra, fallback_on=agno_fallback_on)


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
        return cls(model, component_name("agent"), route, owned=True, defined=False)

    async def ensure_defined(self, runtime: Any) -> None:
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
