"""What ``define("openai_language_model", name, attrs)`` takes (imported when one is defined,
not by the plugin's hook module: a cold start builds no class it does not use)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import in_range
from ferrule_kit.models.providerspec import ProviderAttributes


@attrs.frozen
class OpenAIAttributes(ProviderAttributes):
    """What ``define`` takes (`ProviderAttributes` and OpenAI's own).

    With the default ``base_url`` the key comes from ``api_key`` or ``OPENAI_API_KEY`` and
    is required. With another ``base_url`` (vLLM, TGI, Ollama, llama.cpp's server, another
    ``ferrule serve``) only ``api_key`` is sent, and only if given: an OpenAI key from the
    environment is never sent to a server that is not OpenAI's.
    """

    organization: str | None = None
    project: str | None = None
    #: Treat the model as a reasoning model (no temperature/top_p/stop, ``developer``
    #: system role, ``reasoning_effort`` sent). None: decided from the id (o1/o3/o4/gpt-5
    #: on OpenAI's API; never on another server).
    reasoning_model: bool | None = None
    read_timeout: float = attrs.field(default=60.0, validator=in_range(0.001))
    #: Extra request fields, sent as given (e.g. a compatible server's own sampling options).
    extra_body: dict[str, Any] = attrs.field(factory=dict)
    #: False: a structured-output schema guides the reply but is never sent as strict
    #: (``strict: false``); True: strict whenever the schema is closed.
    strict_output: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))


@attrs.frozen
class OpenAIResponsesAttributes(OpenAIAttributes):
    """What ``define("openai_responses_language_model", ...)`` takes: `OpenAIAttributes`
    and the Responses API's own."""

    #: Let OpenAI keep the response (``store``). ferrule sends the whole conversation each
    #: time, so by default nothing is kept and reasoning comes back encrypted instead.
    store: bool = False
    #: The reasoning summary asked for when reasoning is on (``auto``, ``concise``,
    #: ``detailed``); None asks for none.
    reasoning_summary: str | None = attrs.field(
        default="auto",
        validator=attrs.validators.optional(attrs.validators.in_(("auto", "concise", "detailed"))),
    )
    #: The provider tools (OpenAI runs them: ``web_search_preview``, ``file_search``...) a
    #: request may carry, by type; None: any the caller gives, an empty list: none. A host
    #: policy: the requests' own tools never widen it.
    server_tools: list[str] | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(
            attrs.validators.deep_iterable(attrs.validators.instance_of(str))
        ),
    )
    #: ``text.verbosity``: how long the reply is (``low``, ``medium``, ``high``).
    verbosity: str | None = attrs.field(
        default=None,
        validator=attrs.validators.optional(attrs.validators.in_(("low", "medium", "high"))),
    )
    #: Background mode (`ferrule_openai.responses_background`): the response is created
    #: with ``background: true`` (and ``store: true``, which the API requires for it), then
    #: polled every ``background_poll_interval`` seconds until it ends; after
    #: ``background_max_wait`` seconds it is cancelled at the provider and the request
    #: ends with a `ProviderTimeoutError`.
    background: bool = False
    background_poll_interval: float = attrs.field(default=2.0, validator=in_range(0.001))
    background_max_wait: float = attrs.field(default=600.0, validator=in_range(0.001))
