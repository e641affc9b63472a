"""Ailoy 0.1's API models, ``openai``, ``gemini``, ``claude`` and ``grok``, over the provider
plugins' own language models (``openai_language_model``, ``gemini_language_model``,
``anthropic_language_model``, ``xai_language_model``).

Ailoy 0.1 defines them with ``{api_key, model}`` and calls ``infer`` with OpenAI's chat
request (``{messages, tools?}``, content a string or parts). It is not streamed: the
iterator yields exactly one item, the provider's whole reply::

    rt.define("openai", "oai", {"api_key": "sk-...", "model": "gpt-4o"})
    for item in rt.call_iter_method("oai", "infer", {"messages": [
            {"role": "user", "content": "Who was US president in 2021?"}]}):
        item -> {"message": {"role": "assistant", "content": "Joe Biden"},
                 "finish_reason": "stop", "usage": {...}}

Defining one defines the provider's model (``oai/model``, deleted with it) with the same key
and model id; ``infer`` streams that model's ``infer``, collects it
(`ferrule_kit.models.lm.MessageAccumulator`) and answers with OpenAI's wire message, as Ailoy did:

- ``content``: the reply's text as a string; absent when the reply only calls tools (OpenAI
  sends null there, which Ailoy left out), and, with Grok, whenever it calls tools;
- ``tool_calls``: ``[{"id", "type": "function", "function": {"name", "arguments"}}]``,
  arguments a JSON object (Ailoy parsed OpenAI's string);
- ``finish_reason``: the provider's, ``"tool_calls"`` whenever the reply calls tools (Ailoy's
  fix for Grok, which says ``"stop"``); ``usage`` and ``reasoning`` (ferrule's wire parts,
  only when reasoning was asked for) beside them, which Ailoy's code does not read.

Each type speaks its provider's own API, not Ailoy's choice of endpoint: Ailoy sent
``claude`` and ``gemini`` to Anthropic's and Google's OpenAI-compatible endpoints, ferrule's
plugins speak the Messages API and the Gemini API with the same keys, and the answer has
the same shape. The endpoint moves with the provider's variable (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``, ``GEMINI_BASE_URL``, ``XAI_BASE_URL``). ``api_key`` is required, as
in Ailoy, and never shown (reprs, logs, errors).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import attrs
from ferrule_kernel import ComponentRequests, InvalidInputError
from ferrule_kit.content.messages import converter
from ferrule_kit.models.lm import InferInput, MessageAccumulator

from .plugin import API_MODEL_TYPES

__all__ = [
    "APIModel",
    "APIModelAttributes",
    "create_claude",
    "create_gemini",
    "create_grok",
    "create_openai",
    "reply_item",
]


def _not_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value:
        raise InvalidInputError("must not be empty", field=attribute.name)


@attrs.frozen
class APIModelAttributes:
    """What ``define("openai" | "gemini" | "claude" | "grok", name, attrs)`` takes: Ailoy
    0.1's attributes, both required."""

    #: The provider's key (an Anthropic key for ``claude``, a Google key for ``gemini``).
    api_key: str = attrs.field(repr=False, validator=_not_empty)
    #: The provider's model id (``gpt-4o``, ``claude-sonnet-4-20250514``, ...).
    model: str = attrs.field(validator=_not_empty)


def reply_item(
    collected: MessageAccumulator, *, drops_text_with_tool_calls: bool
) -> dict[str, Any]:
    """The one item Ailoy 0.1's ``infer`` answers, from the provider's collected stream."""
    calls = collected.tool_calls()
    message: dict[str, Any] = {"role": "assistant"}
    text = "".join(collected.text)
    if not calls or (text and not drops_text_with_tool_calls):
        message["content"] = text
    if calls:
        message["tool_calls"] = converter.unstructure(calls)
    if collected.reasoning:
        message["reasoning"] = converter.unstructure(collected.reasoning)
    item: dict[str, Any] = {
        "message": message,
        "finish_reason": "tool_calls" if calls else collected.finish_reason,
    }
    if collected.usage is not None:
        item["usage"] = collected.usage
    return item


class APIModel:
    """An Ailoy 0.1 API model: requests to the provider's model ``model`` (the module
    docstring)."""

    def __init__(
        self,
        requests: ComponentRequests,
        component_type: str,
        model: str,
        *,
        drops_text_with_tool_calls: bool = False,
    ) -> None:
        self.requests = requests
        self.component_type = component_type
        self.model = model
        self.drops_text_with_tool_calls = drops_text_with_tool_calls

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.component_type!r}, {self.model!r})"

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        collected = MessageAccumulator()
        request = converter.unstructure(inputs)
        async for item in self.requests.iter_method(self.model, "infer", request):
            collected.add(item)
        yield reply_item(collected, drops_text_with_tool_calls=self.drops_text_with_tool_calls)


async def _create(
    component_type: str, attributes: APIModelAttributes, requests: ComponentRequests
) -> APIModel:
    model = await requests.define(
        API_MODEL_TYPES[component_type],
        "model",
        {"model": attributes.model, "api_key": attributes.api_key},
    )
    # Grok's rule in Ailoy 0.1: a reply that calls tools carries no text.
    drops = component_type == "grok"
    return APIModel(requests, component_type, model, drops_text_with_tool_calls=drops)


async def create_openai(attributes: APIModelAttributes, requests: ComponentRequests) -> APIModel:
    return await _create("openai", attributes, requests)


async def create_gemini(attributes: APIModelAttributes, requests: ComponentRequests) -> APIModel:
    return await _create("gemini", attributes, requests)


async def create_claude(attributes: APIModelAttributes, requests: ComponentRequests) -> APIModel:
    return await _create("claude", attributes, requests)


async def create_grok(attributes: APIModelAttributes, requests: ComponentRequests) -> APIModel:
    return await _create("grok", attributes, requests)
