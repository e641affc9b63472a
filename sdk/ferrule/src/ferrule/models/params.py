"""The keywords of Agno's model classes, as tables: each `AgnoParam` gives a keyword's
default and what ferrule does with it, so a class's signature, its defaults and its refusals
come from one place (`agno_signature`, `agno_values`).

`BASE_PARAMS` are every class's (Agno's `Model` fields); `model_params` adds a class's own
and its defaults. What the notes say ferrule does instead is in docs/coming-from-agno.md.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import attrs
from ferrule_kernel import InvalidInputError

from ..metrics import ModelType

__all__ = [
    "BASE_PARAMS",
    "AgnoParam",
    "ModelParams",
    "agno_signature",
    "agno_values",
    "declined",
    "model_params",
    "retry_attributes",
]

#: What ferrule says instead of the provider SDK's client objects.
CLIENT_NOTE = (
    "ferrule's provider plugin speaks the API over HTTP itself, with no SDK client: give "
    "base_url=, timeout=, max_retries= or default_headers="
)
QUERY_NOTE = "query parameters are not sent: put the setting in request_params= (the body)"
ROLE_NOTE = "the provider plugin maps each role to its API's own"


@attrs.frozen
class AgnoParam:
    """One keyword of an Agno model class: its ``default`` and what ferrule does with it.

    ``use`` is ``"keep"`` (the class or the agent reads it: `ferrule.agent.model_settings`)
    or ``"declined"`` (a value other than the default is refused, ``note`` naming
    ferrule's way)."""

    name: str
    default: Any = None
    use: str = "keep"
    note: str = ""


class ModelParams(TypedDict, total=False):
    """The keywords every model class takes besides ``id`` and ``name`` (for type checkers;
    `BASE_PARAMS` at run time)."""

    provider: str | None
    model_type: ModelType | str
    supports_native_structured_outputs: bool
    supports_json_schema_outputs: bool
    system_prompt: str | None
    instructions: list[str] | None
    tool_message_role: str
    assistant_message_role: str
    cache_response: bool
    cache_ttl: int | None
    cache_dir: str | None
    retries: int
    delay_between_retries: int | float
    exponential_backoff: bool
    retry_with_guidance: bool
    retry_with_guidance_limit: int


def declined(name: str, note: str, default: Any = None) -> AgnoParam:
    """A keyword whose values other than ``default`` are refused, ``note`` saying why."""
    return AgnoParam(name, default, "declined", note)


#: The keywords every model class takes (Agno's `Model` fields), after ``id``.
BASE_PARAMS: tuple[AgnoParam, ...] = (
    AgnoParam("name"),
    AgnoParam("provider"),
    AgnoParam("model_type", ModelType.MODEL),
    AgnoParam("supports_native_structured_outputs", False),
    AgnoParam("supports_json_schema_outputs", False),
    AgnoParam("system_prompt"),
    AgnoParam("instructions"),
    declined(
        "tool_message_role", "the provider plugin sends tool results in its API's own role", "tool"
    ),
    declined(
        "assistant_message_role",
        "the provider plugin sends the model's turns in its API's own role",
        "assistant",
    ),
    AgnoParam("cache_response", False),
    AgnoParam("cache_ttl"),
    AgnoParam("cache_dir"),
    AgnoParam("retries", 0),
    AgnoParam("delay_between_retries", 1),
    AgnoParam("exponential_backoff", False),
    AgnoParam("retry_with_guidance", True),
    AgnoParam("retry_with_guidance_limit", 1),
)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: What the settings the agent reads (`ferrule.agent.model_settings`) must be: a wrong
#: type is refused when the model is made, naming the keyword, not when a run reads it.
SETTING_CHECKS: dict[str, tuple[Any, str]] = {
    "supports_native_structured_outputs": (lambda v: isinstance(v, bool), "True or False"),
    "supports_json_schema_outputs": (lambda v: isinstance(v, bool), "True or False"),
    "system_prompt": (lambda v: v is None or isinstance(v, str), "a string"),
    "instructions": (
        lambda v: (
            v is None
            or isinstance(v, str)
            or (isinstance(v, list | tuple) and all(isinstance(i, str) for i in v))
        ),
        "a list of strings",
    ),
    "cache_response": (lambda v: isinstance(v, bool), "True or False"),
    "cache_ttl": (
        lambda v: v is None or (isinstance(v, int | float) and not isinstance(v, bool) and v >= 0),
        "a number of seconds (0 or more), or None for no expiry",
    ),
    "cache_dir": (lambda v: v is None or isinstance(v, str | os.PathLike), "a folder's path"),
    "retry_with_guidance": (lambda v: isinstance(v, bool), "True or False"),
    "retry_with_guidance_limit": (_is_count, "a whole number, 0 or more"),
}


def agno_values(
    cls: type[Any], params: Sequence[AgnoParam], given: dict[str, Any]
) -> dict[str, Any]:
    """Every keyword's value: ``given``'s, else its default. An unknown keyword is a
    `TypeError`, as for any Python call; a refused one an `InvalidInputError` naming it."""
    table = {p.name: p for p in params}
    unknown = sorted(set(given) - set(table))
    if unknown:
        raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {unknown[0]!r}")
    values = {}
    for param in params:
        value = given.get(param.name, param.default)
        if param.use == "declined" and value != param.default:
            raise InvalidInputError(f"{param.name}: {param.note}", field=param.name)
        check = SETTING_CHECKS.get(param.name)
        if check is not None and not check[0](value):
            raise InvalidInputError(f"must be {check[1]}; got {value!r}", field=param.name)
        values[param.name] = value
    return values


def agno_signature(params: Sequence[AgnoParam], id_default: Any) -> inspect.Signature:
    """The constructor's signature (``__init__``'s, ``self`` first): ``id``, then each
    keyword with its default."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    head = [inspect.Parameter("self", kind), inspect.Parameter("id", kind, default=id_default)]
    rest = [
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in params
    ]
    return inspect.Signature([*head, *rest])


def retry_attributes(values: dict[str, Any]) -> dict[str, Any]:
    """The component's retry attributes from Agno's ``retries``, ``delay_between_retries``
    and ``exponential_backoff`` (none when ``retries`` is 0: the provider's own policy)."""
    if not values.get("retries"):
        return {}
    return {
        "max_retries": int(values["retries"]),
        "retry_delay": float(values.get("delay_between_retries") or 0),
        "retry_multiplier": 2.0 if values.get("exponential_backoff") else 1.0,
    }


def model_params(
    defaults: Mapping[str, Any], own: Sequence[AgnoParam], base: Sequence[AgnoParam] = BASE_PARAMS
) -> tuple[AgnoParam, ...]:
    """A class's keywords: ``base`` (with the class's ``defaults``), then its ``own``
    (replacing a base keyword of the same name)."""
    mine = {p.name: p for p in own}
    out = [
        mine.pop(p.name)
        if p.name in mine
        else attrs.evolve(p, default=defaults.get(p.name, p.default))
        for p in base
    ]
    return (*out, *mine.values())
