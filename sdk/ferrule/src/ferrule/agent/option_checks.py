"""The checks of the Agent's options (`settings`' groups use them as attrs validators):
each refuses a bad value with `InvalidInputError` naming the option
(``field="tool_call_limit"``). ``from . import option_checks as check``, then
``attrs.field(default=False, validator=check.flag)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

from .hooks import check_hooks
from .model_requests import named_tool

Check = Callable[[Any, "attrs.Attribute[Any]", Any], None]


def refuse(attribute: attrs.Attribute[Any], what: str, value: Any) -> InvalidInputError:
    return InvalidInputError(
        f"{attribute.name} must be {what}, got {type(value).__name__}", field=attribute.name
    )


def optional(kind: type | tuple[type, ...], what: str) -> Check:
    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None and not isinstance(value, kind):
            raise refuse(attribute, what, value)

    return check


def flag(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise refuse(attribute, "True or False", value)


def count(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or a whole number not below zero."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise refuse(attribute, "a whole number", value)
    if value < 0:
        raise InvalidInputError("must not be negative", field=attribute.name)


def seconds(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refuse(attribute, "a number of seconds", value)
    if value <= 0:
        raise InvalidInputError("must be more than 0 seconds", field=attribute.name)


def delay(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A number of seconds, 0 or more (a wait between tries)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refuse(attribute, "a number of seconds", value)
    if value < 0:
        raise InvalidInputError("must not be negative", field=attribute.name)


def tool_choice(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, ``"auto"``, ``"none"``, ``"required"``, or a named tool (`named_tool`)."""
    if value is None or value in ("auto", "none", "required") or named_tool(value):
        return
    raise InvalidInputError(
        "tool_choice must be 'auto', 'none', 'required' or a tool named as "
        "{'type': 'function', 'function': {'name': ...}} (or {'type': 'function', 'name': ...},"
        f" {{'type': 'tool', 'name': ...}}), got {value!r}",
        field=attribute.name,
    )


def event_names(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or a list of events' names (`RunEvent` members, or their values)."""
    from .events import RUN_EVENT_TYPE_REGISTRY

    if value is None:
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise refuse(attribute, "a list of RunEvent", value)
    for index, name in enumerate(value):
        name = getattr(name, "value", name)
        if name not in RUN_EVENT_TYPE_REGISTRY:
            raise InvalidInputError(
                f"{name!r} is no event; one of: {', '.join(sorted(RUN_EVENT_TYPE_REGISTRY))}",
                field=f"{attribute.name}[{index}]",
            )


def instructions(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None or isinstance(value, str) or callable(value):
        return
    if isinstance(value, Sequence) and all(isinstance(line, str) for line in value):
        return
    raise refuse(attribute, "a string, a list of strings or a function", value)


def db(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str) and not hasattr(value, "component_type"):
        raise InvalidInputError(
            f"db must be a SqliteDb, a PostgresDb or a storage component's name, got {value!r}",
            field=attribute.name,
        )


def reasoning(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, (bool, str)):
        raise refuse(attribute, "True, False or an effort level such as 'high'", value)


def hooks(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    check_hooks(value, attribute.name)


def text_or_function(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, a string, a function making one, or an Agno `Message` (its role and text)."""
    message = hasattr(value, "role") and isinstance(getattr(value, "content", None), str)
    if value is not None and not isinstance(value, str) and not callable(value) and not message:
        raise refuse(attribute, "a string, a function or a Message", value)


def function(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not callable(value):
        raise refuse(attribute, "a function", value)


def timezone(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or an IANA time zone name the system knows (``"Europe/Paris"``)."""
    if value is None:
        return
    if not isinstance(value, str):
        raise refuse(attribute, "an IANA time zone name", value)
    import zoneinfo  # only when a zone is named

    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise InvalidInputError(
            f"not a time zone this system knows: {value!r}", field=attribute.name
        ) from None


text = optional(str, "a string")
state = optional(dict, "a dict")
mapping = optional(dict, "a dict")


def knowledge_filters(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, a dict of metadata filters, or a list of `ferrule.filters` expressions."""
    from ..filters import FilterExpr

    if value is None or isinstance(value, dict):
        return
    if isinstance(value, list) and all(isinstance(item, FilterExpr) for item in value):
        return
    raise refuse(attribute, "a dict of metadata filters or a list of filter expressions", value)


def role_in(*roles: str) -> Check:
    """One of ``roles`` (a message's role)."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in roles:
            raise InvalidInputError(
                f"{attribute.name} must be one of {', '.join(map(repr, roles))}, got {value!r}",
                field=attribute.name,
            )

    return check


def one_of(*choices: Any) -> Check:
    """One of ``choices``."""

    def check(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in choices:
            raise InvalidInputError(
                f"{attribute.name} must be one of {', '.join(map(repr, choices))}, got {value!r}",
                field=attribute.name,
            )

    return check


def checkpoint(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value == "tools":  # Agno 2.x refuses it too (NotImplementedError): Agno 3.0's
        raise InvalidInputError(
            'checkpoint="tools" (a write after each tool call) is reserved for Agno 3.0: '
            'use "tool-batch"',
            field=attribute.name,
        )
    if value not in (None, "runs", "tool-batch"):
        raise InvalidInputError(
            f'checkpoint must be "runs", "tool-batch" or None, got {value!r}',
            field=attribute.name,
        )


def input_schema(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or a class a run's input is validated as: a pydantic model, a TypedDict or an
    attrs class."""
    import typing

    if value is None:
        return
    if isinstance(value, type) and (
        hasattr(value, "model_validate") or typing.is_typeddict(value) or attrs.has(value)
    ):
        return
    raise refuse(attribute, "a pydantic model, a TypedDict or an attrs class", value)


def messages(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None, or a list of messages: strings, message dicts, Agno `Message`s, ferrule's."""
    if value is None:
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise refuse(attribute, "a list of messages", value)


maybe_flag = optional(bool, "True or False")


def no_telemetry(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """False: ferrule reports nothing to anyone (Agno's ``telemetry=True`` is refused)."""
    flag(_, attribute, value)
    if value:
        raise InvalidInputError(
            "ferrule sends no telemetry: leave telemetry unset or False", field=attribute.name
        )


def no_skills(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """None: Agno's Agent Skills (folders of instructions, references and scripts loaded
    on demand) are not ferrule's."""
    if value is not None:
        raise InvalidInputError(
            "ferrule has no Agent Skills: give a skill's instructions as `instructions`"
            " (or `additional_context`) and its scripts as tools (a function, a Toolkit,"
            " or ferrule's shell toolkit under the host's allow-list)",
            field=attribute.name,
        )


def references_format(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """``"json"`` or ``"yaml"`` (which needs PyYAML)."""
    one_of("json", "yaml")(_, attribute, value)
    if value == "yaml":
        try:
            import yaml  # noqa: F401  (only checked: the references are written with it)
        except ImportError:
            raise ImportError(
                "references_format='yaml' writes the references with PyYAML: pip install pyyaml"
            ) from None
