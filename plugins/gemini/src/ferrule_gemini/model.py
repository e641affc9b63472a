"""The `gemini_language_model` component: `ferrule_gemini.wire` for the translation,
`ferrule_kit.models.sse_model` for the connection (the kit's SSE reader, retry policy and typed
errors)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.sse_model import SSELanguageModel, keyed_client
from ferrule_kit.network.http import SSEEvent

from . import wire
from .attributes import GeminiAttributes
from .plugin import API_KEY_VARIABLES


class GeminiLanguageModel(SSELanguageModel):
    """Streams Gemini replies from ``streamGenerateContent``. The key travels only in the
    ``x-goog-api-key`` header, never in the URL, so it cannot reach a log or an error."""

    def __init__(self, attributes: GeminiAttributes) -> None:
        client = keyed_client(attributes, wire, API_KEY_VARIABLES)
        url = wire.stream_url(attributes.base_url, attributes.model)
        super().__init__(model=attributes.model, url=url, client=client)
        self.generation_config = dict(attributes.generation_config)
        self.extra_body = dict(attributes.extra_body)

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        body = wire.build_request(inputs, model=self.model)
        if self.generation_config:
            body["generationConfig"] = {
                **body.get("generationConfig", {}),
                **self.generation_config,
            }
        return {**body, **self.extra_body}

    async def translate(
        self, events: AsyncIterator[SSEEvent]
    ) -> AsyncGenerator[dict[str, Any], None]:
        translator = wire.StreamTranslator()
        async for event in events:
            for item in translator.feed(event.json_data(wire.PROVIDER)):
                yield item
        yield translator.close()  # Gemini ends a reply by closing the stream


async def create(attributes: GeminiAttributes) -> GeminiLanguageModel:
    return GeminiLanguageModel(attributes)
