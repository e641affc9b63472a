"""OpenAI's models over the Responses API under Agno's name (``from
ferrule.models.openai.responses import OpenAIResponses``, or from ``ferrule.models.openai``).

`OpenAIResponses` is an `APIModel` of the provider ``openai-responses`` (ferrule-openai's
``openai_responses_language_model``: ``POST {base_url}/responses``, streamed). The key and
the endpoint follow `OpenAIChat`'s rules: ``api_key``, ``$OPENAI_API_KEY`` or ``ferrule keys
set openai``; ``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's.

``temperature``, ``top_p``, ``max_output_tokens`` and ``reasoning_effort`` (or Agno's
``reasoning={"effort": ...}``) are ferrule's inference inputs, under the agent's and the
run's own; ``reasoning_summary`` (or ``reasoning={"summary": ...}``), ``store``,
``strict_output`` and ``verbosity`` are the component's, and so are ``background``,
``background_poll_interval`` and ``background_max_wait`` (the response created in the
background and polled until it ends: ferrule-openai's README); ``metadata``,
``parallel_tool_calls``, ``max_tool_calls``, ``truncation``, ``user``, ``service_tier``,
then ``extra_body`` and ``request_params`` are sent as request fields as given; ``timeout``
is the seconds to wait for the next byte, ``max_retries`` the retries of a failed request.

Unlike Agno's default, nothing is stored at OpenAI unless ``store=True``: each request carries
the whole conversation, and a reasoning model's reasoning comes back as encrypted content
that the next request of the run sends back.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError, in_range
from typing_extensions import Unpack

from .. import APIModel
from ..base import Model
from ..params import (
    CLIENT_NOTE,
    QUERY_NOTE,
    ROLE_NOTE,
    AgnoParam,
    ModelParams,
    agno_signature,
    agno_values,
    declined,
    model_params,
    retry_attributes,
)
from ..sampling import ReasoningEffort, Sampling, client_attributes

__all__ = ["RESPONSES_PARAMS", "OpenAIResponses", "ResponsesParams", "responses_params"]

#: The provider name that routes to ferrule-openai's Responses component.
PROVIDER = "openai-responses"

ReasoningSummary = Literal["auto", "concise", "detailed"]


class ResponsesParams(ModelParams, total=False):
    """The keywords of `OpenAIResponses`."""

    name: str | None
    include: list[str] | None
    background: bool | None
    background_poll_interval: float
    background_max_wait: float
    extra_headers: dict[str, str] | None
    extra_query: dict[str, Any] | None
    default_headers: dict[str, str] | None
    default_query: dict[str, Any] | None
    http_client: Any
    client_params: dict[str, Any] | None
    client: Any
    async_client: Any
    vector_store_name: str
    role_map: dict[str, str] | None

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


RESPONSES_OWN: tuple[AgnoParam, ...] = (
    AgnoParam("include"),
    AgnoParam("max_output_tokens"),
    AgnoParam("max_tool_calls"),
    AgnoParam("metadata"),
    AgnoParam("parallel_tool_calls"),
    AgnoParam("reasoning"),
    AgnoParam("verbosity"),
    AgnoParam("reasoning_effort"),
    AgnoParam("reasoning_summary"),
    AgnoParam("store"),
    AgnoParam("temperature"),
    AgnoParam("top_p"),
    AgnoParam("truncation"),
    AgnoParam("user"),
    AgnoParam("service_tier"),
    AgnoParam("strict_output", True),
    AgnoParam("background"),
    AgnoParam("background_poll_interval", 2.0),
    AgnoParam("background_max_wait", 600.0),
    AgnoParam("extra_headers"),
    declined("extra_query", QUERY_NOTE),
    AgnoParam("extra_body"),
    AgnoParam("request_params"),
    AgnoParam("api_key"),
    AgnoParam("organization"),
    AgnoParam("base_url"),
    AgnoParam("timeout"),
    AgnoParam("max_retries"),
    AgnoParam("default_headers"),
    declined("default_query", QUERY_NOTE),
    declined("http_client", CLIENT_NOTE),
    declined("client_params", CLIENT_NOTE),
    declined("client", CLIENT_NOTE),
    declined(
        "vector_store_name",
        "OpenAI's hosted file search is not used: give the agent a Knowledge",
        "knowledge_base",
    ),
    declined("async_client", CLIENT_NOTE),
    declined("role_map", ROLE_NOTE),
    AgnoParam("project"),
    AgnoParam("options"),
)


def responses_params(name: str, provider: str, **defaults: Any) -> tuple[AgnoParam, ...]:
    """The keywords of a class over the Responses API, with its own defaults."""
    own = [
        attrs.evolve(p, default=defaults.pop(p.name)) if p.name in defaults else p
        for p in RESPONSES_OWN
    ]
    return model_params(
        {
            "name": name,
            "provider": provider,
            "supports_native_structured_outputs": True,
            **defaults,
        },
        own,
    )


RESPONSES_PARAMS = responses_params("OpenAIResponses", "OpenAI")


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
    include: list[str] | None = None

    def body(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in attrs.asdict(self, recurse=False).items()
            if value is not None
        }


def _seconds(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise InvalidInputError(
            f"must be a number of seconds above 0, got {value!r}", field=attribute.name
        )


def _optional_flag(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, bool):
        raise InvalidInputError(f"must be True or False, got {value!r}", field=attribute.name)


@attrs.frozen
class BackgroundFields:
    """Background mode (ferrule-openai's ``background`` attributes), checked: the response
    is created in the background, polled every ``background_poll_interval`` seconds, and
    cancelled (a `ProviderTimeoutError`) after ``background_max_wait``."""

    background: bool | None = attrs.field(default=None, validator=_optional_flag)
    background_poll_interval: float = attrs.field(default=2.0, validator=_seconds)
    background_max_wait: float = attrs.field(default=600.0, validator=_seconds)

    def attributes(self) -> dict[str, Any]:
        if not self.background:
            return {}
        return {
            "background": True,
            "background_poll_interval": float(self.background_poll_interval),
            "background_max_wait": float(self.background_max_wait),
        }


def _background(params: dict[str, Any]) -> dict[str, Any]:
    names = attrs.fields_dict(BackgroundFields)
    return BackgroundFields(**{name: params[name] for name in names}).attributes()


def _reasoning(params: dict[str, Any]) -> tuple[Any, Any]:
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


def responses_model_settings(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(component attributes, inference inputs) from `OpenAIResponses`' keyword values."""
    effort, summary = _reasoning(params)
    sampling = Sampling(
        temperature=params.get("temperature"),
        top_p=params.get("top_p"),
        max_tokens=params.get("max_output_tokens"),
        reasoning_effort=effort,
    )
    fields = RequestFields(**{name: params.get(name) for name in attrs.fields_dict(RequestFields)})
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
    attributes.update(_background(params))
    headers = {**(params.get("default_headers") or {}), **(params.get("extra_headers") or {})}
    if headers:
        attributes["extra_headers"] = headers
    attributes.update(retry_attributes(params))
    client_attributes(
        attributes, timeout=params.get("timeout"), max_retries=params.get("max_retries")
    )
    return attributes, sampling.infer_options()


@attrs.frozen(init=False)
class OpenAIResponses(APIModel, Model):
    """``OpenAIResponses(id="gpt-5-mini", reasoning_effort="low")`` (the default id is Agno's)."""

    AGNO_PARAMS = RESPONSES_PARAMS
    ROUTE = PROVIDER

    def __init__(self, id: str = "gpt-5.4-mini", **params: Unpack[ResponsesParams]) -> None:
        self._init_responses(id, dict(params))

    def _init_responses(self, id: str, params: dict[str, Any]) -> None:
        values = agno_values(type(self), type(self).AGNO_PARAMS, params)
        attributes, infer_options = responses_model_settings(values)
        api_key = values.get("api_key")
        self.__attrs_init__(
            id,
            values["provider"],
            None if api_key == "not-provided" else api_key,
            values.get("base_url"),
            attributes,
            infer_options=infer_options,
            route_provider=type(self).ROUTE,
            agno_settings=values,
        )

    def get_request_params(
        self,
        messages: list[Any] | None = None,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The fields every request carries besides the input: the sampling settings and
        the request fields given, with ``tools`` / ``tool_choice`` when given."""
        request = {**self.infer_options, **self.options.get("extra_body", {})}
        if self.options.get("background"):  # a background response must be stored
            request.update(background=True, store=True)
        if tools:
            request["tools"] = tools
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        return request

    def get_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")

    def get_async_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")


OpenAIResponses.__init__.__signature__ = agno_signature(RESPONSES_PARAMS, "gpt-5.4-mini")  # type: ignore[attr-defined]
