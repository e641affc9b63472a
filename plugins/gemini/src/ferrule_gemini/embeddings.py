"""The `gemini_embedder` component: Gemini's embeddings API.

Wire (``POST {base_url}/models/{model}:batchEmbedContents``, the key in ``x-goog-api-key``)::

    {"requests": [{"model": "models/gemini-embedding-001",
                   "content": {"parts": [{"text": "..."}]},
                   "taskType": "RETRIEVAL_DOCUMENT",      # RETRIEVAL_QUERY for queries
                   "outputDimensionality": 768}, ...]}     # only when asked for (dimensions)
    -> {"embeddings": [{"values": [0.01, ...]}, ...]}      # in request order

``batchEmbedContents`` takes up to 100 requests; larger inputs are split. (``embedContent``
embeds one text per call: the batch endpoint does that too, in fewer round trips.) Gemini
embeds documents and queries differently, so ``input_type`` becomes the task type. The
API reports no token usage for embeddings: usage is 0. Errors, retries (honouring a
429's ``retryDelay``) and the key's handling are those of `gemini_language_model`.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from ferrule_kernel import in_range
from ferrule_kit.embeddings.embedding import (
    EmbedderInfo,
    EmbeddingUsage,
    EmbedInput,
    EmbedOutput,
    InfoInput,
    check_vectors,
)
from ferrule_kit.errors import ProviderProtocolError
from ferrule_kit.models.providerspec import ProviderAttributes
from ferrule_kit.network.http import HTTPClient, RetryPolicy, Timeouts, resolve_api_key

from . import wire
from .plugin import API_KEY_VARIABLES

TASK_TYPES = {"document": "RETRIEVAL_DOCUMENT", "query": "RETRIEVAL_QUERY"}
#: Dimensions when ``dimensions`` is not asked for.
KNOWN_DIMENSIONS = {"gemini-embedding-001": 3072, "text-embedding-004": 768, "embedding-001": 768}
MAX_REQUESTS = 100


@attrs.frozen
class GeminiEmbedderAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and the embeddings API's own). The key
    comes from here, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``."""

    model: str = "gemini-embedding-001"
    #: Shorter vectors (gemini-embedding-001: 768, 1536 or 3072 recommended), sent as
    #: Gemini's ``outputDimensionality``; named as OpenAI's embedder and ``ferrule serve``'s
    #: ``/v1/embeddings`` name it. Gemini normalises only full-length vectors; this
    #: component returns every one unit length.
    dimensions: int | None = attrs.field(default=None, validator=in_range(1, 65536))
    max_batch: int = attrs.field(default=MAX_REQUESTS, validator=in_range(1, MAX_REQUESTS))
    read_timeout: float = attrs.field(default=60.0, validator=in_range(0.001))
    #: The task every text is embedded for (``"SEMANTIC_SIMILARITY"``...); by default
    #: documents are ``RETRIEVAL_DOCUMENT`` and queries ``RETRIEVAL_QUERY``.
    task_type: str | None = None
    #: The title sent with each document embedded (Gemini reads it for documents only).
    title: str | None = None
    #: More fields of each embedding request; the text, model, task type and
    #: dimensions are the component's own.
    extra_body: dict[str, Any] = attrs.field(factory=dict)


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector


class GeminiEmbedder:
    def __init__(self, attributes: GeminiEmbedderAttributes) -> None:
        key: str = resolve_api_key(wire.PROVIDER, attributes.api_key, API_KEY_VARIABLES)  # type: ignore[assignment]
        self.attributes = attributes
        self.model = wire.model_path(attributes.model)
        self.client = HTTPClient(
            provider=wire.PROVIDER,
            base_url=attributes.base_url or wire.default_base_url(),
            headers=wire.request_headers(key),
            secrets=[key],
            timeouts=Timeouts(read=attributes.read_timeout),
            retry=RetryPolicy(max_attempts=attributes.max_retries + 1),
            parse_error=wire.parse_error,
        )
        self.dimension: int | None = attributes.dimensions or KNOWN_DIMENSIONS.get(
            self.model.removeprefix("models/")
        )

    def __repr__(self) -> str:
        return f"GeminiEmbedder(model={self.model!r}, base_url={self.client.base_url!r})"

    async def _request(self, texts: list[str], task_type: str) -> list[list[float]]:
        requests = []
        for text in texts:
            request: dict[str, Any] = {
                **self.attributes.extra_body,
                "model": self.model,
                "content": {"parts": [{"text": text}]},
                "taskType": task_type,
            }
            if self.attributes.title is not None and task_type == "RETRIEVAL_DOCUMENT":
                request["title"] = self.attributes.title
            if self.attributes.dimensions is not None:
                request["outputDimensionality"] = self.attributes.dimensions
            requests.append(request)
        reply = await self.client.request_json(
            f"/{self.model}:batchEmbedContents", {"requests": requests}
        )
        embeddings = reply.get("embeddings") if isinstance(reply, dict) else None
        if not isinstance(embeddings, list) or not all(
            isinstance(e, dict) and isinstance(e.get("values"), list) for e in embeddings
        ):
            raise ProviderProtocolError(
                "gemini: the batchEmbedContents reply has no 'embeddings' list of values",
                provider=wire.PROVIDER,
            )
        return [[float(x) for x in e["values"]] for e in embeddings]

    async def embed(self, inputs: EmbedInput) -> dict[str, Any]:
        task_type = self.attributes.task_type or TASK_TYPES[inputs.input_type]
        vectors: list[list[float]] = []
        size = self.attributes.max_batch
        for start in range(0, len(inputs.texts), size):
            batch = inputs.texts[start : start + size]
            got = await self._request(batch, task_type)
            check_vectors(got, len(batch), self.dimension, who="gemini embeddings")
            vectors.extend(got)
        # Gemini returns unit vectors only at a model's full size: make every one unit
        # length, so ``normalized`` holds whatever the size.
        vectors = [_unit(v) for v in vectors]
        self.dimension = len(vectors[0])
        return EmbedOutput(
            vectors=vectors,
            dimension=self.dimension,
            model=self.model.removeprefix("models/"),
            usage=EmbeddingUsage(input_tokens=0),
        ).to_dict()

    async def info(self, inputs: InfoInput) -> dict[str, Any]:
        if self.dimension is None:
            # A model this plugin does not know: one small request tells its dimension.
            await self.embed(EmbedInput(["dimension probe"]))
        assert self.dimension is not None
        return EmbedderInfo(
            model=self.model.removeprefix("models/"),
            dimension=self.dimension,
            max_batch=self.attributes.max_batch,
            max_input_tokens=2048,
            normalized=True,
            distance="cosine",
        ).to_dict()

    async def close(self) -> None:
        await self.client.close()


def create(attributes: GeminiEmbedderAttributes) -> GeminiEmbedder:
    return GeminiEmbedder(attributes)
