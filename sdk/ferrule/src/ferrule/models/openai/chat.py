"""OpenAI's Chat Completions models under Agno's name (``from ferrule.models.openai.chat
import OpenAIChat``).

`OpenAIChat` is an `APIModel` of the provider ``openai`` (ferrule-openai) and an Agno
`Model`, taking Agno's keywords (`CHAT_PARAMS`). The key comes from ``api_key``,
``$OPENAI_API_KEY`` or ``ferrule keys set openai``; the endpoint from ``base_url``, else
``$OPENAI_BASE_URL`` (as in OpenAI's SDK), else OpenAI's.

``temperature``, ``top_p``, ``max_tokens`` / ``max_completion_tokens`` (OpenAI's API gets
``max_completion_tokens``, other servers ``max_tokens``), ``stop`` and
``reasoning_effort`` are ferrule's inference inputs (`APIModel.infer_options`, under the
agent's and the run's own); ``frequency_penalty``, ``presence_penalty``, ``seed``,
``logit_bias``, ``logprobs``, ``top_logprobs``, ``user``, ``service_tier``, ``store``,
``metadata``, ``verbosity``, then ``extra_body`` and ``request_params`` are sent as request
fields as given; ``strict_output=False`` sends a structured-output schema with ``strict:
false`` (a guide the model may stray from) where True sends it strict; ``default_headers``
/ ``extra_headers`` go with every request; ``timeout`` is the seconds to wait for the next
byte, ``max_retries`` (or Agno's ``retries``, with
``delay_between_retries`` and ``exponential_backoff``) the retries of a failed request.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import attrs
from ferrule_kernel import InvalidInputError, in_range
from typing_extensions import Unpack

from .. import APIModel
from ..base import Model
from ..media_output import chat_output_fields
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

__all__ = ["CHAT_PARAMS", "ChatParams", "OpenAIChat", "chat_params"]


class ChatParams(ModelParams, total=False):
    """The keywords of `OpenAIChat` and the models over the same wire (`OpenAILike`,
    ``xAI``, ``VLLM``, ``Ollama``)."""

    name: str | None
    collect_metrics_on_completion: bool
    store: bool | None
    reasoning_effort: ReasoningEffort | None
    verbosity: Literal["low", "medium", "high"] | None
    metadata: dict[str, Any] | None
    frequency_penalty: float | None
    logit_bias: dict[str, float] | None
    logprobs: bool | None
    top_logprobs: int | None
    max_tokens: int | None
    max_completion_tokens: int | None
    modalities: list[str] | None
    audio: dict[str, Any] | None
    presence_penalty: float | None
    seed: int | None
    stop: str | list[str] | None
    temperature: float | None
    user: str | None
    top_p: float | None
    service_tier: str | None
    strict_output: bool
    extra_headers: dict[str, str] | None
    extra_query: dict[str, Any] | None
    extra_body: dict[str, Any] | None
    request_params: dict[str, Any] | None
    role_map: dict[str, str] | None
    api_key: str | None
    organization: str | None
    base_url: str | None
    timeout: float | None
    max_retries: int | None
    default_headers: dict[str, str] | None
    default_query: dict[str, Any] | None
    http_client: Any
    client_params: dict[str, Any] | None
    client: Any
    async_client: Any
    #: ferrule's own: OpenAI's project header, and more attributes of the component.
    project: str | None
    options: dict[str, Any] | None


#: The keywords of the Chat Completions wire, after the base ones.
CHAT_OWN: tuple[AgnoParam, ...] = (
    AgnoParam("collect_metrics_on_completion", False),
    AgnoParam("store"),
    AgnoParam("reasoning_effort"),
    AgnoParam("verbosity"),
    AgnoParam("metadata"),
    AgnoParam("frequency_penalty"),
    AgnoParam("logit_bias"),
    AgnoParam("logprobs"),
    AgnoParam("top_logprobs"),
    AgnoParam("max_tokens"),
    AgnoParam("max_completion_tokens"),
    AgnoParam("modalities"),
    AgnoParam("audio"),
    AgnoParam("presence_penalty"),
    AgnoParam("seed"),
    AgnoParam("stop"),
    AgnoParam("temperature"),
    AgnoParam("user"),
    AgnoParam("top_p"),
    AgnoParam("service_tier"),
    AgnoParam("strict_output", True),
    AgnoParam("extra_headers"),
    declined("extra_query", QUERY_NOTE),
    AgnoParam("extra_body"),
    AgnoParam("request_params"),
    declined("role_map", ROLE_NOTE),
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
    declined("async_client", CLIENT_NOTE),
    AgnoParam("project"),
    AgnoParam("options"),
)


def chat_params(name: str, provider: str, **defaults: Any) -> tuple[AgnoParam, ...]:
    """The keywords of a class over the Chat Completions wire, with its own defaults."""
    own = [
        attrs.evolve(p, default=defaults.pop(p.name)) if p.name in defaults else p for p in CHAT_OWN
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


CHAT_PARAMS = chat_params("OpenAIChat", "OpenAI")


@attrs.frozen
class RequestFields:
    """The Chat Completions fields ferrule's inference inputs do not name, checked."""

    frequency_penalty: float | None = attrs.field(default=None, validator=in_range(-2.0, 2.0))
    presence_penalty: float | None = attrs.field(default=None, validator=in_range(-2.0, 2.0))
    seed: int | None = None
    logit_bias: dict[str, float] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = attrs.field(default=None, validator=in_range(0, 20))
    user: str | None = None
    service_tier: str | None = None
    store: bool | None = None
    metadata: dict[str, Any] | None = None
    verbosity: str | None = None

    def body(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in attrs.asdict(self, recurse=False).items()
            if value is not None
        }


