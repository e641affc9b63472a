"""``POST /v1/embeddings``: OpenAI's embeddings API, served by the embedder components of
`ferrule_kit.embeddings.embedding` (``minilm_embedder`` offline, ``openai_embedder``,
``gemini_embedder``, ...). ``model`` is routed by `ferrule.models.route_embedder` (the
plugins' ``ferrule_resolve_embedder`` hooks); one component per model id, defined on
first use (a `ModelCatalog` of embedders), with the checks and errors of the other
OpenAI routes (`OpenAIRoutes.handler`).

``input`` is a string or an array of strings, embedded as documents (the embedder
contract's ``input_type``; OpenAI's API has no query/document distinction), or token ids
(an array of them, or an array of such arrays: what langchain's ``OpenAIEmbeddings`` sends
by default), passed to embedders that take their tokenizer's ids (``embed_tokens``:
OpenAI's) and refused, naming the model, by the others. ``dimensions`` is the model's own
(accepted), or asked of an embedder that takes a ``dimensions`` attribute (OpenAI's
text-embedding-3 models, Gemini's: one component per size), else refused naming the model.
``encoding_format`` ``"base64"`` sends each vector as little-endian float32, base64
encoded, as OpenAI does.
"""

from __future__ import annotations

import array
import asyncio
import base64
import sys
from typing import Any

import attrs
from aiohttp import web

from ..models import route_embedder
from .gate import dumps
from .openai_api import ModelCatalog, OpenAIRoutes
from .openai_wire import OpenAIError

_ACCEPTED = {"model", "input", "encoding_format", "user", "dimensions"}

#: Embedding model ids /v1/models lists whenever an installed plugin serves them.
WELL_KNOWN_EMBEDDERS = ("all-MiniLM-L6-v2",)


@attrs.frozen
class EmbeddingsRequest:
    """An embeddings request translated to the embedder contract's ``embed`` input (or
    ``embed_tokens``'s, for token ids)."""

    model: str
    inputs: dict[str, Any]
    base64: bool
    #: The vectors' size asked for (None: the model's own).
    dimensions: int | None = None

    @property
    def tokens(self) -> bool:
        return "tokens" in self.inputs


def _is_tokens(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(t, int) and not isinstance(t, bool) for t in value
    )


def embeddings_request_from_openai(body: Any) -> EmbeddingsRequest:
    """Translate an embeddings request body; what ferrule cannot honour is refused
    (`OpenAIError`) rather than dropped."""
    if not isinstance(body, dict):
        raise OpenAIError(400, "the request body must be a JSON object")
    for key in body:
        if key not in _ACCEPTED:
            raise OpenAIError(400, f"Unrecognized request argument supplied: {key}", param=key)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise OpenAIError(400, "model: a model id (string) is required", param="model")
    dimensions = body.get("dimensions")
    if dimensions is not None and (
        not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1
    ):
        raise OpenAIError(400, "dimensions: expected a positive integer", param="dimensions")
    encoding = body.get("encoding_format") or "float"
    if encoding not in ("float", "base64"):
        raise OpenAIError(
            400, "encoding_format: expected 'float' or 'base64'", param="encoding_format"
        )
    given = body.get("input")
    inputs: dict[str, Any]
    if isinstance(given, str):
        inputs = {"texts": [given], "input_type": "document"}
    elif isinstance(given, list) and given and _is_tokens(given):
        inputs = {"tokens": [given]}
    elif isinstance(given, list) and given and all(_is_tokens(t) for t in given):
        inputs = {"tokens": given}
    elif isinstance(given, list) and all(isinstance(t, str) for t in given):
        inputs = {"texts": given, "input_type": "document"}
    else:
        raise OpenAIError(
            400,
            "input: expected a string, an array of strings, or token ids (an array of "
            "integers, or an array of such arrays)",
            param="input",
        )
    return EmbeddingsRequest(model, inputs, encoding == "base64", dimensions)


def _base64(vector: list[float]) -> str:
    values = array.array("f", vector)
    if sys.byteorder != "little":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def embeddings_reply(request: EmbeddingsRequest, output: dict[str, Any]) -> dict[str, Any]:
    """The embedder's ``embed`` output as OpenAI's ``list`` of embeddings."""
    tokens = output.get("usage", {}).get("input_tokens", 0)
    return {
        "object": "list",
        "data": [
            {
                "object": "embedding",
                "index": index,
                "embedding": _base64(vector) if request.base64 else vector,
            }
            for index, vector in enumerate(output["vectors"])
        ],
        "model": request.model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


class EmbeddingsRoutes:
    """The embeddings route of one server, beside its other OpenAI routes."""

    def __init__(self, openai: OpenAIRoutes) -> None:
        self.openai = openai
        self.catalog = ModelCatalog(
            openai.kernel,
            openai.gate.redact,
            route=route_embedder,
            kind="embed",
            well_known=WELL_KNOWN_EMBEDDERS,
        )
        openai.catalogs.append(self.catalog)  # /v1/models lists them too

    def add_to(self, router: web.UrlDispatcher, prefix: str) -> None:
        self.openai.add_route(router, "POST", f"{prefix}/v1/embeddings", self.embeddings)

    async def embeddings(self, request: web.Request) -> web.Response:
        body = embeddings_request_from_openai(await self.openai.gate.read_json(request))
        if body.tokens:
            method, renames = "embed_tokens", {"tokens": "input"}
        else:
            method, renames = "embed", {"texts": "input"}
        if body.tokens and method not in await asyncio.to_thread(self.catalog.methods, body.model):
            raise OpenAIError(
                400,
                f"input: token ids are ids of a model's own tokenizer, and the model "
                f"{body.model!r} takes text: send strings (langchain's OpenAIEmbeddings: "
                "check_embedding_ctx_length=False)",
                param="input",
            )
        variant = await self._variant(body)
        prepared = await self.catalog.prepare(
            body.model, method, body.inputs, renames, variant=variant
        )
        output = await prepared.run()
        return web.Response(
            body=dumps(embeddings_reply(body, output)), content_type="application/json"
        )

    async def _variant(self, body: EmbeddingsRequest) -> dict[str, Any] | None:
        """The embedder's attributes for ``dimensions``: none when the model's own size
        is asked for; else the ``dimensions`` attribute, which the component type takes
        (OpenAI's) or refuses (an `OpenAIError` naming the model)."""
        if body.dimensions is None:
            return None
        info = await (await self.catalog.prepare(body.model, "info", {}, {})).run()
        if info["dimension"] == body.dimensions:
            return None
        variant = {"dimensions": body.dimensions}
        try:
            await self.catalog.component(body.model, variant)
        except OpenAIError as exc:
            if exc.param != "dimensions":
                raise
            raise OpenAIError(
                400,
                f"dimensions: the model {body.model!r} gives vectors of {info['dimension']} "
                f"dimensions and cannot give {body.dimensions} ({exc.message})",
                param="dimensions",
            ) from None
        return variant
