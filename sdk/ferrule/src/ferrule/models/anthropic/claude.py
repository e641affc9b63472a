"""Anthropic's Claude under Agno's name (``from ferrule.models.anthropic.claude import
Claude``).

`Claude` is an `APIModel` of the provider ``anthropic`` (ferrule-anthropic, the Messages
API). The key comes from ``api_key``, ``$ANTHROPIC_API_KEY`` or ``ferrule keys set
anthropic``; the endpoint from ``base_url``, else ``$ANTHROPIC_BASE_URL`` (as in
Anthropic's SDK), else Anthropic's.
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .. import APIModel
from ..settings import ReasoningEffort, Sampling, client_attributes

__all__ = ["Claude"]


def _thinking_on(thinking: dict[str, Any] | None) -> bool:
    if thinking is None:
        return False
    kind = thinking.get("type")
    if kind not in ("enabled", "disabled", "adaptive"):
        raise InvalidInputError(
            f"type must be 'enabled', 'adaptive' or 'disabled'; got {kind!r}", field="thinking"
        )
    return kind != "disabled"


@attrs.frozen(init=False)
class Claude(APIModel):
    """``Claude(id="claude-sonnet-4-20250514", max_tokens=1024, temperature=0.3)``.

    ``max_tokens`` is the reply cap sent with every request (Anthropic requires one);
    ``temperature``, ``top_p`` and ``stop_sequences`` are sent with every request;
    ``thinking={"type": "enabled", ...}`` turns extended thinking on (ferrule sizes the
    budget from ``reasoning_effort``, within ``max_tokens``; a ``budget_tokens`` given is
    not used); ``timeout`` and
    ``max_retries`` configure the client; ``options`` are more attributes of the
    ``anthropic_language_model`` component."""

    def __init__(
        self,
        id: str = "claude-sonnet-4-20250514",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: list[str] | None = None,
        thinking: dict[str, Any] | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        sampling = Sampling(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            stop=stop_sequences,
            reasoning_effort=reasoning_effort,
            reasoning=_thinking_on(thinking),
        )
        attributes = client_attributes(
            dict(options or {}), timeout=timeout, max_retries=max_retries
        )
        if max_tokens is not None:
            attributes["max_tokens"] = max_tokens
        self.__attrs_init__(
            id,
            "anthropic",
            api_key,
            base_url,
            attributes,
            infer_options=sampling.infer_options(),
        )