def chat_model_settings(values: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(component attributes, inference inputs) from a Chat Completions class's keyword
    values (`agno_values`')."""
    sampling = Sampling(
        temperature=values.get("temperature"),
        top_p=values.get("top_p"),
        max_tokens=values.get("max_completion_tokens") or values.get("max_tokens"),
        stop=values.get("stop"),
        reasoning_effort=values.get("reasoning_effort"),
    )
    fields = RequestFields(**{name: values.get(name) for name in attrs.fields_dict(RequestFields)})
    extra_body = {
        **fields.body(),
        **chat_output_fields(values.get("modalities"), values.get("audio")),
        **(values.get("extra_body") or {}),
        **(values.get("request_params") or {}),
    }
    attributes = dict(values.get("options") or {})
    if extra_body:
        attributes["extra_body"] = {**attributes.get("extra_body", {}), **extra_body}
    for key in ("organization", "project"):
        if (value := values.get(key)) is not None:
            attributes[key] = value
    strict_output = values.get("strict_output")
    if not isinstance(strict_output, bool):
        raise InvalidInputError(
            f"must be True or False; got {strict_output!r}", field="strict_output"
        )
    if not strict_output:
        attributes["strict_output"] = False  # the schema sent with ``strict: false``
    headers = {**(values.get("default_headers") or {}), **(values.get("extra_headers") or {})}
    if headers:
        attributes["extra_headers"] = headers
    attributes.update(retry_attributes(values))
    client_attributes(
        attributes, timeout=values.get("timeout"), max_retries=values.get("max_retries")
    )
    return attributes, sampling.infer_options()


@attrs.frozen(init=False)
class OpenAIChat(APIModel, Model):
    """``OpenAIChat(id="gpt-4o", temperature=0.2, max_tokens=512)`` (Agno's default id)."""

    #: The keywords this class takes, their defaults and what ferrule does with each.
    AGNO_PARAMS = CHAT_PARAMS
    #: The provider plugin that serves it.
    ROUTE = "openai"
    #: Agno's roles of the Chat Completions wire.
    default_role_map: ClassVar[dict[str, str]] = {
        "system": "developer",
        "user": "user",
        "assistant": "assistant",
        "tool": "tool",
        "model": "assistant",
    }

    def __init__(self, id: str = "gpt-5.4-mini", **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, dict(params))

    def _init_chat(self, id: str, params: dict[str, Any]) -> None:
        values = agno_values(type(self), type(self).AGNO_PARAMS, params)
        attributes, infer_options = chat_model_settings(values)
        self.__attrs_init__(
            id,
            values["provider"],
            values.get("api_key"),
            values.get("base_url"),
            attributes,
            infer_options=infer_options,
            route_provider=type(self).ROUTE,
            agno_settings=values,
        )

    def get_request_params(
        self,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        run_response: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """The fields every request carries besides the messages: the sampling settings
        and the request fields given (``kwargs`` too), with ``tools`` / ``tool_choice`` /
        the ``response_format`` when given."""
        request = {**self.infer_options, **self.options.get("extra_body", {}), **kwargs}
        if tools:
            request["tools"] = tools
        if tool_choice is not None:
            request["tool_choice"] = tool_choice
        if isinstance(response_format, dict):
            request["response_format"] = response_format
        return request

    @staticmethod
    def parse_tool_calls(tool_calls_data: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Streamed tool-call pieces (by ``index``) joined into whole calls."""
        return Model.parse_tool_calls(None, tool_calls_data)  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenAIChat:
        """The model of ``to_dict``'s dict (``id``, and the keywords it names)."""
        known = {p.name for p in cls.AGNO_PARAMS}
        keywords = {k: v for k, v in data.items() if k in known}
        model: OpenAIChat = cls(data.get("id", "gpt-5.4-mini"), **keywords)
        return model

    def get_client(self) -> Any:
        raise _no_client()

    def get_async_client(self) -> Any:
        raise _no_client()


def _no_client() -> Exception:
    return InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")


OpenAIChat.__init__.__signature__ = agno_signature(CHAT_PARAMS, "gpt-5.4-mini")  # type: ignore[attr-defined]
