"""Agno's ``agno.knowledge.embedder.openai``: `OpenAIEmbedder`, OpenAI's embeddings API or
any OpenAI-compatible server (``base_url``: vLLM, TEI, Ollama, llama.cpp's server...),
through ferrule-openai's ``openai_embedder`` (the endpoint also moves with
``$OPENAI_BASE_URL``). The key comes from here, ``OPENAI_API_KEY`` or ``ferrule keys set
openai``.

As Agno's: ``dimensions`` left out is the model's (3,072 for text-embedding-3-large, else
1,536) and is sent to the text-embedding-3 models, which can shorten their vectors (and
to a server at ``base_url`` when given); ``encoding_format`` is how the vectors travel
(``"base64"`` is decoded: a vector is floats either way); ``user``, ``organization`` and
``request_params`` (more fields of the request body) go with each request; with
``enable_batch`` a request carries ``batch_size`` texts, else one. `response` is the API's
answer to one text (``.data[0].embedding``, ``.usage``). ferrule speaks the API itself,
with no OpenAI SDK: ``openai_client``, ``async_client``, ``client_params`` and the
``client`` / ``aclient`` properties are refused, naming what to give instead.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import attrs
from ferrule_kernel import InvalidInputError

from .base import BASE_FIELDS, Embedder, NoClient, embed_batch, fields_first, whole_number

__all__ = ["EmbeddingData", "EmbeddingResponse", "EmbeddingUsage", "OpenAIEmbedder"]

NO_SDK = (
    "ferrule's provider plugin speaks the API over HTTP itself, with no SDK client: give "
    "api_key=, base_url=, organization= or request_params="
)


def refuse_client(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        raise InvalidInputError(NO_SDK, field=attribute.name)


@attrs.frozen
class EmbeddingUsage:
    """What a request used, as OpenAI counts it."""

    prompt_tokens: int
    total_tokens: int

    def model_dump(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class EmbeddingData:
    embedding: list[float]
    index: int = 0
    object: str = "embedding"


@attrs.frozen
class EmbeddingResponse:
    """The embeddings API's answer: ``data`` (one `EmbeddingData` per text), ``model``,
    ``usage``."""

    data: list[EmbeddingData]
    model: str
    usage: EmbeddingUsage | None
    object: str = "list"


def openai_usage(usage: dict[str, Any]) -> dict[str, Any] | None:
    """The component's ``{"input_tokens": n}`` as OpenAI's usage (``prompt_tokens``,
    ``total_tokens``)."""
    if not usage:
        return None
    tokens = int(usage.get("input_tokens", 0))
    return {"prompt_tokens": tokens, "total_tokens": tokens}


@attrs.frozen(field_transformer=fields_first(*BASE_FIELDS))
class OpenAIEmbedder(NoClient, Embedder):
    """OpenAI's embeddings API (see the module docstring)."""

    no_client: ClassVar[str] = NO_SDK
    component_type: ClassVar[str] = "openai_embedder"

    id: str = "text-embedding-3-small"
    dimensions: int | None = attrs.field(default=None, validator=whole_number(1))
    encoding_format: Literal["float", "base64"] = "float"
    user: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    organization: str | None = None
    base_url: str | None = None
    request_params: dict[str, Any] | None = attrs.field(default=None, hash=False)
    client_params: dict[str, Any] | None = attrs.field(default=None, validator=refuse_client)
    openai_client: Any = attrs.field(default=None, validator=refuse_client)
    async_client: Any = attrs.field(default=None, validator=refuse_client)
    #: Whether ``dimensions`` was given (else the model's, sent only where Agno sends it).
    dimensions_given: bool = attrs.field(init=False, default=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.encoding_format not in ("float", "base64"):
            raise InvalidInputError(
                f"expected 'float' or 'base64', got {self.encoding_format!r}",
                field="encoding_format",
            )
        object.__setattr__(self, "dimensions_given", self.dimensions is not None)
        if self.dimensions is None:
            size = 3072 if self.id == "text-embedding-3-large" else 1536
            object.__setattr__(self, "dimensions", size)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {"model": self.id, "max_batch": self.request_size()}
        # sent as Agno sends it to the models that shorten their vectors; to another
        # server only when given (its model's own size needs no asking)
        if self.id.startswith("text-embedding-3") or (self.base_url and self.dimensions_given):
            attributes["dimensions"] = self.dimensions
        extra = dict(self.request_params or {})
        if self.user is not None:
            extra["user"] = self.user
        for key, value in (
            ("api_key", self.api_key),
            ("base_url", self.base_url),
            ("organization", self.organization),
            ("extra_body", extra or None),
        ):
            if value is not None:
                attributes[key] = value
        if self.encoding_format != "float":
            attributes["encoding_format"] = self.encoding_format
        return attributes

    def usage_of(self, usage: dict[str, Any]) -> dict[str, Any] | None:
        return openai_usage(usage)

    def response(self, text: str) -> EmbeddingResponse:
        """The API's answer to one ``text``."""
        vector, usage = self.get_embedding_and_usage(text)
        counted = EmbeddingUsage(**usage) if usage else None
        return EmbeddingResponse([EmbeddingData(vector)], self.id, counted)

    async def async_get_embeddings_batch_and_usage(
        self, texts: list[str]
    ) -> tuple[list[list[float]], list[dict[str, Any] | None]]:
        """The vectors of ``texts`` (requests of `request_size` texts), and each text's
        request's usage."""
        return await embed_batch(self, texts)
