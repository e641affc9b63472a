"""Google's Gemini under Agno's name (``from ferrule.models.google.gemini import Gemini``).

`Gemini` is an `APIModel` of the provider ``gemini`` (ferrule-gemini, the Gemini API's
``streamGenerateContent``) and an Agno `Model`. The key comes from ``api_key``,
``$GEMINI_API_KEY``, ``$GOOGLE_API_KEY`` or ``ferrule keys set gemini``; the endpoint from
``base_url``, else ``$GOOGLE_GEMINI_BASE_URL`` (as in Google's SDK: a host, the API version
added) or ``$GEMINI_BASE_URL``, else Google's.

``temperature``, ``top_p``, ``max_output_tokens`` and ``stop_sequences`` are ferrule's
inference inputs; ``top_k``, ``seed``, ``presence_penalty``, ``frequency_penalty``,
``logprobs`` and a ``generation_config`` dict join every request's ``generationConfig``;
``safety_settings`` and ``cached_content`` are request fields, as ``request_params`` are;
``include_thoughts`` or a ``thinking_budget`` above 0 turn thinking on at the model's own
depth, ``thinking_level`` at that depth, ``thinking_budget=0`` leaves it off. Gemini's
server-side tools (search, grounding, URL context, File Search stores) and Vertex AI are not
used: each is refused, saying what to do instead. ``response_modalities`` (``["TEXT",
"IMAGE"]``, ``["AUDIO"]``) and ``speech_config`` join ``generationConfig`` (checked:
`ferrule.models.media_output`); the images the model draws reach ``RunOutput.images``, its
speech ``RunOutput.response_audio``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError
from typing_extensions import Unpack

from .. import APIModel
from ..base import Model
from ..media_output import gemini_output_config
from ..params import (
    CLIENT_NOTE,
    AgnoParam,
    ModelParams,
    agno_signature,
    agno_values,
    declined,
    model_params,
    retry_attributes,
)
from ..sampling import ReasoningEffort, Sampling, client_attributes

__all__ = ["Gemini"]

SEARCH_NOTE = (
    "Gemini's server-side search, grounding and URL context are not used: give the agent a "
    "search tool (DuckDuckGoTools)"
)
STORE_NOTE = "Gemini's hosted File Search stores are not used: give the agent a Knowledge"
VERTEX_NOTE = "ferrule-gemini reaches the Gemini API with a key; Vertex AI is not supported"
#: Agno's keywords that join ``generationConfig``, by the name the API gives them.
GENERATION_FIELDS = {
    "top_k": "topK",
    "seed": "seed",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
    "logprobs": "responseLogprobs",
}


class GeminiParams(ModelParams, total=False):
    name: str | None
    function_declarations: list[Any] | None
    generation_config: dict[str, Any] | None
    safety_settings: list[dict[str, Any]] | None
    generative_model_kwargs: dict[str, Any] | None
    search: bool
    grounding: bool
    grounding_dynamic_threshold: float | None
    url_context: bool
    vertexai_search: bool
    vertexai_search_datastore: str | None
    parallel_search: bool
    parallel_api_key: str | None
    parallel_config: dict[str, Any] | None
    file_search_store_names: list[str] | None
    file_search_metadata_filter: str | None
    temperature: float | None
    top_p: float | None
    top_k: int | None
    max_output_tokens: int | None
    stop_sequences: list[str] | None
    logprobs: bool | None
    presence_penalty: float | None
    frequency_penalty: float | None
    seed: int | None
    response_modalities: list[str] | None
    speech_config: dict[str, Any] | None
    cached_content: str | None
    thinking_budget: int | None
    include_thoughts: bool | None
    thinking_level: ReasoningEffort | None
    request_params: dict[str, Any] | None
    timeout: float | None
    collect_metrics_on_completion: bool
    credentials: Any
    api_key: str | None
    vertexai: bool
    project_id: str | None
    location: str | None
    client_params: dict[str, Any] | None
    client: Any
    #: ferrule's own.
    base_url: str | None
    max_retries: int | None
    options: dict[str, Any] | None


GEMINI_PARAMS: tuple[AgnoParam, ...] = model_params(
    {"name": "Gemini", "provider": "Google", "supports_native_structured_outputs": True},
    (
        declined("function_declarations", "give the agent its tools (tools=[...])"),
        AgnoParam("generation_config"),
        AgnoParam("safety_settings"),
        declined("generative_model_kwargs", CLIENT_NOTE),
        declined("search", SEARCH_NOTE, False),
        declined("grounding", SEARCH_NOTE, False),
        declined("grounding_dynamic_threshold", SEARCH_NOTE),
        declined("url_context", SEARCH_NOTE, False),
        declined("vertexai_search", SEARCH_NOTE, False),
        declined("vertexai_search_datastore", SEARCH_NOTE),
        declined("parallel_search", SEARCH_NOTE, False),
        declined("parallel_api_key", SEARCH_NOTE),
        declined("parallel_config", SEARCH_NOTE),
        declined("file_search_store_names", STORE_NOTE),
        declined("file_search_metadata_filter", STORE_NOTE),
        AgnoParam("temperature"),
        AgnoParam("top_p"),
        AgnoParam("top_k"),
        AgnoParam("max_output_tokens"),
        AgnoParam("stop_sequences"),
        AgnoParam("logprobs"),
        AgnoParam("presence_penalty"),
        AgnoParam("frequency_penalty"),
        AgnoParam("seed"),
        AgnoParam("response_modalities"),
        AgnoParam("speech_config"),
        AgnoParam("cached_content"),
        AgnoParam("thinking_budget"),
        AgnoParam("include_thoughts"),
        AgnoParam("thinking_level"),
        AgnoParam("request_params"),
        AgnoParam("timeout"),
        AgnoParam("collect_metrics_on_completion", True),
        declined("credentials", VERTEX_NOTE),
        AgnoParam("api_key"),
        declined("vertexai", VERTEX_NOTE, False),
        declined("project_id", VERTEX_NOTE),
        declined("location", VERTEX_NOTE),
        declined("client_params", CLIENT_NOTE),
        declined("client", CLIENT_NOTE),
        AgnoParam("base_url"),
        AgnoParam("max_retries"),
        AgnoParam("options"),
    ),
)


def _store_refused(*args: Any, **kwargs: Any) -> Any:
    raise InvalidInputError(STORE_NOTE, field="file_search_store")


async def _astore_refused(*args: Any, **kwargs: Any) -> Any:
    raise InvalidInputError(STORE_NOTE, field="file_search_store")


@attrs.frozen(init=False)
class Gemini(APIModel, Model):
    """``Gemini(id="gemini-2.5-flash", temperature=0.2, max_output_tokens=256)``."""

    AGNO_PARAMS = GEMINI_PARAMS
    #: Gemini's roles and the conversation's (Agno's maps).
    role_map: ClassVar[dict[str, str]] = {"model": "assistant"}
    reverse_role_map: ClassVar[dict[str, str]] = {"assistant": "model", "tool": "user"}

    def __init__(self, id: str = "gemini-3.5-flash", **params: Unpack[GeminiParams]) -> None:
        values = agno_values(type(self), GEMINI_PARAMS, dict(params))
        sampling = Sampling(
            temperature=values["temperature"],
            top_p=values["top_p"],
            max_tokens=values["max_output_tokens"],
            stop=values["stop_sequences"],
            reasoning_effort=values["thinking_level"],
            reasoning=bool(values["include_thoughts"]) or bool(values["thinking_budget"]),
        )
        attributes = client_attributes(
            dict(values["options"] or {}),
            timeout=values["timeout"],
            max_retries=values["max_retries"],
        )
        config = values["generation_config"]
        if config is not None and not isinstance(config, dict):
            raise InvalidInputError(
                "generation_config is a dict of Gemini's fields", field="generation_config"
            )
        generation = {
            **(config or {}),
            **{
                api: values[name]
                for name, api in GENERATION_FIELDS.items()
                if values[name] is not None
            },
            **gemini_output_config(values["response_modalities"], values["speech_config"]),
        }
        if generation:
            attributes["generation_config"] = generation
        extra = dict(values["request_params"] or {})
        if values["safety_settings"] is not None:
            extra["safetySettings"] = values["safety_settings"]
        if values["cached_content"] is not None:
            extra["cachedContent"] = values["cached_content"]
        if extra:
            attributes["extra_body"] = extra
        attributes.update(retry_attributes(values))
        self.__attrs_init__(
            id,
            values["provider"],
            values["api_key"],
            values["base_url"],
            attributes,
            infer_options=sampling.infer_options(),
            route_provider="gemini",
            agno_settings=values,
        )

    def get_request_params(
        self,
        system_message: str | None = None,
        response_format: Any = None,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The fields every request carries besides the contents."""
        request: dict[str, Any] = {**self.options.get("extra_body", {})}
        config = {**self.infer_options, **self.options.get("generation_config", {})}
        if config:
            request["generationConfig"] = config
        if system_message:
            request["systemInstruction"] = {"parts": [{"text": system_message}]}
        if tools:
            request["tools"] = tools
        return request

    def get_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")

    # Gemini's hosted File Search stores: refused (STORE_NOTE).
    create_file_search_store = _store_refused
    async_create_file_search_store = _astore_refused
    get_file_search_store = _store_refused
    async_get_file_search_store = _astore_refused
    list_file_search_stores = _store_refused
    async_list_file_search_stores = _astore_refused
    delete_file_search_store = _store_refused
    async_delete_file_search_store = _astore_refused
    upload_to_file_search_store = _store_refused
    async_upload_to_file_search_store = _astore_refused
    import_file_to_store = _store_refused
    async_import_file_to_store = _astore_refused
    list_documents = _store_refused
    async_list_documents = _astore_refused
    get_document = _store_refused
    async_get_document = _astore_refused
    delete_document = _store_refused
    async_delete_document = _astore_refused
    wait_for_operation = _store_refused
    async_wait_for_operation = _astore_refused
    download_blob = _store_refused
    async_download_blob = _astore_refused


Gemini.__init__.__signature__ = agno_signature(GEMINI_PARAMS, "gemini-3.5-flash")  # type: ignore[attr-defined]
