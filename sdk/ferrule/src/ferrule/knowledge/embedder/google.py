"""Agno's ``agno.knowledge.embedder.google``: `GeminiEmbedder`, Google's Gemini embeddings
API through ferrule-gemini's ``gemini_embedder`` (the endpoint moves with ``base_url`` or
``$GOOGLE_GEMINI_BASE_URL``). The key comes from here, ``GEMINI_API_KEY`` or
``GOOGLE_API_KEY``.

As Agno's: ``dimensions`` (1,536 by default) is Gemini's ``outputDimensionality``;
``task_type`` is the task a text is embedded for (``RETRIEVAL_QUERY`` by default, what a
search's query and `get_embedding` use; the texts a knowledge base stores are embedded as
``RETRIEVAL_DOCUMENT``, as Google advises, unless another ``task_type`` is given, which
then holds for every text); ``title`` goes with the documents embedded (Gemini reads a
title for documents only); ``request_params`` are more fields of each embedding request.
With ``enable_batch``, ``batch_size`` texts go per request, else one. ferrule reaches the
Gemini API with a key and speaks it itself: Vertex AI (``vertexai``, ``project_id``,
``location``), an SDK client (``gemini_client``, ``client_params``) and the ``client`` /
``aclient`` properties are refused, naming what to give instead.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError

from .base import BASE_FIELDS, Embedder, NoClient, embed_batch, fields_first, whole_number

__all__ = ["GeminiEmbedder"]

NO_SDK = (
    "ferrule's provider plugin speaks the API over HTTP itself, with no SDK client: give "
    "api_key=, base_url= or request_params="
)
NO_VERTEX = "ferrule-gemini reaches the Gemini API with a key; Vertex AI is not supported"
#: The task type of a search's queries: Agno's default for every text.
QUERY_TASK = "RETRIEVAL_QUERY"


def _refused(message: str) -> Any:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in (None, False):
            raise InvalidInputError(message, field=attribute.name)

    return check


@attrs.frozen(field_transformer=fields_first(*BASE_FIELDS))
class GeminiEmbedder(NoClient, Embedder):
    """Google's Gemini embeddings API (see the module docstring)."""

    no_client: ClassVar[str] = NO_SDK
    component_type: ClassVar[str] = "gemini_embedder"

    id: str = "gemini-embedding-001"
    task_type: str = QUERY_TASK
    title: str | None = None
    dimensions: int | None = attrs.field(default=1536, validator=whole_number(1))
    api_key: str | None = attrs.field(default=None, repr=False)
    request_params: dict[str, Any] | None = attrs.field(default=None, hash=False)
    client_params: dict[str, Any] | None = attrs.field(default=None, validator=_refused(NO_SDK))
    gemini_client: Any = attrs.field(default=None, validator=_refused(NO_SDK))
    vertexai: bool = attrs.field(default=False, validator=_refused(NO_VERTEX))
    project_id: str | None = attrs.field(default=None, validator=_refused(NO_VERTEX))
    location: str | None = attrs.field(default=None, validator=_refused(NO_VERTEX))
    #: Where the API is (ferrule's; the endpoint Google's SDK reaches by default).
    base_url: str | None = attrs.field(default=None, kw_only=True)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "model": self.id.removeprefix("models/"),
            "max_batch": self.request_size(),
        }
        if self.task_type != QUERY_TASK:
            attributes["task_type"] = self.task_type
        for key, value in (
            ("dimensions", self.dimensions),
            ("title", self.title),
            ("api_key", self.api_key),
            ("base_url", self.base_url),
            ("extra_body", self.request_params or None),
        ):
            if value is not None:
                attributes[key] = value
        return attributes

    def usage_of(self, usage: dict[str, Any]) -> dict[str, Any] | None:
        return None  # the Gemini API reports no usage of embeddings (Vertex AI bills chars)

    async def async_get_embeddings_batch_and_usage(
        self, texts: list[str]
    ) -> tuple[list[list[float]], list[dict[str, Any] | None]]:
        """The vectors of ``texts`` (requests of `request_size` texts), and each one's
        usage (None: the Gemini API reports none)."""
        return await embed_batch(self, texts)
