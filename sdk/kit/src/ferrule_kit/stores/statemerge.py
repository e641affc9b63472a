"""Session-state merging: re-applying one writer's change to a state another writer changed.

A run reads its session's state (``base``), changes it (``mine``) and writes it back with a
compare-and-set (`ferrule_kit.stores.storage.AppendRunInput.state_version`). When another writer
got there first (``theirs``), `merge_state` re-applies the run's change to their state,
key by key, so neither writer's change is lost: what the run left alone keeps their value,
what it changed takes its value, and a list it appended to gets its new items appended to
their list (two processes appending to one list keep every item).
"""

from __future__ import annotations

from typing import Any

__all__ = ["merge_state"]

_MISSING: Any = object()


def merge_state(
    base: dict[str, Any], mine: dict[str, Any], theirs: dict[str, Any]
) -> dict[str, Any]:
    """``theirs`` with the change from ``base`` to ``mine`` re-applied (none is modified).

    Per key, recursively through objects: unchanged by ``mine`` → their value; removed by
    ``mine`` → removed, unless they changed it too; a list ``mine`` extended → their list
    plus the items ``mine`` appended; any other change → ``mine``'s value (the change being
    re-applied is the later one).
    """
    merged: dict[str, Any] = _merge(base, mine, theirs)
    return merged


def _merge(base: Any, mine: Any, theirs: Any) -> Any:
    if mine == base and type(mine) is type(base):
        return theirs
    if theirs == base and type(theirs) is type(base):
        return mine
    if isinstance(mine, dict) and isinstance(theirs, dict):
        return _merge_objects({} if base is _MISSING else base, mine, theirs)
    if isinstance(mine, list) and isinstance(theirs, list):
        start = [] if base is _MISSING else base
        if isinstance(start, list) and mine[: len(start)] == start:
            return [*theirs, *mine[len(start) :]]
    return mine


def _merge_objects(base: Any, mine: dict[str, Any], theirs: dict[str, Any]) -> Any:
    if not isinstance(base, dict):
        return mine  # mine replaced a value by an object: re-applied as it is
    merged = dict(theirs)
    for key in [*base, *(k for k in mine if k not in base)]:
        was, now = base.get(key, _MISSING), mine.get(key, _MISSING)
        other = theirs.get(key, _MISSING)
        if now is _MISSING:
            if other is not _MISSING and other == was:  # removed, and they kept it as it was
                del merged[key]
            continue
        value = _merge(was, now, other)
        if value is _MISSING:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged
