"""Output checking: what a plugin produced, as a JSON object that can cross the network.

An output that is not JSON (NaN, an arbitrary object) or does not match the class a
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
    outputs: type | None = None,
    any_value: bool = False,
) -> dict[str, Any]:
    """The output a plugin produced, as a JSON object, checked: what cannot cross the
    network (NaN, an arbitrary object) or does not match the declared ``outputs`` class
    is an `InvalidOutputError` naming the field, in-process as over `ferrule serve`.
    With ``any_value`` (`MethodSpec.value_output`) a JSON value that is not an object
    (``true``, ``null``, a list) is an output too, returned as it is."""
    if type(value) is dict:
        out = value
    elif any_value and not attrs.has(type(value)) and not isinstance(value, Mapping):
        out = value
    elif attrs.has(type(value)):
        out = (conv or default_converter()).unstructure(value)
    elif isinstance(value, Mapping):
        out = dict(value)
    else:
        message = f"expected an object, got {type_name(value)}"
        raise invalid_output(label, provider, [{"path": "$", "message": message}])
    if outputs is not None and type(out) is dict and not isinstance(value, outputs):
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
