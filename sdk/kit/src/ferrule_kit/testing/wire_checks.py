"""Checks that providers' fake servers share while validating a request body as their API
would (each names every problem by its path, ``contents[1].role: ...``, and lists them
all):

- `is_base64`: a field that must carry base64 (an image's bytes, a signature);
- `turns`: the conversation array, each turn an object of a role and a body only;
- `named_entry`: a tool's (or function's) declaration, of known keys and a unique name.

The rules that differ between APIs (what a turn's body holds, which roles follow which)
stay in each provider's own validator, which calls these for what is alike.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Iterator
from typing import Any

__all__ = ["is_base64", "named_entry", "turns"]


def is_base64(data: Any) -> bool:
    """``data`` is a non-empty string of strict base64."""
    if not isinstance(data, str) or not data:
        return False
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def turns(
    items: Any, field: str, body: str, roles: tuple[str, ...], out: list[str], *, hint: str = ""
) -> Iterator[tuple[int, str, str, Any]]:
    """The well-formed turns of the array ``field`` (``messages``, ``contents``) as
    ``(index, path, role, body)``: objects holding ``role`` and ``body`` only, the role one
    of ``roles``. Each other turn, or the array itself when it is missing or empty, adds
    its problem to ``out`` (the role's with ``hint`` after it)."""
    if not isinstance(items, list) or not items:
        out.append(f"{field}: required, a non-empty array")
        return
    for i, item in enumerate(items):
        where = f"{field}[{i}]"
        if not isinstance(item, dict) or set(item) - {"role", body}:
            out.append(f"{where}: must be an object with role and {body} only")
            continue
        role = item.get("role")
        if role not in roles:
            named = " or ".join(repr(r) for r in roles)
            out.append(f"{where}.role: must be {named}{hint}")
            continue
        yield i, where, role, item.get(body)


def named_entry(
    entry: Any,
    where: str,
    keys: Collection[str],
    name: re.Pattern[str],
    seen: set[Any],
    out: list[str],
    *,
    duplicate: str,
) -> bool:
    """Whether ``entry`` (a tool, a function declaration) is an object of ``keys`` at most;
    if so, its ``name`` must match ``name`` and not be in ``seen`` (it is added), else
    ``duplicate`` is its problem. Problems go to ``out``, under the path ``where``."""
    if not isinstance(entry, dict) or set(entry) - set(keys):
        out.append(f"{where}: unexpected shape")
        return False
    value = entry.get("name")
    if not isinstance(value, str) or not name.match(value):
        out.append(f"{where}.name: must match {name.pattern}")
    elif value in seen:
        out.append(f"{where}.name: {duplicate}")
    seen.add(value)
    return True
