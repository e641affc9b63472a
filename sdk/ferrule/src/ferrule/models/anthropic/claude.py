"""Anthropic's Claude under Agno's name (``from ferrule.models.anthropic.claude import
Claude``).

`Claude` is an `APIModel` of the provider ``anthropic`` (ferrule-anthropic, the Messages
API) and an Agno `Model`. The key comes from ``api_key``, ``$ANTHROPIC_API_KEY`` or
``ferrule keys set anthropic``; the endpoint from ``base_url``, else
``$ANTHROPIC_BASE_URL`` (as in Anthropic's SDK), else Anthropic's.

``max_tokens`` (8192 unless given: Anthropic requires one), ``temperature``, ``top_p`` and
``stop_sequences`` are sent with every request; ``thinking={"type": "enabled", ...}``
turns extended thinking on (ferrule sizes the budget from ``reasoning_effort``, within
``max_tokens``); ``top_k``, ``context_management``, ``output_config`` (its fields join those
ferrule writes: ``effort``, the JSON schema's ``format``) and ``request_params`` are request
fields; ``betas`` the ``anthropic-beta`` header; ``cache_system_prompt`` / ``cache_tools``
cache the prompt (five minutes, an hour with ``extended_cache_time``);
``system_prompt_blocks`` (a list of `SystemPromptBlock`, or a function answering one, called
for each request) are more system prompt after the agent's, each cached or not on its own;
``append_trailing_user_message`` (on by default for Claude 4.6 and later, which refuse to
continue a turn of their own) adds a user turn of ``trailing_user_message_content`` to a
conversation that ends with the model's; ``timeout``,
``max_retries`` / ``retries`` and ``default_headers`` configure the client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from typing_extensions import Unpack

from .. import APIModel
from ..base import Model
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

__all__ = ["Claude", "SystemPromptBlock"]


@attrs.define(kw_only=True)
class SystemPromptBlock:
    """A piece of the system prompt sent after the agent's, with its own cache setting:
    ``cache`` marks it for Anthropic's prompt cache (whatever ``cache_system_prompt``
    says, which is the agent's block's), for ``ttl`` (``"5m"``, ``"1h"``; None: an hour
    with the model's ``extended_cache_time``, else five minutes)."""

    text: str = attrs.field(validator=attrs.validators.instance_of(str))
    cache: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))
    ttl: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(("5m", "1h")))
    )


#: Claude models that continue a turn of their own (a "prefill"); from Claude 4.6 on
#: they refuse to, and ``append_trailing_user_message`` defaults to on.
PREFILL_PREFIXES = (
    "claude-3-",
    *(f"claude-{family}-4-{minor}" for family in ("sonnet", "opus", "haiku") for minor in "0125"),
)
PREFILL_ALIASES = frozenset({"claude-sonnet-4", "claude-opus-4", "claude-haiku-4"})


def supports_prefill(model_id: str) -> bool:
    """Whether ``model_id`` (Anthropic's id, or a gateway's spelling of it: ``anthropic/``,
    ``us.anthropic.``, ``@date``, ``-v1:0``) continues a turn of its own; an id that is not
    a Claude's does."""
    core = model_id.rsplit("/", 1)[-1].split("anthropic.")[-1].split("@")[0]
    if ":" in core:
        core = core.split("-v")[0] if "-v" in core else core.split(":")[0]
    if not core.startswith("claude"):
        return True
    return core in PREFILL_ALIASES or core.startswith(PREFILL_PREFIXES)


class ClaudeParams(ModelParams, total=False):
    name: str | None
    max_tokens: int | None
    thinking: dict[str, Any] | None
    output_config: dict[str, Any] | None
    temperature: float | None
    stop_sequences: list[str] | None
    top_p: float | None
    top_k: int | None
    cache_system_prompt: bool
    extended_cache_time: bool
    cache_tools: bool
    system_prompt_blocks: list[SystemPromptBlock] | Callable[[], list[SystemPromptBlock]] | None
    request_params: dict[str, Any] | None
    betas: list[str] | None
    context_management: dict[str, Any] | None
    mcp_servers: list[Any] | None
    skills: list[Any] | None
    citations: bool
    append_trailing_user_message: bool | None
    trailing_user_message_content: str
    api_key: str | None
    default_headers: dict[str, str] | None
    timeout: float | None
    http_client: Any
    client_params: dict[str, Any] | None
    client: Any
    async_client: Any
    #: ferrule's own.
    base_url: str | None
    reasoning_effort: ReasoningEffort | None
    max_retries: int | None
    options: dict[str, Any] | None


