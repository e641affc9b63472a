"""The `gemini_interactions_language_model` component: `ferrule_gemini.interactions_wire`
for the translation, the Gemini component's client rules (`ferrule_gemini.wire`: key header,
endpoint, error bodies and retries) for the connection.

A foreground interaction is streamed (``"stream": true``). A background one (Deep Research
and other long agents) is created, then read with ``GET interactions/{id}`` every
``poll_interval`` seconds until it ends; past ``max_wait`` the request ends with
`ProviderTimeoutError`, naming the interaction so it can be fetched later.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ferrule_kit.errors import ProviderTimeoutError
from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.sse_model import SSELanguageModel, keyed_client
from ferrule_kit.network.http import SSEEvent

from . import interactions_wire, wire
from .interactions_attributes import GeminiInteractionsAttributes
from .plugin import API_KEY_VARIABLES


class GeminiInteractionsModel(SSELanguageModel):
    """Replies from Gemini's Interactions API. The key travels only in the
    ``x-goog-api-key`` header, never in a URL, repr or error."""

    def __init__(self, attributes: GeminiInteractionsAttributes) -> None:
        client = keyed_client(attributes, wire, API_KEY_VARIABLES)
        super().__init__(model=attributes.model, url=interactions_wire.PATH, client=client)
        self.settings = interactions_wire.RequestSettings(
            model=attributes.model,
            agent=attributes.agent,
            agent_config=attributes.agent_config,
            store=attributes.store,
            background=attributes.background,
            environment=attributes.environment,
            service_tier=attributes.service_tier,
            response_modalities=attributes.response_modalities,
            generation_config=dict(attributes.generation_config),
            extra_body=dict(attributes.extra_body),
        )
        self.poll_interval = attributes.poll_interval
        self.max_wait = attributes.max_wait

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        return interactions_wire.build_request(inputs, self.settings, stream=True)

    async def translate(
        self, events: AsyncIterator[SSEEvent]
    ) -> AsyncGenerator[dict[str, Any], None]:
        translator = interactions_wire.StreamTranslator()
        async for event in events:
            if event.data.strip() == "[DONE]":
                break
            for item in translator.feed(event.json_data(wire.PROVIDER)):
                yield item
            if translator.finished:
                return
        translator.close()

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        if not self.settings.background:
            async for item in super().infer(inputs):
                yield item
            return
        body = self.build_request(inputs)
        interaction = await self.client.request_json(self.url, body)
        for item in interactions_wire.interaction_items(await self._until_done(interaction)):
            yield item

    async def _until_done(self, interaction: Any) -> Any:
        """``interaction`` read again until its status is terminal (or the wait is over)."""
        deadline = time.monotonic() + self.max_wait
        while isinstance(interaction, dict) and (
            interaction.get("status") not in interactions_wire.TERMINAL_STATUSES
        ):
            interaction_id = str(interaction.get("id") or "")
            path = interactions_wire.interaction_path(interaction_id)
            if time.monotonic() + self.poll_interval > deadline:
                raise ProviderTimeoutError(
                    f"{wire.PROVIDER}: interaction {interaction_id} did not end within "
                    f"{self.max_wait:g}s (last status: {interaction.get('status')})",
                    provider=wire.PROVIDER,
                    interaction_id=interaction_id,
                    status=None,
                )
            await asyncio.sleep(self.poll_interval)
            interaction = await self.client.request_json(path, method="GET")
        return interaction


async def create(attributes: GeminiInteractionsAttributes) -> GeminiInteractionsModel:
    return GeminiInteractionsModel(attributes)
