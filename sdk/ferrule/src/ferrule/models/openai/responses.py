"""OpenAI's models over the Responses API under Agno's name (``from
ferrule.models.openai.responses import OpenAIResponses``, or from ``ferrule.models.openai``).

`OpenAIResponses` is an `APIModel` of the provider ``openai-responses`` (ferrule-openai's
``openai_responses_language_model``: ``POST {base_url}/responses``, streamed). The key and
the endpoint follow `OpenAIChat`'s rules: ``api_key``, ``$OPENAI_API_KEY`` or ``ferrule keys
set openai``; ``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's.

``temperature``, ``top_p``, ``max_output_tokens`` and ``reasoning_effort`` (or Agno's
``reasoning={"effort": ...}``) are ferrule's inference inputs, under the agent's and the
run's own; ``reasoning_summary`` (or ``reasoning={"summary": ...}``), ``store``,
``strict_output`` and ``verbosity`` are the component's; ``metadata``,
``parallel_tool_calls``, ``max_tool_calls``, ``truncation``, ``user``, ``service_tier``,
then ``extra_body`` and ``request_params`` are sent as request fields as given; ``timeout``
is the seconds to wait for the next byte, ``max_retries`` the retries of a failed request.

Unlike Agno's default, nothing is stored at OpenAI unless ``store=True``: each request carries
the whole conversation, and a reasoning model's reasoning comes back as encrypted content
that the next request of the run sends back.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import attrs
from ferrule_kernel import InvalidInputError, in_range
from typing_extensions import Unpack

from .. import APIModel
from ..settings import ReasoningEffort, Sampling, client_attributes

__all__ = ["OpenAIResponses", "ResponsesParams"]

#: The provider name that routes to ferrule-openai's Responses component.
PROVIDER = "openai-responses"

ReasoningSummary = Literal["auto", "concise", "detailed"]


class ResponsesParams(TypedDict, total=False):
    """The keywords of `OpenAIResponses`."""

    api_key: str | None
    base_url: str | None
    organization: str | None
    project: str | None
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    reasoning_effort: ReasoningEffort | None
    reasoning_summary: ReasoningSummary | None
    #: Agno's spelling of both: ``{"effort": "high", "summary": "auto"}``.
    reasoning: dict[str, Any] | None
    store: bool | None
    #: False: an ``output_schema`` guides the reply, never sent as strict.
    strict_output: bool | None
    verbosity: Literal["low", "medium", "high"] | None
    metadata: dict[str, str] | None
    parallel_tool_calls: bool | None
    max_tool_calls: int | None
    truncation: Literal["auto", "disabled"] | None
    user: str | None
    service_tier: str | None
    extra_body: dict[str, Any] | None
    request_params: dict[str, Any] | None
    timeout: float | None
    max_retries: int | None
    #: More attributes of ferrule-openai's Responses component.
    options: dict[str, Any] | None


@attrs.frozen
class RequestFields:
    """The Responses fields ferrule's inference inputs do not name, checked."""

    metadata: dict[str, str] | None = None
    parallel_tool_calls: bool | None = None
    max_tool_calls: int | None = attrs.field(default=None, validator=in_range(1))
    truncation: Literal["auto", "disabled"] | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(attrs.validators.in_(("auto", "disabled"))),
    )
    user: str | None = None
    service_tier: str | None = None

    def body(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in attrs.asdict(self, recurse=False).items()
            if value is not None
        }


def _reasoning(params: ResponsesParams) -> tuple[Any, Any]:
    """(effort, summary) from ``reasoning_effort`` / ``reasoning_summary`` or Agno's
    ``reasoning`` dict (the keywords win)."""
    reasoning = params.get("reasoning") or {}
    if not isinstance(reasoning, dict):
        raise InvalidInputError("must be a dict such as {'effort': 'high'}", field="reasoning")
    unknown = sorted(set(reasoning) - {"effort", "summary"})
    if unknown:
        raise InvalidInputError(f"unknown key {unknown[0]!r}", field=f"reasoning.{unknown[0]}")
    effort = params.get("reasoning_effort") or reasoning.get("effort")
    summary = params.get("reasoning_summary") or reasoning.get("summary")
    if summary is not None and summary not in ("auto", "concise", "detailed"):
        raise InvalidInputError(
            f"must be one of auto, concise, detailed; got {summary!r}", field="reasoning_summary"
        )
    return effort, summary


def responses_model_settings(params: ResponsesParams) -> tuple[dict[str, Any], dict[str, Any]]:
    """(component attributes, inference inputs) from `OpenAIResponses`' keywords. An
    unknown keyword is a `TypeError`, as for any Python call."""
    unknown = sorted(set(params) - ResponsesParams.__optional_keys__)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    effort, summary = _reasoning(params)
    sampling = Sampling(
        temperature=params.get("temperature"),
        top_p=params.get("top_p"),
        max_tokens=params.get("max_output_tokens"),
        reasoning_effort=effort,
    )
    fields = RequestFields(
        **{name: params[name] for name in attrs.fields_dict(RequestFields) if name in params}  # type: ignore[literal-required]
    )
    extra_body = {
        **fields.body(),
        **(params.get("extra_body") or {}),
        **(params.get("request_params") or {}),
    }
    attributes = dict(params.get("options") or {})
    if extra_body:
        attributes["extra_body"] = {**attributes.get("extra_body", {}), **extra_body}
    for key in ("organization", "project", "store", "strict_output", "verbosity"):
        if (value := params.get(key)) is not None:
            attributes[key] = value
    if summary is not None:
        attributes["reasoning_summary"] = summary
    client_attributes(
        attributes, timeout=params.get("timeout"), max_retries=params.get("max_retries")
    )
    return attributes, sampling.infer_options()


@attrs.frozen(init=False)
class OpenAIResponses(APIModel):
    """``OpenAIResponses(id="gpt-5-mini", reasoning_effort="low")`` (the default id is Agno's)."""

    def __init__(self, id: str = "gpt-5.4-mini", **params: Unpack[ResponsesParams]) -> None:
        attributes, infer_options = responses_model_settings(params)
        self.__attrs_init__(
            id,
            PROVIDER,
            params.get("api_key"),
            params.get("base_url"),
            attributes,
            infer_options=infer_options,
        )
