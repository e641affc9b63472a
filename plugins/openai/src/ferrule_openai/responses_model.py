"""The `openai_responses_language_model` component: `ferrule_openai.responses_wire` for the
translation, `ferrule_kit.models.sse_model` for the connection (the kit's SSE reader, retries and
typed errors), and the OpenAI component's client (auth, endpoint and key rules); with
``background``, `ferrule_openai.responses_background` creates the response and polls it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, cast

from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.sse_model import SSELanguageModel
from ferrule_kit.network.http import SSEEvent

from . import responses_wire as wire
from .attributes import OpenAIResponsesAttributes
from .model import COMPATIBLE, OPENAI, connect, is_reasoning_model
from .responses_background import Background, poll


class OpenAIResponsesModel(SSELanguageModel):
    """Streams replies from ``POST {base_url}/responses``. The key lives only in the
    client's request headers: not in this object's repr, errors or logs."""

    def __init__(self, attributes: OpenAIResponsesAttributes) -> None:
        client, official = connect(attributes)
        super().__init__(model=attributes.model, url="responses", client=client)
        reasoning_model = attributes.reasoning_model
        if reasoning_model is None:
            reasoning_model = official and is_reasoning_model(attributes.model)
        self.settings = wire.RequestSettings(
            model=attributes.model,
            dialect=OPENAI if official else COMPATIBLE,
            reasoning_model=reasoning_model,
            store=attributes.store,
            reasoning_summary=attributes.reasoning_summary,
            strict_output=attributes.strict_output,
            verbosity=attributes.verbosity,
            extra_body=attributes.extra_body,
            server_tools=None
            if attributes.server_tools is None
            else frozenset(attributes.server_tools),
        )
        self.background = (
            Background(attributes.background_poll_interval, attributes.background_max_wait)
            if attributes.background
            else None
        )

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        return wire.build_request(inputs, self.settings)

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        stream: AsyncGenerator[dict[str, Any], None]
        if self.background is None:
            stream = cast(AsyncGenerator[dict[str, Any], None], super().infer(inputs))
        else:
            stream = poll(self.client, self.url, self.build_request(inputs), self.background)
        async with aclosing(stream) as items:
            async for item in items:
                yield item

    async def translate(
        self, events: AsyncIterator[SSEEvent]
    ) -> AsyncGenerator[dict[str, Any], None]:
        translator = wire.StreamTranslator()
        async for event in events:
            if event.data.strip() == "[DONE]":
                break
            for item in translator.feed(event.json_data(wire.PROVIDER)):
                yield item
            if translator.finished:
                return
        translator.check_complete()


async def create(attributes: OpenAIResponsesAttributes) -> OpenAIResponsesModel:
    return OpenAIResponsesModel(attributes)
