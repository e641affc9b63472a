"""The embedder contract: a component type that turns texts into vectors, local or remote.

An embedder is a component type (describe it with `embedder_type`) whose instances have
two methods::

    embed({"texts": ["first passage", "second"], "input_type": "document"})
      -> {"vectors": [[0.01, ...], [...]], "dimension": 384,
          "model": "all-MiniLM-L6-v2", "usage": {"input_tokens": 9}}
    info({}) -> {"model": "all-MiniLM-L6-v2", "dimension": 384, "max_batch": 256,
                 "max_input_tokens": 256, "normalized": true, "distance": "cosine"}

- ``vectors`` has one vector per text, in order, each of ``dimension`` finite floats.
- ``input_type`` says what the texts are for: ``"document"`` (passages to store) or
  ``"query"`` (a search). Models trained with both roles (Gemini's task types, e5's
  prefixes) embed them differently; the others ignore it. Embed stored passages as
  documents and searches as queries, always.
- ``usage.input_tokens`` counts the tokens the model read (0 when the provider does not
  say).
- ``info`` answers without embedding anything, so a vector store can be made ready (its
  collection's dimension) before the first text arrives. ``distance`` is the metric the
  model was trained for; ``normalized`` is true when every vector has unit length.
- An embedder splits a large ``texts`` into the batches its model or API takes
  (``max_batch``): callers send as many texts as they have.

Failures are typed (`ferrule_kernel.FerruleError`): bad input is `InvalidInputError`
naming the field (``$.texts[2]``: must not be empty); an API embedder's provider failures
are the `ferrule_kit.errors` provider errors (``ProviderConnectionError`` when it is
down, naming the provider); a local embedder that cannot run raises
`EmbedderUnavailableError` naming itself. `ferrule_kit.testing.EmbedderConformance`
checks a plugin against all of this.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError

from .embedspec import (
    EMBED_INPUT,
    EMBED_TOKENS_INPUT,
    INFO_INPUT,
    EmbedderUnavailableError,
    embedder_type,
)
from .vectorspec import Distance

__all__ = [
    "EMBED_INPUT",
    "EMBED_TOKENS_INPUT",
    "INFO_INPUT",
    "EmbedInput",
    "EmbedOutput",
    "EmbedTokensInput",
    "EmbedderInfo",
    "EmbedderUnavailableError",
    "EmbeddingUsage",
    "InfoInput",
    "InputType",
    "check_vectors",
    "embedder_type",
]

InputType = Literal["document", "query"]


def _texts(_instance: Any, _attribute: Any, texts: list[str]) -> None:
    if not texts:
        raise InvalidInputError("must not be empty", field="texts")
    for index, text in enumerate(texts):
        if not text.strip():
            # Providers refuse empty inputs, and an empty passage carries nothing to find.
            raise InvalidInputError("must not be empty or whitespace", field=f"texts[{index}]")


@attrs.frozen
class EmbedInput:
    """What ``embed`` takes: the texts, and whether they are stored passages or a search."""

    texts: list[str] = attrs.field(validator=_texts)
    input_type: InputType = "document"


def _token_arrays(_instance: Any, _attribute: Any, tokens: list[list[int]]) -> None:
    if not tokens:
        raise InvalidInputError("must not be empty", field="tokens")
    for index, ids in enumerate(tokens):
        if not ids:
            raise InvalidInputError("must not be empty", field=f"tokens[{index}]")


@attrs.frozen
class EmbedTokensInput:
    """What ``embed_tokens`` takes (an embedder declared with ``tokens=True``): arrays of
    token ids of the model's own tokenizer, one vector each."""

    tokens: list[list[int]] = attrs.field(validator=_token_arrays)


@attrs.frozen
class InfoInput:
    """``info`` takes nothing."""


@attrs.frozen
class EmbeddingUsage:
    input_tokens: int = 0


@attrs.frozen
class EmbedOutput:
    vectors: list[list[float]]
    dimension: int
    model: str
    usage: EmbeddingUsage = EmbeddingUsage()

    def to_dict(self) -> dict[str, Any]:
        return {
            "vectors": self.vectors,
            "dimension": self.dimension,
            "model": self.model,
            "usage": {"input_tokens": self.usage.input_tokens},
        }


@attrs.frozen
class EmbedderInfo:
    model: str
    dimension: int
    #: Texts per request to the model (the component batches larger inputs itself).
    max_batch: int
    #: Tokens of one text the model reads; longer texts are truncated (None: unknown).
    max_input_tokens: int | None = None
    normalized: bool = False
    distance: Distance = "cosine"

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def check_vectors(vectors: Any, count: int, dimension: int | None, *, who: str) -> int:
    """Check what a model returned before it leaves the component: ``count`` vectors of
    one dimension (``dimension`` if given), finite numbers. Returns the dimension.

    A model or provider that breaks this is reported (`EmbedderUnavailableError` naming
    ``who``) rather than passed on to a vector store, where it would do harm later.
    """
    if not isinstance(vectors, list) or len(vectors) != count:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise EmbedderUnavailableError(
            f"{who} returned {got} vectors for {count} texts", embedder=who, reason="count"
        )
    dims = {len(v) if isinstance(v, list) else -1 for v in vectors}
    expected = dimension if dimension is not None else next(iter(dims), 0)
    if dims != {expected} or expected <= 0:
        raise EmbedderUnavailableError(
            f"{who} returned vectors of dimensions {sorted(dims)}, expected {expected}",
            embedder=who,
            reason="dimension",
        )
    for vector in vectors:
        if not all(map(math.isfinite, vector)):
            raise EmbedderUnavailableError(
                f"{who} returned a vector with a non-finite value", embedder=who, reason="nan"
            )
    return expected
