"""Any server of the Responses API under Agno's name (``from
ferrule.models.openai.open_responses import OpenResponses``): `OpenAIResponses` pointed at
another ``base_url`` (an Open Responses server, a gateway). Only the ``api_key`` given is
sent there, and nothing is stored by default."""

from __future__ import annotations

import attrs
from typing_extensions import Unpack

from ..params import agno_signature
from .responses import OpenAIResponses, ResponsesParams, responses_params

__all__ = ["OpenResponses"]

OPEN_RESPONSES_PARAMS = responses_params(
    "OpenResponses", "OpenResponses", api_key="not-provided", store=False
)


@attrs.frozen(init=False)
class OpenResponses(OpenAIResponses):
    """``OpenResponses(id="my-model", base_url="http://127.0.0.1:8000/v1")``."""

    AGNO_PARAMS = OPEN_RESPONSES_PARAMS

    def __init__(self, id: str = "not-provided", **params: Unpack[ResponsesParams]) -> None:
        self._init_responses(id, dict(params))


OpenResponses.__init__.__signature__ = agno_signature(OPEN_RESPONSES_PARAMS, "not-provided")  # type: ignore[attr-defined]
