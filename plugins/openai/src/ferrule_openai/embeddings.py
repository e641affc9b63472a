"""The `openai_embedder` component: OpenAI's embeddings API, and any server that speaks it.

Wire (``POST {base_url}/embeddings``)::

    {"model": "text-embedding-3-small", "input": ["text", ...], "encoding_format": "float",
     "dimensions": 512}                                  # dimensions: only when asked for
    -> {"object": "list", "model": "...",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.01, ...]}, ...],
        "usage": {"prompt_tokens": 9, "total_tokens": 9}}

Texts go in batches of at most ``max_batch`` (OpenAI takes 2048 inputs a request); each
reply's ``data`` is put back in order by ``index``. ``encoding_format: "base64"`` (little-
endian float32, what OpenAI's own SDK asks for) is a third of the bytes of JSON floats;
"float" is the default because every compatible server speaks it. The key is handled as
by `openai_language_model`: from ``api_key`` or ``OPENAI_API_KEY`` for OpenAI's API, only
from ``api_key`` for any other ``base_url``.
"""

from __future__ import annotations

import array
import base64
import os
import sys
from typing import Any, Literal

import attrs
from ferrule_kernel import in_range
from ferrule_kit.embeddings.embedding import (
    EmbedderInfo,
    EmbeddingUsage,
    EmbedInput,
    EmbedOutput,
    EmbedTokensInput,
    InfoInput,
    check_vectors,
)
from ferrule_kit.errors import ProviderProtocolError
from ferrule_kit.models.providerspec import ProviderAttributes
from ferrule_kit.network.http import HTTPClient, RetryPolicy, Timeouts, resolve_api_key

from .plugin import API_KEY_VARIABLE, DEFAULT_BASE_URL, PROVIDER

#: Dimensions of OpenAI's models when ``dimensions`` is not asked for.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
MAX_INPUTS = 2048


@attrs.frozen
class OpenAIEmbedderAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and the embeddings API's own). With
    another ``base_url`` (vLLM, TEI, Ollama, llama.cpp's server, LM Studio, ...) only
    ``api_key`` is sent, and only if given: never OPENAI_API_KEY."""

    model: str = "text-embedding-3-small"
    #: Shorter vectors (text-embedding-3 models and servers that support it).
    dimensions: int | None = attrs.field(default=None, validator=in_range(1, 65536))
    encoding_format: Literal["float", "base64"] = "float"
    #: Texts per request.
    max_batch: int = attrs.field(default=512, validator=in_range(1, MAX_INPUTS))
    organization: str | None = None
    project: str | None = None
    read_timeout: float = attrs.field(default=60.0, validator=in_range(0.001))
    #: More fields of each request's body (``user``...); the texts, model, format and
    #: dimensions are the component's own.
    extra_body: dict[str, Any] = attrs.field(factory=dict)


def _decode(item: dict[str, Any], encoding: str) -> list[float]:
    embedding = item.get("embedding")
    if encoding == "base64" and isinstance(embedding, str):
        values = array.array("f")
        values.frombytes(base64.b64decode(embedding))
        if sys.byteorder != "little":
            values.byteswap()
        return values.tolist()
    if not isinstance(embedding, list):
        raise ProviderProtocolError(
            "the embeddings reply has an item without an embedding list", provider=PROVIDER
        )
    return [float(x) for x in embedding]


class OpenAIEmbedder:
    def __init__(self, attributes: OpenAIEmbedderAttributes) -> None:
        # OPENAI_BASE_URL moves OpenAI's endpoint (a proxy, a gateway), as in the official SDK.
        official_url = (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        base_url = (attributes.base_url or official_url).rstrip("/")
        official = base_url in (official_url, DEFAULT_BASE_URL)
        if official:
            key = resolve_api_key(PROVIDER, attributes.api_key, [API_KEY_VARIABLE])
        else:
            key = attributes.api_key
        headers = {}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        if attributes.organization:
            headers["OpenAI-Organization"] = attributes.organization
        if attributes.project:
            headers["OpenAI-Project"] = attributes.project
        self.attributes = attributes
        self.provider = PROVIDER if official else "openai-compatible"
        self.client = HTTPClient(
            provider=self.provider,
            base_url=base_url,
            headers=headers,
            secrets=[key] if key else [],
            timeouts=Timeouts(read=attributes.read_timeout),
            retry=RetryPolicy(max_attempts=attributes.max_retries + 1),
        )
        self.dimension: int | None = attributes.dimensions or (
            KNOWN_DIMENSIONS.get(attributes.model) if official else None
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.attributes.model!r}, base_url={self.client.base_url!r})"

    async def _request(self, texts: list[str] | list[list[int]]) -> tuple[list[list[float]], int]:
        body: dict[str, Any] = {
            **self.attributes.extra_body,
            "model": self.attributes.model,
            "input": texts,
            "encoding_format": self.attributes.encoding_format,
        }
        if self.attributes.dimensions is not None:
            body["dimensions"] = self.attributes.dimensions
        reply = await self.client.request_json("/embeddings", body)
        data = reply.get("data") if isinstance(reply, dict) else None
        if not isinstance(data, list):
            raise ProviderProtocolError(
                f"{self.provider}: the embeddings reply has no 'data' list", provider=self.provider
            )
        try:
            ordered = sorted(data, key=lambda item: int(item.get("index", 0)))
        except (TypeError, ValueError, AttributeError):
            raise ProviderProtocolError(
                f"{self.provider}: the embeddings reply has malformed items",
                provider=self.provider,
            ) from None
        vectors = [_decode(item, self.attributes.encoding_format) for item in ordered]
        usage = reply.get("usage") or {}
        tokens = (
            usage.get("prompt_tokens", usage.get("total_tokens", 0))
            if isinstance(usage, dict)
            else 0
        )
        return vectors, int(tokens or 0)

    async def embed(self, inputs: EmbedInput) -> dict[str, Any]:
        return await self._embed(inputs.texts)

    async def embed_tokens(self, inputs: EmbedTokensInput) -> dict[str, Any]:
        """Token-id arrays, sent as they are: OpenAI's API takes its tokenizer's ids."""
        return await self._embed(inputs.tokens)

    async def _embed(self, inputs: list[str] | list[list[int]]) -> dict[str, Any]:
        vectors: list[list[float]] = []
        tokens = 0
        size = self.attributes.max_batch
        for start in range(0, len(inputs), size):
            batch = inputs[start : start + size]
            got, used = await self._request(batch)
            check_vectors(got, len(batch), self.dimension, who=f"{self.provider} embeddings")
            vectors.extend(got)
            tokens += used
        self.dimension = len(vectors[0])
        return EmbedOutput(
            vectors=vectors,
            dimension=self.dimension,
            model=self.attributes.model,
            usage=EmbeddingUsage(input_tokens=tokens),
        ).to_dict()

    async def info(self, inputs: InfoInput) -> dict[str, Any]:
        if self.dimension is None:
            # An unknown model on a compatible server: one tiny request tells its dimension.
            await self.embed(EmbedInput(["dimension probe"]))
        assert self.dimension is not None
        return EmbedderInfo(
            model=self.attributes.model,
            dimension=self.dimension,
            max_batch=self.attributes.max_batch,
            max_input_tokens=8191 if self.provider == PROVIDER else None,
            # OpenAI's embeddings are unit length; a compatible server's may not be.
            normalized=self.provider == PROVIDER,
            distance="cosine",
        ).to_dict()

    async def close(self) -> None:
        await self.client.close()


def create(attributes: OpenAIEmbedderAttributes) -> OpenAIEmbedder:
    return OpenAIEmbedder(attributes)
