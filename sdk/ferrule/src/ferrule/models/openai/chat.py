"""OpenAI's Chat Completions models under Agno's name (``from ferrule.models.openai.chat
import OpenAIChat``).

`OpenAIChat` is an `APIModel` of the provider ``openai`` (ferrule-openai). The key comes
from ``api_key``, ``$OPENAI_API_KEY`` or ``ferrule keys set openai``; the endpoint from
``base_url``, else ``$OPENAI_BASE_URL`` (as in OpenAI's SDK), else OpenAI's.

Agno's request parameters are keywords here, each sent with every request of a run:
``temperature``, ``top_p``, ``max_tokens`` / ``max_completion_tokens`` (OpenAI's API gets
``max_completion_tokens``, other servers ``max_tokens``), ``stop`` and
``reasoning_effort`` are ferrule's inference inputs (`APIModel.infer_options`, under the
agent's and the run's own); ``frequency_penalty``, ``presence_penalty``, ``seed``,
``logit_bias``, ``logprobs``, ``top_logprobs``, ``user``, ``service_tier``, ``store``,
``metadata``, then ``extra_body`` and ``request_params`` are sent as request fields as
given; ``timeout`` is the seconds to wait for the next byte, ``max_retries`` the retries of
a failed request.
"""

from __future__ import annotations

from typing import Any, TypedDict

import attrs
from ferrule_kernel import in_range
from typing_extensions import Unpack

from .. import APIModel
from ..settings import ReasoningEffort, Sampling, client_attributes

__all__ = ["ChatParams", "OpenAIChat"]


class ChatParams(TypedDict, total=False):
    """The keywords of `OpenAIChat` and the models over the same wire (`OpenAILike`,
    ``xAI``, ``VLLM``)."""

    api_key: str | None
    base_url: str | None
    organization: str | None
    project: str | None
    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    max_completion_tokens: int | None
    stop: str | list[str] | None
    reasoning_effort: ReasoningEffort | None
    frequency_penalty: float | None
    presence_penalty: float | None
    seed: int | None
    logit_bias: dict[str, float] | None
    logprobs: bool | None
    top_logprobs: int | None
    user: str | None
    service_tier: str | None
    store: bool | None
    metadata: dict[str, str] | None
    extra_body: dict[str, Any] | None
    request_params: dict[str, Any] | None
    timeout: float | None
    max_retries: int | None
    #: More attributes of the provider's language-model component.
    options: dict[str, Any] | None


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
    metadata: dict[str, str] | None = None

    def body(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in attrs.asdict(self, recurse=False).items()
            if value is not None
        }


def chat_model_settings(params: ChatParams) -> tuple[dict[str, Any], dict[str, Any]]:
    """(component attributes, inference inputs) from the keywords of a Chat Completions
    model class. An unknown keyword is a `TypeError`, as for any Python call."""
    unknown = sorted(set(params) - ChatParams.__optional_keys__)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    sampling = Sampling(
        temperature=params.get("temperature"),
        top_p=params.get("top_p"),
        max_tokens=params.get("max_completion_tokens") or params.get("max_tokens"),
        stop=params.get("stop"),
        reasoning_effort=params.get("reasoning_effort"),
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
    for key in ("organization", "project"):
        if (value := params.get(key)) is not None:
            attributes[key] = value
    client_attributes(
        attributes, timeout=params.get("timeout"), max_retries=params.get("max_retries")
    )
    return attributes, sampling.infer_options()


@attrs.frozen(init=False)
class OpenAIChat(APIModel):
    """``OpenAIChat(id="gpt-4o", temperature=0.2, max_tokens=512)``."""

    def __init__(self, id: str = "gpt-4o", **params: Unpack[ChatParams]) -> None:
        self._init_chat(id, "openai", params)

    def _init_chat(self, id: str, provider: str, params: ChatParams) -> None:
        attributes, infer_options = chat_model_settings(params)
        self.__attrs_init__(
            id,
            provider,
            params.get("api_key"),
            params.get("base_url"),
            attributes,
            infer_options=infer_options,
        )
