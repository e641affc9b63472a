"""What an agent reads from its model's own settings (an Agno model class's keywords,
`ferrule.models.params`), each step of a run asking here rather than the model:

- ``instructions`` and ``system_prompt`` (`model_instructions`, `model_system_prompt`):
  what the model adds to the system message the agent builds;
- ``supports_native_structured_outputs`` / ``supports_json_schema_outputs``
  (`StructuredOutputs`): how an output schema is asked for, the schema itself or JSON
  mode with the schema in the system message;
- ``retry_with_guidance`` / ``retry_with_guidance_limit`` (`guidance_after`): a reply
  whose tool call cannot be read (arguments that are not JSON, Gemini's
  ``MALFORMED_FUNCTION_CALL`` or ``UNEXPECTED_TOOL_CALL``) is asked for again with a
  note telling the model what went wrong, up to the limit;
- ``cache_response``, ``cache_ttl``, ``cache_dir`` (`model_stream`): each request
  answered from the model's response cache (`response_cache`) when it can be.

A model of ferrule's own (`APIModel`, `LocalModel`, `TestModel` with no Agno keywords)
has none of these: its schema is sent as the schema, and a malformed call ends the run.
Of a `FallbackModel` (or Agno's ``fallback_models``), the first model's settings shape
the system message and the schema; each model's own cache answers for it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import attrs
from ferrule_kernel import FerruleError, get_logger
from ferrule_kit.content.messages import Message
from ferrule_kit.errors import InvalidToolCallError, ModelError
from ferrule_kit.models.lm import ANY_JSON_OBJECT

from .response_cache import ResponseCache

__all__ = [
    "GUIDANCE",
    "MALFORMED_FINISH_REASONS",
    "StructuredOutputs",
    "agno_settings",
    "guidance_after",
    "model_instructions",
    "model_stream",
    "model_system_prompt",
]

log = get_logger("ferrule.agent")

#: What the model is told when its tool call could not be read (``retry_with_guidance``).
GUIDANCE = (
    "Your last tool call could not be used ({error}). Call a tool the request lists, "
    "with arguments that are one valid JSON object, or answer without a tool."
)

#: A provider's finish reasons that mean the model's tool call was malformed (Gemini's).
MALFORMED_FINISH_REASONS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"})


def first_model(model: Any) -> Any:
    """``model``, or the first of a `FallbackModel`'s (its ``models``: this module sits
    below `fallback` in the agent package's layers, so it asks rather than imports)."""
    models = getattr(model, "models", None)
    return models[0] if isinstance(models, tuple) and models else model


def agno_settings(model: Any) -> Mapping[str, Any]:
    """The Agno keywords ``model`` (or a `FallbackModel`'s first) was made with; empty
    for a model of ferrule's own."""
    settings = getattr(first_model(model), "agno_settings", None)
    return settings if isinstance(settings, Mapping) else {}


def model_instructions(model: Any, tools: Sequence[Any] | None = None) -> list[str]:
    """The model's instructions for the system message (its
    ``get_instructions_for_model``, which a subclass may override)."""
    get = getattr(first_model(model), "get_instructions_for_model", None)
    found = get(list(tools) if tools is not None else None) if callable(get) else None
    if not found:
        return []
    return [found] if isinstance(found, str) else [str(i) for i in found]


def model_system_prompt(model: Any, tools: Sequence[Any] | None = None) -> str | None:
    """The model's own part of the system message (its ``get_system_message_for_model``,
    which a subclass may override), added after what the agent builds."""
    get = getattr(first_model(model), "get_system_message_for_model", None)
    found = get(list(tools) if tools is not None else None) if callable(get) else None
    return str(found) if found else None


@attrs.frozen
class StructuredOutputs:
    """How a model takes an output schema: ``native`` (the provider's structured output:
    the schema is sent), ``json_schema`` (the provider follows a JSON schema it is sent),
    or neither (JSON mode, the schema told in the system message)."""

    native: bool = True
    json_schema: bool = False

    @classmethod
    def of(cls, model: Any) -> StructuredOutputs:
        settings = agno_settings(model)
        if "supports_native_structured_outputs" not in settings:
            return cls()  # ferrule's own models: the backend constrains to the schema
        return cls(
            bool(settings["supports_native_structured_outputs"]),
            bool(settings.get("supports_json_schema_outputs")),
        )

    def schema_sent(self, schema: dict[str, Any], use_json_mode: bool) -> dict[str, Any]:
        """The ``output_schema`` the request carries: the schema, or `ANY_JSON_OBJECT`
        (the provider's JSON mode) for a model with neither capability, or when
        ``use_json_mode`` asks for JSON mode on a natively structured one."""
        if self.native:
            return ANY_JSON_OBJECT if use_json_mode else schema
        return schema if self.json_schema else ANY_JSON_OBJECT

    def schema_in_prompt(self, use_json_mode: bool) -> bool:
        """Whether the system message gives the schema (the model is not sent it, or is
        asked for JSON mode)."""
        return use_json_mode or not (self.native or self.json_schema)


def malformed_call(error: BaseException) -> bool:
    """Whether ``error`` says the model's tool call could not be used."""
    if isinstance(error, InvalidToolCallError):
        return True
    return (
        isinstance(error, ModelError)
        and error.details.get("finish_reason") in MALFORMED_FINISH_REASONS
    )


def guidance_after(model: Any, error: BaseException, attempts: int) -> Message | None:
    """The note to ask again with after ``error`` (a malformed tool call), when the
    model's ``retry_with_guidance`` is on and fewer than its
    ``retry_with_guidance_limit`` notes were sent (``attempts``); else None (the error
    ends the run)."""
    settings = agno_settings(model)
    if not settings.get("retry_with_guidance") or not malformed_call(error):
        return None
    if attempts >= int(settings.get("retry_with_guidance_limit", 1)):
        return None
    message = error.message if isinstance(error, FerruleError) else str(error)
    log.info("model_retry_with_guidance", attempt=attempts + 1, error=message)
    return Message("user", GUIDANCE.format(error=message))


def model_stream(
    runtime: Any, slot: Any, request: dict[str, Any]
) -> AsyncGenerator[dict[str, Any], None]:
    """The ``infer`` stream of ``request`` to ``slot``'s model: from its response cache
    when it has one holding the request, else from the model (kept in the cache when it
    has one)."""
    cache = ResponseCache.of(agno_settings(slot.model))
    if cache is None:
        stream: AsyncGenerator[dict[str, Any], None]
        stream = runtime.acall_iter_method(slot.component, "infer", request)
        return stream
    model = {"type": slot.route.component_type, "id": getattr(slot.model, "id", None)}
    key = cache.key(model, request)
    items = cache.get(key)
    if items is not None:
        log.info("response_cache_hit", model=model["id"], key=key)
        return cache.replay(items)
    return cache.record(key, runtime.acall_iter_method(slot.component, "infer", request))
