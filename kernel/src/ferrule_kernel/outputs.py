"""Output checking: what a plugin produced, as JSON that can cross the network (an object,
or a JSON value of the type its description declares).

An output that is not JSON (NaN, an arbitrary object) or does not match the type a
description declares is an `InvalidOutputError` naming the field, in-process as over
``ferrule serve``; `check_output` is run on every result and every streamed item.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from .errors import InvalidInputError, InvalidOutputError
from .validation import default_converter, key_path, structure_input, type_name


def invalid_output(label: str, provider: str, errors: list[dict[str, str]]) -> InvalidOutputError:
    summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
    return InvalidOutputError(
        f"{label} in plugin {provider!r} produced invalid output: {summary}",
        plugin=provider,
        target=label,
        errors=errors,
    )


def _json_problem(value: Any) -> tuple[list[str | int], str] | None:
    """Where ``value`` first stops being JSON — the path (innermost step first) and what is
    wrong — or None. Checked on every output, so the common case does no allocation."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return None
    if kind is float or isinstance(value, float):
        return None if math.isfinite(value) else ([], f"{value!r} is not a JSON number")
    if kind is dict:
        for key, item in value.items():
            if not isinstance(key, str):
                return [], f"key {key!r} is not a string"
            problem = _json_problem(item)
            if problem is not None:
                problem[0].append(key)
                return problem
        return None
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            problem = _json_problem(item)
            if problem is not None:
                problem[0].append(index)
                return problem
        return None
    if isinstance(value, (str, int)):  # str and int subclasses (enums) encode as themselves
        return None
    return [], f"{type_name(value)} is not a JSON value"


def _json_path(steps: list[str | int]) -> str:
    path = "$"
    for step in reversed(steps):
        path = f"{path}[{step}]" if isinstance(step, int) else key_path(path, step)
    return path


def check_output(
    value: Any,
    label: str,
    provider: str,
    conv: Any = None,
    outputs: Any = None,
) -> Any:
    """The output a plugin produced, checked: JSON, and of the declared ``outputs`` type.

    Without ``outputs`` an output is a JSON object (a dict, a mapping or an attrs instance,
    returned as a dict). With an attrs class it is also checked against that class. With any
    other type (``bool``, ``Item | None``), it may be a JSON value of that type that is not
    an object (``true``, ``null``), checked by structuring it as that type. What cannot
    cross the network (NaN, an arbitrary object) or does not match is an
    `InvalidOutputError` naming the field, in-process as over `ferrule serve`."""
    if type(value) is dict:
        out = value
    elif attrs.has(type(value)):
        out = (conv or default_converter()).unstructure(value)
    elif isinstance(value, Mapping):
        out = dict(value)
    elif outputs is not None and not attrs.has(outputs):
        out = value  # a JSON value the description declares, checked below
    else:
        message = f"expected an object, got {type_name(value)}"
        raise invalid_output(label, provider, [{"path": "$", "message": message}])
    if outputs is not None and not (attrs.has(outputs) and isinstance(value, outputs)):
        try:
            structure_input(out, outputs, target=label, conv=conv)
        except InvalidInputError as exc:
            raise invalid_output(label, provider, exc.errors) from None
    try:
        problem = _json_problem(out)
    except RecursionError:
        problem = [], "nested too deeply"
    if problem is not None:
        steps, message = problem
        raise invalid_output(label, provider, [{"path": _json_path(steps), "message": message}])
    return out


__all__ = ["check_output", "invalid_output"]