CLAUDE_PARAMS: tuple[AgnoParam, ...] = model_params(
    {"name": "Claude", "provider": "Anthropic"},
    (
        AgnoParam("max_tokens", 8192),
        AgnoParam("thinking"),
        AgnoParam("output_config"),
        AgnoParam("temperature"),
        AgnoParam("stop_sequences"),
        AgnoParam("top_p"),
        AgnoParam("top_k"),
        AgnoParam("cache_system_prompt", False),
        AgnoParam("extended_cache_time", False),
        AgnoParam("cache_tools", False),
        AgnoParam("system_prompt_blocks"),
        AgnoParam("request_params"),
        AgnoParam("betas"),
        AgnoParam("context_management"),
        declined(
            "mcp_servers",
            "Anthropic's MCP connector is not used: give the agent ferrule.mcp.MCPServer tools",
        ),
        declined("skills", "Anthropic's hosted Agent Skills are not used"),
        declined("citations", "ferrule-anthropic does not read citations from replies", True),
        AgnoParam("append_trailing_user_message"),
        AgnoParam("trailing_user_message_content", "continue"),
        AgnoParam("api_key"),
        AgnoParam("default_headers"),
        AgnoParam("timeout"),
        declined("http_client", CLIENT_NOTE),
        declined("client_params", CLIENT_NOTE),
        declined("client", CLIENT_NOTE),
        declined("async_client", CLIENT_NOTE),
        AgnoParam("base_url"),
        AgnoParam("reasoning_effort"),
        AgnoParam("max_retries"),
        AgnoParam("options"),
    ),
)


def _thinking_on(thinking: dict[str, Any] | None) -> bool:
    if thinking is None:
        return False
    kind = thinking.get("type")
    if kind not in ("enabled", "disabled", "adaptive"):
        raise InvalidInputError(
            f"type must be 'enabled', 'adaptive' or 'disabled'; got {kind!r}", field="thinking"
        )
    return kind != "disabled"


def _trailing_user_message(model_id: str, values: dict[str, Any]) -> str | None:
    """The text added after a conversation ending with the model's turn (None: none):
    ``append_trailing_user_message``, by default on for the models that refuse a prefill
    (the value decided is kept, as Agno's is)."""
    append = values["append_trailing_user_message"]
    if append is None:
        append = values["append_trailing_user_message"] = not supports_prefill(model_id)
    if not isinstance(append, bool):
        raise InvalidInputError(
            f"must be True, False or None; got {append!r}", field="append_trailing_user_message"
        )
    content = values["trailing_user_message_content"]
    if not isinstance(content, str) or not content:
        raise InvalidInputError(
            f"must be a non-empty string (Anthropic refuses an empty text); got {content!r}",
            field="trailing_user_message_content",
        )
    return content if append else None


def _checked_blocks(blocks: Any) -> list[SystemPromptBlock]:
    if not isinstance(blocks, list | tuple):
        raise InvalidInputError(
            f"must be a list of SystemPromptBlock, or a function answering one; got "
            f"{type(blocks).__name__}",
            field="system_prompt_blocks",
        )
    for index, block in enumerate(blocks):
        if not isinstance(block, SystemPromptBlock):
            raise InvalidInputError(
                f"must be a SystemPromptBlock; got {type(block).__name__}",
                field=f"system_prompt_blocks[{index}]",
            )
    return list(blocks)


