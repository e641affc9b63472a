"""Embedding texts outside `Knowledge`: what Agno's ``Document.embed``, a vector database's
own ``search`` / ``insert`` and `SemanticChunking` do with an embedder description
(`ferrule.knowledge.embedder`: `MiniLMEmbedder`, the offline default, `OpenAIEmbedder`...).

The embedder component is defined once per description on the process's shared runtime
(`ferrule.shared_runtime`) and called there: one implementation, the one `Knowledge` calls.
"""

from __future__ import annotations

import uuid
from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = ["aembed", "aembedder_info", "embed", "embedder_info"]

#: The component defined for each description, by (runtime, description).
_DEFINED: dict[tuple[int, Any], str] = {}


def _runtime() -> Any:
    from ..shared_runtime import default_runtime

    return default_runtime()


def _description(embedder: Any) -> Any:
    if embedder is None:
        from .embedder import MiniLMEmbedder

        return MiniLMEmbedder()
    if isinstance(embedder, str):
        return embedder
    if getattr(embedder, "component_type", None):
        return embedder
    if hasattr(embedder, "attributes"):
        embedder.attributes(None)  # an Embedder naming no component says which ones do
    raise InvalidInputError(
        "embedder must be an embedder description (MiniLMEmbedder, OpenAIEmbedder, "
        f"GeminiEmbedder) or an embedder component's name, got {embedder!r}",
        field="embedder",
    )


def _known(runtime: Any, embedder: Any) -> tuple[Any, str | None]:
    description = _description(embedder)
    if isinstance(description, str):
        return description, description
    return description, _DEFINED.get((id(runtime), description))


def _component(runtime: Any, embedder: Any) -> str:
    description, name = _known(runtime, embedder)
    if name is None:
        name = f"embedder-{uuid.uuid4().hex[:12]}"
        runtime.define(description.component_type, name, description.attributes(runtime))
        name = _DEFINED.setdefault((id(runtime), description), name)
    return name


async def _acomponent(runtime: Any, embedder: Any) -> str:
    description, name = _known(runtime, embedder)
    if name is None:
        name = f"embedder-{uuid.uuid4().hex[:12]}"
        await runtime.adefine(description.component_type, name, description.attributes(runtime))
        name = _DEFINED.setdefault((id(runtime), description), name)
    return name


def _result(out: dict[str, Any]) -> tuple[list[list[float]], dict[str, Any]]:
    return out["vectors"], dict(out.get("usage") or {})


def embed(
    embedder: Any, texts: list[str], input_type: str = "document"
) -> tuple[list[list[float]], dict[str, Any]]:
    """The vectors of ``texts`` and the call's usage (``{"input_tokens": n}``)."""
    if not texts:
        return [], {}
    runtime = _runtime()
    name = _component(runtime, embedder)
    return _result(runtime.call_method(name, "embed", {"texts": texts, "input_type": input_type}))


async def aembed(
    embedder: Any, texts: list[str], input_type: str = "document"
) -> tuple[list[list[float]], dict[str, Any]]:
    """`embed`, awaited."""
    if not texts:
        return [], {}
    runtime = _runtime()
    name = await _acomponent(runtime, embedder)
    return _result(
        await runtime.acall_method(name, "embed", {"texts": texts, "input_type": input_type})
    )


def embedder_info(embedder: Any) -> dict[str, Any]:
    """The embedder's ``info``: its ``dimension``, ``distance``, ``model``..."""
    runtime = _runtime()
    info: dict[str, Any] = runtime.call_method(_component(runtime, embedder), "info", {})
    return info


async def aembedder_info(embedder: Any) -> dict[str, Any]:
    """`embedder_info`, awaited."""
    runtime = _runtime()
    name = await _acomponent(runtime, embedder)
    info: dict[str, Any] = await runtime.acall_method(name, "info", {})
    return info
