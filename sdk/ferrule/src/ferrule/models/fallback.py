"""Agno's ``agno.models.fallback``: `FallbackConfig` (which models to try when the primary one
fails, by kind of failure) and the calls that use it.

`get_fallback_models` picks the list for a failure: ``on_rate_limit`` for a rate limit,
``on_context_overflow`` for an input over the context window (a failure's kind as
`ModelProviderError.classify` reads it), else ``on_error``, but never for a client error
(a 4xx that is neither): a wrong key or a bad request is the program's to fix, not a
fallback's to hide. `call_model_with_fallback` (and its async and streamed twins) ask the
primary model (`Model.response`) and, when it fails, each fallback in turn; the
``callback`` hears of each switch. A model may be named as ``"provider:model_id"``
(``"openai:gpt-4o"``), as `resolve_models` reads it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Union

import attrs
from ferrule_kernel import InvalidInputError

from ..exceptions import ContextWindowExceededError, ModelProviderError, ModelRateLimitError
from .base import Model
from .response import ModelResponse

__all__ = [
    "FallbackConfig",
    "StreamEvent",
    "acall_model_stream_with_fallback",
    "acall_model_with_fallback",
    "call_model_stream_with_fallback",
    "call_model_with_fallback",
    "get_fallback_models",
    "model_of",
]

_LOG = logging.getLogger("ferrule")
#: What a streamed model call yields.
StreamEvent = Union[ModelResponse, Any]  # noqa: UP007  (Agno's alias: a run's events too)


def model_of(spec: Model | str) -> Model:
    """A model, or one named ``"provider:model_id"`` (openai, openai-responses, anthropic,
    google / gemini, xai, ollama, vllm, llama_cpp)."""
    if isinstance(spec, Model):
        return spec
    provider, colon, model_id = str(spec).partition(":")
    if not colon or not model_id:
        raise InvalidInputError(
            f"name a model as 'provider:model_id' (e.g. 'openai:gpt-4o'), got {spec!r}",
            field="model",
        )
    from .anthropic import Claude
    from .google import Gemini
    from .llama_cpp import LlamaCpp
    from .ollama import Ollama
    from .openai import OpenAIChat, OpenAIResponses
    from .vllm import VLLM
    from .xai import xAI

    classes: dict[str, Callable[[str], Model]] = {
        "openai": OpenAIChat,
        "openai-responses": OpenAIResponses,
        "anthropic": Claude,
        "google": Gemini,
        "gemini": Gemini,
        "xai": xAI,
        "ollama": Ollama,
        "vllm": VLLM,
        "llama_cpp": LlamaCpp,
    }
    made = classes.get(provider.lower())
    if made is None:
        raise InvalidInputError(
            f"unknown provider {provider!r}; one of {', '.join(sorted(classes))}", field="model"
        )
    return made(model_id)


@attrs.define
class FallbackConfig:
    """The models to try when the primary one fails: ``on_rate_limit`` for a rate limit,
    ``on_context_overflow`` for an input over the context window, ``on_error`` for any
    other failure that is not a client error; ``callback(primary_id, fallback_id, error)``
    hears of each switch."""

    on_error: list[Model | str] = attrs.Factory(list)
    on_rate_limit: list[Model | str] = attrs.Factory(list)
    on_context_overflow: list[Model | str] = attrs.Factory(list)
    callback: Callable[[str, str, Exception], None] | None = None

    @property
    def has_fallbacks(self) -> bool:
        return bool(self.on_error or self.on_rate_limit or self.on_context_overflow)

    def resolve_models(self) -> None:
        """Each ``"provider:model_id"`` made a model."""
        for name in ("on_error", "on_rate_limit", "on_context_overflow"):
            setattr(self, name, [model_of(m) for m in getattr(self, name)])


def get_fallback_models(
    fallback_config: FallbackConfig | None, error: Exception
) -> list[Model] | None:
    """The fallbacks for ``error`` (see the module docstring), or None."""
    return [model_of(m) for m in fallbacks_listed(fallback_config, error)] or None


def fallbacks_listed(fallback_config: FallbackConfig | None, error: Exception) -> list[Any]:
    """The list of ``fallback_config`` that ``error`` goes to, as given (models or
    names, or models of any kind ferrule's agent runs), empty for none."""
    if fallback_config is None:
        return []
    if isinstance(error, ModelProviderError):
        error = ModelProviderError.classify(error)
    chosen: list[Any]
    if isinstance(error, ModelRateLimitError) and fallback_config.on_rate_limit:
        chosen = fallback_config.on_rate_limit
    elif isinstance(error, ContextWindowExceededError) and fallback_config.on_context_overflow:
        chosen = fallback_config.on_context_overflow
    elif (
        isinstance(error, ModelProviderError)
        and not isinstance(error, (ModelRateLimitError, ContextWindowExceededError))
        and 400 <= error.status_code < 500
    ):
        return []  # a client error: the program's to fix
    else:
        chosen = fallback_config.on_error
    return list(chosen)


def _fallbacks_for(
    model: Model, fallback_config: FallbackConfig | None, error: ModelProviderError
) -> list[Model]:
    fallbacks = get_fallback_models(fallback_config, error)
    if not fallbacks:
        raise error
    _LOG.warning("model %s failed (%s); trying its fallbacks", getattr(model, "id", model), error)
    return fallbacks


def _switched(
    fallback_config: FallbackConfig | None, primary: Model, fallback: Model, error: Exception
) -> None:
    if fallback_config is not None and fallback_config.callback is not None:
        fallback_config.callback(
            str(getattr(primary, "id", "")), str(getattr(fallback, "id", "")), error
        )


def call_model_with_fallback(
    model: Model, fallback_config: FallbackConfig | None, **kwargs: Any
) -> ModelResponse:
    """``model.response(**kwargs)``, each fallback asked in turn when it fails."""
    try:
        return model.response(**kwargs)
    except ModelProviderError as error:
        last: ModelProviderError = error
        for fallback in _fallbacks_for(model, fallback_config, error):
            _switched(fallback_config, model, fallback, last)
            try:
                return fallback.response(**kwargs)
            except ModelProviderError as failed:
                last = failed
        raise last from error


async def acall_model_with_fallback(
    model: Model, fallback_config: FallbackConfig | None, **kwargs: Any
) -> ModelResponse:
    """`call_model_with_fallback`, awaited (``model.aresponse``)."""
    try:
        return await model.aresponse(**kwargs)
    except ModelProviderError as error:
        last: ModelProviderError = error
        for fallback in _fallbacks_for(model, fallback_config, error):
            _switched(fallback_config, model, fallback, last)
            try:
                return await fallback.aresponse(**kwargs)
            except ModelProviderError as failed:
                last = failed
        raise last from error


def call_model_stream_with_fallback(
    model: Model, fallback_config: FallbackConfig | None, **kwargs: Any
) -> Iterator[StreamEvent]:
    """``model.response_stream(**kwargs)``; when it fails before yielding anything, each
    fallback's stream in turn (a stream that failed midway is not replayed)."""
    candidates: list[Model] = [model]
    tried = 0
    last: ModelProviderError | None = None
    while tried < len(candidates):
        current = candidates[tried]
        tried += 1
        yielded = False
        try:
            for event in current.response_stream(**kwargs):
                yielded = True
                yield event
            return
        except ModelProviderError as error:
            if yielded:
                raise
            if current is model:
                candidates += _fallbacks_for(model, fallback_config, error)
            last = error
            if tried < len(candidates):
                _switched(fallback_config, model, candidates[tried], error)
    if last is not None:
        raise last


async def acall_model_stream_with_fallback(
    model: Model, fallback_config: FallbackConfig | None, **kwargs: Any
) -> AsyncIterator[StreamEvent]:
    """`call_model_stream_with_fallback`, asynchronously (``model.aresponse_stream``)."""
    candidates: list[Model] = [model]
    tried = 0
    last: ModelProviderError | None = None
    while tried < len(candidates):
        current = candidates[tried]
        tried += 1
        yielded = False
        try:
            async for event in current.aresponse_stream(**kwargs):
                yielded = True
                yield event
            return
        except ModelProviderError as error:
            if yielded:
                raise
            if current is model:
                candidates += _fallbacks_for(model, fallback_config, error)
            last = error
            if tried < len(candidates):
                _switched(fallback_config, model, candidates[tried], error)
    if last is not None:
        raise last
