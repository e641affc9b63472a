"""Agno's ``agno.knowledge.embedder.base``: `Embedder`, the base of the embedders.

An embedder here describes an embedder component (its ``component_type`` and the
``attributes`` to define it with): `Knowledge` and the vector databases define it on their
runtime and embed through it. Its own methods (`get_embedding`, `get_embedding_and_usage`
and their async twins) embed one text the same way, on the process's shared runtime
(`ferrule.knowledge.embeddings`), as a query: what Agno's embedders are asked most.

``dimensions`` is the size of the vectors, ``batch_size`` the texts an API embedder sends
per request when ``enable_batch`` is on (off, each text is a request of its own, as in
Agno). A subclass of your own that overrides `get_embedding` embeds when called; it names
no component, so `Knowledge` refuses it, saying which embedders it takes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["BASE_FIELDS", "Embedder", "NoClient", "embed_batch", "fields_first", "whole_number"]


def fields_first(*names: str) -> Callable[[type, list[attrs.Attribute[Any]]], list[Any]]:
    """An attrs field transformer putting ``names`` first, in that order (a subclass that
    changes an inherited field's default keeps it where Agno's dataclasses keep it)."""

    first = list(dict.fromkeys(names))

    def order(cls: type, fields: list[attrs.Attribute[Any]]) -> list[Any]:
        head = [f for name in first for f in fields if f.name == name]
        return head + [f for f in fields if f.name not in first]

    return order


def whole_number(low: int) -> Callable[[Any, attrs.Attribute[Any], Any], None]:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InvalidInputError(f"must be an integer of at least {low}", field=attribute.name)

    return check


#: The fields every embedder has, first in its signature (Agno's order).
BASE_FIELDS = ("dimensions", "enable_batch", "batch_size")


@attrs.frozen(field_transformer=fields_first(*BASE_FIELDS))
class Embedder:
    """An embedder (see the module docstring)."""

    #: The embedder component type described ("" for one that names none).
    component_type: ClassVar[str] = ""

    dimensions: int | None = attrs.field(default=1536, validator=whole_number(1))
    enable_batch: bool = attrs.field(default=False, validator=attrs.validators.instance_of(bool))
    batch_size: int = attrs.field(default=100, validator=whole_number(1))

    def attributes(self, runtime: Any) -> dict[str, Any]:
        """The component's ``define`` attributes."""
        raise InvalidInputError(
            f"{type(self).__name__} names no embedder component: ferrule embeds through "
            "MiniLMEmbedder, SentenceTransformerEmbedder, OpenAIEmbedder (also any "
            "OpenAI-compatible server, by base_url) or GeminiEmbedder",
            field="embedder",
        )

    def request_size(self) -> int:
        """Texts per request: ``batch_size`` when ``enable_batch``, else one."""
        return self.batch_size if self.enable_batch else 1

    def usage_of(self, usage: dict[str, Any]) -> dict[str, Any] | None:
        """What `get_embedding_and_usage` says of a call's usage (the component's
        ``{"input_tokens": n}``)."""
        return dict(usage) or None

    def get_embedding(self, text: str) -> list[float]:
        """The vector of ``text``."""
        return self.get_embedding_and_usage(text)[0]

    def get_embedding_and_usage(self, text: str) -> tuple[list[float], dict[str, Any] | None]:
        """The vector of ``text``, and what embedding it used."""
        from ..embeddings import embed

        (vector,), usage = embed(self, [_text(text)], "query")
        return list(vector), self.usage_of(usage)

    async def async_get_embedding(self, text: str) -> list[float]:
        """`get_embedding`, awaited."""
        return (await self.async_get_embedding_and_usage(text))[0]

    async def async_get_embedding_and_usage(
        self, text: str
    ) -> tuple[list[float], dict[str, Any] | None]:
        """`get_embedding_and_usage`, awaited."""
        from ..embeddings import aembed

        (vector,), usage = await aembed(self, [_text(text)], "query")
        return list(vector), self.usage_of(usage)


class NoClient:
    """An API's embedder that ferrule's provider plugin speaks for: Agno's SDK clients
    (``client`` / ``aclient``) are refused, saying what to give instead (``no_client``)."""

    __slots__ = ()
    no_client: ClassVar[str]

    @property
    def client(self) -> Any:
        raise InvalidInputError(self.no_client, field="client")

    @property
    def aclient(self) -> Any:
        raise InvalidInputError(self.no_client, field="aclient")


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"expected a string, got {type(text).__name__}", field="text")
    return text


async def embed_batch(
    embedder: Embedder, texts: list[str]
) -> tuple[list[list[float]], list[dict[str, Any] | None]]:
    """``texts`` embedded as documents in calls of ``embedder.request_size()``, with each
    call's usage repeated for its texts (as Agno's batch methods report it)."""
    from ..embeddings import aembed

    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise InvalidInputError("expected a list of strings", field="texts")
    vectors: list[list[float]] = []
    usages: list[dict[str, Any] | None] = []
    size = embedder.request_size()
    for start in range(0, len(texts), size):
        batch = texts[start : start + size]
        got, usage = await aembed(embedder, batch, "document")
        vectors += [list(v) for v in got]
        usages += [embedder.usage_of(usage)] * len(batch)
    return vectors, usages
