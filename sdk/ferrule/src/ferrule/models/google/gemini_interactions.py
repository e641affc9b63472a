"""Gemini's Interactions API under Agno's name (``from ferrule.models.google import
GeminiInteractions``).

`GeminiInteractions` is an `APIModel` of the provider ``gemini-interactions``
(ferrule-gemini's ``gemini_interactions_language_model``: ``POST {base_url}/interactions``).
The key and the endpoint follow `Gemini`'s rules: ``api_key``, ``$GEMINI_API_KEY``,
``$GOOGLE_API_KEY`` or ``ferrule keys set gemini``; ``base_url``, else
``$GOOGLE_GEMINI_BASE_URL`` (a host, the API version added), else Google's.

Google keeps each interaction unless ``store=False``: the next turn of a conversation sends
``previous_interaction_id`` and only what is new (the id rides on the assistant message, so
it is kept with the session's history); with ``store=False`` every request carries the
whole conversation. ``temperature``, ``top_p``, ``max_output_tokens``, ``stop_sequences``
and ``thinking_level`` are ferrule's inference inputs; ``seed`` and a ``generation_config``
dict (or pydantic model) join every request's ``generation_config``; ``service_tier`` is a
request field. ``agent=`` (an agent id) takes the agent path: a ``deep-research-...`` agent
gets its ``agent_config`` (``collaborative_planning``, ``thinking_summaries``,
``visualization``) and runs in the background, polled every ``agent_poll_interval`` seconds
for at most ``agent_max_wait``; another agent runs in the foreground with its
``environment``. Google's hosted tools (search, URL context, code execution, MCP servers,
File Search stores) are refused, saying what to do instead. ``response_modalities``
(``["text", "image"]``, ``["audio"]``) asks for drawn images and speech: a run's
``images`` / ``response_audio``, as with `Gemini`. Agno's keywords may be set on a made model between runs
(``agent.model.collaborative_planning = False``), as on Agno's dataclass: the agent's next
run uses the new value; any other attribute is frozen.
"""

from __future__ import annotations

from typing import Any, Literal

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
from .gemini import SEARCH_NOTE, STORE_NOTE

__all__ = ["GeminiInteractions"]

#: The provider name that routes to ferrule-gemini's Interactions component.
PROVIDER = "gemini-interactions"
DEFAULT_ID = "gemini-3-flash-preview"
DEEP_RESEARCH = "deep-research"
CODE_NOTE = (
    "Gemini's server-side code execution is not used: give the agent a Python tool "
    "(PythonTools) that runs in a base directory you choose"
)
MCP_NOTE = (
    "Google's connection to MCP servers is not used: give the agent ferrule.mcp.MCPServer tools"
)
#: The Deep Research agent's settings (its ``agent_config``), by Agno's keyword.
DEEP_RESEARCH_FIELDS = ("collaborative_planning", "thinking_summaries", "visualization")
#: The values Google takes for each.
DEEP_RESEARCH_VALUES: dict[str, tuple[Any, ...]] = {
    "collaborative_planning": (True, False),
    "thinking_summaries": ("auto", "none"),
    "visualization": ("off", "auto"),
}


class GeminiInteractionsParams(ModelParams, total=False):
    name: str | None
    temperature: float | None
    top_p: float | None
    max_output_tokens: int | None
    stop_sequences: list[str] | None
    seed: int | None
    response_modalities: list[str] | None
    generation_config: Any
    store: bool | None
    thinking_level: ReasoningEffort | None
    search: bool
    url_context: bool
    code_execution: bool
    mcp_servers: list[dict[str, Any]] | None
    file_search_store_names: list[str] | None
    agent: str | None
    collaborative_planning: bool | None
    thinking_summaries: Literal["auto", "none"] | None
    visualization: Literal["off", "auto"] | None
    environment: str | dict[str, Any] | None
    agent_poll_interval: float
    agent_max_wait: float
    service_tier: Literal["flex", "standard", "priority"] | None
    timeout: float | None
    api_key: str | None
    client_params: dict[str, Any] | None
    client: Any
    #: ferrule's own.
    base_url: str | None
    max_retries: int | None


INTERACTIONS_PARAMS: tuple[AgnoParam, ...] = model_params(
    {
        "name": "GeminiInteractions",
        "provider": "Google",
        "supports_native_structured_outputs": True,
    },
    (
        AgnoParam("temperature"),
        AgnoParam("top_p"),
        AgnoParam("max_output_tokens"),
        AgnoParam("stop_sequences"),
        AgnoParam("seed"),
        AgnoParam("response_modalities"),
        AgnoParam("generation_config"),
        AgnoParam("store"),
        AgnoParam("thinking_level"),
        declined("search", SEARCH_NOTE, False),
        declined("url_context", SEARCH_NOTE, False),
        declined("code_execution", CODE_NOTE, False),
        declined("mcp_servers", MCP_NOTE),
        declined("file_search_store_names", STORE_NOTE),
        AgnoParam("agent"),
        AgnoParam("collaborative_planning"),
        AgnoParam("thinking_summaries"),
        AgnoParam("visualization"),
        AgnoParam("environment"),
        AgnoParam("agent_poll_interval", 10.0),
        AgnoParam("agent_max_wait", 1800.0),
        AgnoParam("service_tier"),
        AgnoParam("timeout"),
        AgnoParam("api_key"),
        declined("client_params", CLIENT_NOTE),
        declined("client", CLIENT_NOTE),
        AgnoParam("base_url"),
        AgnoParam("max_retries"),
    ),
)


