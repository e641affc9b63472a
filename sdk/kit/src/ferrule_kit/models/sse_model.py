"""The common part of a provider's language-model component whose API streams its replies as
server-sent events of JSON (Anthropic's Messages API, Gemini's ``streamGenerateContent``).

The plugin supplies the request body and the translation of the reply's events; this base
holds the connection: one `HTTPClient` per component, one POST per ``infer``, the
connection dropped when the reply ends or its consumer abandons it, and the client closed
with the component; `keyed_client` builds that client from the component's attributes and
the provider's wire module (`KeyedWire`). (Chat Completions backends use
`ferrule_kit.models.chat_completions.ChatCompletionsModel`, built on the same
`HTTPClient.for_component`.)
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Protocol

from ferrule_kit.network.http import HTTPClient, ProviderErrorInfo, SSEEvent, resolve_api_key

from .lm import InferInput

if TYPE_CHECKING:
    from .providerspec import ProviderAttributes


class KeyedWire(Protocol):
    """What a provider's wire module names for its connection (the module itself is one):
    the provider's name, its endpoint when ``base_url`` is not given, the headers that
    carry a key, and its error bodies' parser (`ferrule_kit.network.http.ErrorParser`)."""

    PROVIDER: str

    def default_base_url(self) -> str: ...

    def request_headers(self, api_key: str) -> dict[str, str]: ...

    def parse_error(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> ProviderErrorInfo: ...


def keyed_client(
    attributes: ProviderAttributes, wire: KeyedWire, key_variables: Sequence[str]
) -> HTTPClient:
    """The component's client: the key given, else one from ``key_variables`` or the
    user's stored keys (`ferrule_kit.network.http.resolve_api_key`), sent only in the wire's
    headers and scrubbed from errors; the endpoint and connection settings from
    ``attributes``."""
    key: str = resolve_api_key(wire.PROVIDER, attributes.api_key, key_variables)  # type: ignore[assignment]
    return HTTPClient.for_component(
        attributes,
        provider=wire.PROVIDER,
        base_url=attributes.base_url or wire.default_base_url(),
        headers=wire.request_headers(key),
        secrets=[key],
        parse_error=wire.parse_error,
    )


class SSELanguageModel:
    """Subclass with `build_request` and `translate`; ``define`` gets ``infer`` and ``close``.

    ``url`` is where each request is POSTed (absolute, or relative to the client's base URL).
    """

    def __init__(self, *, model: str, url: str, client: HTTPClient) -> None:
        self.model = model
        self.url = url
        self.client = client

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, url={self.url!r})"

    def build_request(self, inputs: InferInput) -> dict[str, Any]:
        """The JSON body for ``inputs``; refuse what the provider cannot take before sending."""
        raise NotImplementedError

    def translate(self, events: AsyncIterator[SSEEvent]) -> AsyncGenerator[dict[str, Any], None]:
        """Stream items (`ferrule_kit.models.lm`) from the reply's events (`SSEEvent.json_data`
        decodes one), ending with the finish item, or a typed error if the reply broke off."""
        raise NotImplementedError

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        body = self.build_request(inputs)
        events = await self.client.open_sse(self.url, body)
        try:
            async with aclosing(self.translate(events)) as items:
                async for item in items:
                    yield item
        finally:
            await events.aclose()  # abandoning the stream drops its connection

    async def close(self) -> None:
        await self.client.close()
