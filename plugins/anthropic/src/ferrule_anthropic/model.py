"""The `anthropic_language_model` component: `ferrule_anthropic.wire` for the translation,
`ferrule_kit.models.sse_model` for the connection (the kit's SSE reader, retry policy and typed
errors)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.sse_model import SSELanguageModel, keyed_client
from ferrule_kit.network.http import SSEEvent

from . import replies, wire
from .attributes import AnthropicAttributes
from .plugin import API_KEY_VARIABLE


class AnthropicLanguageModel(SSELanguageModel):
    """Streams Claude replies from the Messages API. The key lives only in the client's
    request headers: not in this object's repr, errors or logs."""

    def __init__(self, attributes: AnthropicAttributes) -> None:
        client = keyed_client(attributes, wire, [API_KEY_VARIABLE])
        super().__init__(
            model=attributes.model, url=wire.messages_url(attributes.base_url), client=client
        )
        self.extra_body = dict(attributes.extra_body)
        self.settings: dict[str, Any] = {
            "max_tokens": attributes.max_tokens,
            "trailing_user_message": attributes.trailing_user_message,
            "server_tools": None
            if attributes.server_tools is None
            else frozenset(attributes.server_tools),
        }
        self.count_url = wire.count_tokens_url(attributes.base_url)

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        body = wire.build_request(inputs, model=self.model, **self.settings)
        # the host's fields join the wire's: an object both write (output_config) is merged,
        # the host's fields winning
        for name, value in self.extra_body.items():
            written = body.get(name)
            body[name] = (
                {**written, **value}
                if isinstance(written, dict) and isinstance(value, dict)
                else value
            )
        return body

    async def count_tokens(self, inputs: InferInput) -> dict[str, int]:
        """Anthropic's own count (``POST /v1/messages/count_tokens``, free: nothing is
        generated) of the request ``infer`` would send."""
        body = wire.build_count_request(inputs, model=self.model, **self.settings)
        reply = await self.client.request_json(self.count_url, body)
        return {"input_tokens": wire.counted_tokens(reply)}

    async def translate(
        self, events: AsyncIterator[SSEEvent]
    ) -> AsyncGenerator[dict[str, Any], None]:
        translator = replies.StreamTranslator()
        async for event in events:
            for item in translator.feed(event.event, event.json_data(wire.PROVIDER)):
                yield item
            if translator.finished:
                return
        translator.check_complete()


async def create(attributes: AnthropicAttributes) -> AnthropicLanguageModel:
    return AnthropicLanguageModel(attributes)