@attrs.frozen(init=False)
class Claude(APIModel, Model):
    """``Claude(id="claude-sonnet-4-20250514", max_tokens=1024, temperature=0.3)``."""

    AGNO_PARAMS = CLAUDE_PARAMS
    #: Claude models that cannot think, and that have no native structured output.
    NON_THINKING_MODELS = frozenset(
        {"claude-3-haiku-20240307", "claude-3-5-haiku-20241022", "claude-3-5-haiku-latest"}
    )
    NON_STRUCTURED_OUTPUT_PREFIXES = ("claude-3-",)
    NON_STRUCTURED_OUTPUT_ALIASES = frozenset(
        {
            "claude-sonnet-4-20250514",
            "claude-sonnet-4",
            "claude-sonnet-4-0",
            "claude-opus-4-20250514",
            "claude-opus-4",
            "claude-opus-4-0",
        }
    )

    def __init__(
        self, id: str = "claude-sonnet-4-5-20250929", **params: Unpack[ClaudeParams]
    ) -> None:
        values = agno_values(type(self), CLAUDE_PARAMS, dict(params))
        if self.supports_structured_outputs(id):  # as Agno's Claude marks the ones that do
            values["supports_native_structured_outputs"] = True
        if values["thinking"] and id in self.NON_THINKING_MODELS:
            raise InvalidInputError(f"{id} does not think: drop thinking=", field="thinking")
        sampling = Sampling(
            temperature=values["temperature"],
            top_p=values["top_p"],
            max_tokens=values["max_tokens"],
            stop=values["stop_sequences"],
            reasoning_effort=values["reasoning_effort"],
            reasoning=_thinking_on(values["thinking"]),
        )
        infer_options = sampling.infer_options()
        if values["cache_system_prompt"] or values["cache_tools"]:
            infer_options["prompt_cache"] = {"ttl": "1h" if values["extended_cache_time"] else "5m"}
        attributes = client_attributes(
            dict(values["options"] or {}),
            timeout=values["timeout"],
            max_retries=values["max_retries"],
        )
        if values["max_tokens"] is not None:
            attributes["max_tokens"] = values["max_tokens"]
        extra = {
            **({"top_k": values["top_k"]} if values["top_k"] is not None else {}),
            **{
                name: values[name]
                for name in ("context_management", "output_config")
                if values[name] is not None
            },
            **(values["request_params"] or {}),
        }
        if extra:
            attributes["extra_body"] = {**attributes.get("extra_body", {}), **extra}
        trailing = _trailing_user_message(id, values)
        if trailing is not None:
            attributes["trailing_user_message"] = trailing
        blocks = values["system_prompt_blocks"]
        if not (blocks is None or callable(blocks)):
            _checked_blocks(blocks)
        headers = dict(values["default_headers"] or {})
        if values["betas"]:
            headers["anthropic-beta"] = ",".join(values["betas"])
        if headers:
            attributes["extra_headers"] = headers
        attributes.update(retry_attributes(values))
        self.__attrs_init__(
            id,
            values["provider"],
            values["api_key"],
            values["base_url"],
            attributes,
            infer_options=infer_options,
            route_provider="anthropic",
            agno_settings=values,
        )

    @classmethod
    def supports_structured_outputs(cls, model_id: str) -> bool:
        """Whether Anthropic's structured output (``output_config.format``) serves
        ``model_id``: every Claude but the 3.x family and the first Claude 4 releases."""
        return not (
            model_id in cls.NON_STRUCTURED_OUTPUT_ALIASES
            or model_id.startswith(cls.NON_STRUCTURED_OUTPUT_PREFIXES)
        )

    def request_inputs(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The request with ``system_prompt_blocks`` (a callable's, made now) as system
        messages after the agent's, each marked for the prompt cache as it asks; the
        agent's own marked when ``cache_system_prompt`` is on. The marks then stand for
        that setting (no whole-prompt cache unless ``cache_tools``), as in Agno."""
        given = self.agno_settings.get("system_prompt_blocks")
        blocks = _checked_blocks(given() if callable(given) else given or [])
        if not blocks:
            return inputs
        settings = self.agno_settings
        long_ttl = "1h" if settings.get("extended_cache_time") else "5m"
        messages = list(inputs["messages"])
        systems = [i for i, m in enumerate(messages) if m.get("role") == "system"]
        marks: list[dict[str, str] | None] = [None] * len(systems)
        if systems and settings.get("cache_system_prompt"):
            marks[-1] = {"ttl": long_ttl}
        at = systems[-1] + 1 if systems else 0
        messages[at:at] = [
            {"role": "system", "content": [{"type": "text", "text": block.text}]}
            for block in blocks
        ]
        marks += [{"ttl": block.ttl or long_ttl} if block.cache else None for block in blocks]
        request = {**inputs, "messages": messages, "system_cache": marks}
        if not settings.get("cache_tools"):
            request.pop("prompt_cache", None)
        return request

    def get_request_params(
        self, response_format: Any = None, tools: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The fields every request carries besides the messages."""
        request = {**self.infer_options, **self.options.get("extra_body", {})}
        if tools:
            request["tools"] = tools
        return request

    def count_tokens(  # type: ignore[override]
        self, messages: list[Any], tools: list[Any] | None = None, response_format: Any = None
    ) -> int:
        return super().count_tokens(messages, tools, response_format)

    async def acount_tokens(  # type: ignore[override]
        self, messages: list[Any], tools: list[Any] | None = None, response_format: Any = None
    ) -> int:
        return await super().acount_tokens(messages, tools, response_format)

    def get_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")

    def get_async_client(self) -> Any:
        raise InvalidInputError(f"get_client: {CLIENT_NOTE}", field="client")


Claude.__init__.__signature__ = agno_signature(CLAUDE_PARAMS, "claude-sonnet-4-5-20250929")  # type: ignore[attr-defined]
