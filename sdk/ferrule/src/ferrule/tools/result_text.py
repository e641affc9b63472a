"""A tool's result as the text the model reads."""

from __future__ import annotations

import json
from typing import Any

import attrs
from ferrule_kit.content.messages import converter

from .errors import ToolError

__all__ = ["result_text"]


def result_text(result: Any) -> str:
    """A handler's result as the text the model reads: strings as they are, anything else
    as JSON. Raises `ToolError` when it cannot be serialised."""
    if isinstance(result, str):
        return result
    if attrs.has(type(result)):
        result = converter.unstructure(result)
    elif hasattr(result, "model_dump"):  # a pydantic model
        result = result.model_dump(mode="json")
    try:
        return json.dumps(result, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ToolError(
            f"the tool returned {type(result).__name__}, which is not JSON-serialisable: {exc}"
        ) from None