#: The keywords a program may set on a made model (`GeminiInteractions.__setattr__`).
KEYWORDS = frozenset(p.name for p in INTERACTIONS_PARAMS)


def _generation_config(values: dict[str, Any]) -> dict[str, Any]:
    """``seed`` and ``generation_config`` (a dict, or a pydantic model's set fields)."""
    config = values["generation_config"]
    if config is not None and hasattr(config, "model_dump"):
        config = config.model_dump(exclude_none=True)
    if config is not None and not isinstance(config, dict):
        raise InvalidInputError(
            "generation_config is a dict of the Interactions API's generation_config fields "
            "(or a pydantic model of them)",
            field="generation_config",
        )
    generation = dict(config or {})
    if values["seed"] is not None:
        generation["seed"] = values["seed"]
    return generation


def _agent_attributes(values: dict[str, Any]) -> dict[str, Any]:
    """The component attributes of the agent path (none on the model path, where the
    agent's settings are refused rather than ignored)."""
    agent = values["agent"]
    given = [name for name in (*DEEP_RESEARCH_FIELDS, "environment") if values[name] is not None]
    if agent is None:
        if given:
            raise InvalidInputError(
                "configures a Gemini agent: give agent= (e.g. 'deep-research-preview-04-2026')",
                field=given[0],
            )
        return {}
    if not isinstance(agent, str) or not agent:
        raise InvalidInputError("must be an agent id such as 'deep-research-...'", field="agent")
    for name, allowed in DEEP_RESEARCH_VALUES.items():
        value = values[name]
        if value is not None and (value not in allowed or type(value) is not type(allowed[0])):
            raise InvalidInputError(f"must be one of {allowed}; got {value!r}", field=name)
    if values["store"] is False:
        raise InvalidInputError(
            "an agent's interactions are kept at Google (the agent path needs them stored): "
            "leave store unset",
            field="store",
        )
    attributes: dict[str, Any] = {"agent": agent}
    if agent.startswith(DEEP_RESEARCH):
        config: dict[str, Any] = {"type": DEEP_RESEARCH}
        config.update((k, values[k]) for k in DEEP_RESEARCH_FIELDS if values[k] is not None)
        attributes["agent_config"] = config
        attributes["background"] = True  # Deep Research runs only in the background
    else:
        misplaced = [name for name in DEEP_RESEARCH_FIELDS if values[name] is not None]
        if misplaced:
            raise InvalidInputError(
                f"is a setting of the Deep Research agent, not of {agent!r}", field=misplaced[0]
            )
    if values["environment"] is not None:
        attributes["environment"] = values["environment"]
    attributes["poll_interval"] = values["agent_poll_interval"]
    attributes["max_wait"] = values["agent_max_wait"]
    return attributes


@attrs.frozen(init=False)
class GeminiInteractions(APIModel, Model):
    """``GeminiInteractions(id="gemini-3.5-flash")``, or
    ``GeminiInteractions(agent="deep-research-preview-04-2026")``."""

    AGNO_PARAMS = INTERACTIONS_PARAMS

    def __init__(self, id: str = DEFAULT_ID, **params: Unpack[GeminiInteractionsParams]) -> None:
        values = agno_values(type(self), INTERACTIONS_PARAMS, dict(params))
        sampling = Sampling(
            temperature=values["temperature"],
            top_p=values["top_p"],
            max_tokens=values["max_output_tokens"],
            stop=values["stop_sequences"],
            reasoning_effort=values["thinking_level"],
        )
        attributes = client_attributes(
            _agent_attributes(values), timeout=values["timeout"], max_retries=values["max_retries"]
        )
        generation = _generation_config(values)
        if generation:
            attributes["generation_config"] = generation
        output = gemini_output_config(values["response_modalities"], None)
        if output:  # checked as Gemini's are; the Interactions API spells them in lower case
            attributes["response_modalities"] = [m.lower() for m in output["responseModalities"]]
        for key in ("store", "service_tier"):
            if values[key] is not None:
                attributes[key] = values[key]
        attributes.update(retry_attributes(values))
        self.__attrs_init__(
            id,
            values["provider"],
            values["api_key"],
            values["base_url"],
            attributes,
            infer_options=sampling.infer_options(),
            route_provider=PROVIDER,
            agno_settings=values,
        )

    def get_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")


def _set_keyword(self: GeminiInteractions, name: str, value: Any) -> None:
    """An Agno keyword set after construction (Agno's models are mutable dataclasses:
    ``model.collaborative_planning = False`` between two turns) remakes the model from its
    keywords with the new value, checked as the constructor checks it; the next request
    uses it. Anything else is refused as on every frozen model."""
    if name not in KEYWORDS:
        raise attrs.exceptions.FrozenInstanceError
    settings = dict(self.agno_settings)
    settings[name] = value
    GeminiInteractions.__init__(self, self.id, **settings)


# attrs refuses a frozen class's own __setattr__, so it is put on the made class.
GeminiInteractions.__setattr__ = _set_keyword  # type: ignore[assignment,method-assign]
GeminiInteractions.__init__.__signature__ = agno_signature(INTERACTIONS_PARAMS, DEFAULT_ID)  # type: ignore[attr-defined]
