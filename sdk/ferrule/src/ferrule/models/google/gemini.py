"""Google's Gemini under Agno's name (``from ferrule.models.google.gemini import Gemini``).

`Gemini` is an `APIModel` of the provider ``gemini`` (ferrule-gemini, the Gemini API's
``streamGenerateContent``). The key comes from ``api_key``, ``$GEMINI_API_KEY``,
``$GOOGLE_API_KEY`` or ``ferrule keys set gemini``; the endpoint from ``base_url``, else
``$GOOGLE_GEMINI_BASE_URL`` (as in Google's SDK: a host, the API version added) or
``$GEMINI_BASE_URL``, else Google's.
"""

from __future__ import annotations

from typing import Any

import attrs

from .. import APIModel
from ..settings import ReasoningEffort, Sampling, client_attributes

__all__ = ["Gemini"]


@attrs.frozen(init=False)
class Gemini(APIModel):
    """``Gemini(id="gemini-2.5-flash", temperature=0.2, max_output_tokens=256)``.

    ``temperature``, ``top_p``, ``max_output_tokens`` and ``stop_sequences`` go into every
    request's ``generationConfig``; ``include_thoughts`` or a ``thinking_budget`` above 0
    turn thinking on at the model's own depth, ``thinking_level`` (``low`` / ``high``) at
    that depth, ``thinking_budget=0`` leaves it off; ``timeout`` and ``max_retries``
    configure the client; ``options`` are more attributes of the ``gemini_language_model``
    component."""

    def __init__(
        self,
        id: str = "gemini-2.5-flash",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        max_output_tokens: int | None = None,
        stop_sequences: list[str] | None = None,
        include_thoughts: bool | None = None,
        thinking_budget: int | None = None,
        thinking_level: ReasoningEffort | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        sampling = Sampling(
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_output_tokens,
            stop=stop_sequences,
            reasoning_effort=thinking_level,
            reasoning=bool(include_thoughts) or bool(thinking_budget),
        )
        attributes = client_attributes(
            dict(options or {}), timeout=timeout, max_retries=max_retries
        )
        self.__attrs_init__(
            id, "gemini", api_key, base_url, attributes, infer_options=sampling.infer_options()
        )
