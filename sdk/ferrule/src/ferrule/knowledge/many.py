"""The arguments of `Knowledge.insert_many` (Agno's two forms: a list of dicts of
``insert``'s arguments, or ``paths`` / ``urls`` / ``text_contents`` with arguments for all),
as the contents to read, grouped by what becomes of stored documents; `ContentDict`, one
dict of the list; `KnowledgeContentOrigin`, where a content came from."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = ["CONTENT_KEYS", "ContentDict", "KnowledgeContentOrigin", "contents_of"]

#: One content of `Knowledge.insert_many`'s list: `Knowledge.insert`'s arguments by name.
ContentDict = dict[str, str | dict[str, str]]


class KnowledgeContentOrigin(enum.Enum):
    """Where a content came from."""

    PATH = "path"
    URL = "url"
    TOPIC = "topic"
    CONTENT = "content"


#: What one dict of the list may say.
CONTENT_KEYS = (
    "name",
    "description",
    "path",
    "url",
    "text_content",
    "metadata",
    "topics",
    "remote_content",
    "reader",
    "include",
    "exclude",
    "upsert",
    "skip_if_exists",
    "auth",
)
_LISTS = (("paths", "path"), ("urls", "url"), ("text_contents", "text_content"))
#: What the keyword form may say besides its lists: a content's keys but its source.
SHARED_KEYS = tuple(k for k in CONTENT_KEYS if k not in {one for _, one in _LISTS})

#: (upsert, skip_if_exists) -> [(where, `Knowledge.insert` arguments)]
Grouped = dict[tuple[bool, bool], list[tuple[str, dict[str, Any]]]]


def contents_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Grouped:
    """The contents ``insert_many(*args, **kwargs)`` names, each with the prefix its
    errors' fields get (``contents[2].``), by (upsert, skip_if_exists): the list's (each
    dict's own ``upsert`` / ``skip_if_exists`` first), then the keyword lists'."""
    grouped: Grouped = {}
    if len(args) > 1:
        raise InvalidInputError("give one list of contents", field="contents")
    contents = args[0] if args else kwargs.pop("contents", None)
    shared = {k: kwargs.pop(k) for k in SHARED_KEYS if k in kwargs}
    lists = {plural: kwargs.pop(plural, None) or [] for plural, _ in _LISTS}
    _no_more(kwargs, "")
    upsert, skip = shared.pop("upsert", True), shared.pop("skip_if_exists", False)
    if contents is not None and not isinstance(contents, list):
        raise InvalidInputError(
            f"expected a list of dicts of insert's arguments, got {type(contents).__name__}",
            field="contents",
        )
    for index, content in enumerate(contents or ()):
        where = f"contents[{index}]."
        if not isinstance(content, Mapping):
            raise InvalidInputError(
                f"expected a dict of insert's arguments, got {type(content).__name__}",
                field=where.rstrip("."),
            )
        item = dict(content)
        unknown = sorted(k for k in item if k not in CONTENT_KEYS)
        if unknown:
            raise InvalidInputError(
                f"unknown argument(s) {', '.join(unknown)}", field=where.rstrip(".")
            )
        for key in ("include", "exclude"):  # the list's own, else those given for all
            item[key] = item.get(key) or shared.get(key)
        modes = (item.pop("upsert", upsert), item.pop("skip_if_exists", skip))
        grouped.setdefault(modes, []).append((where, _arguments(item)))
    name = shared.pop("name", None)
    for plural, singular in _LISTS:
        values = lists[plural]
        if isinstance(values, str) or not isinstance(values, list | tuple):
            raise InvalidInputError("expected a list", field=plural)
        for index, value in enumerate(values):
            item = {**shared, singular: value, "name": name}
            if singular == "text_content":  # each text its own name, as Agno names them
                item["name"] = f"{name}_{index}" if name else f"text_content_{index}"
            grouped.setdefault((upsert, skip), []).append((f"{plural}[{index}].", _arguments(item)))
    if shared.get("topics") or shared.get("remote_content"):
        grouped.setdefault((upsert, skip), []).append(("", _arguments({**shared, "name": name})))
    return grouped


def _arguments(item: dict[str, Any]) -> dict[str, Any]:
    """``item`` with every argument `ferrule.knowledge.ingest.read_content` and
    `Knowledge`'s reader choice take (None when not given)."""
    keys = [k for k in CONTENT_KEYS if k not in ("upsert", "skip_if_exists")]
    return {key: item.get(key) for key in keys}


def _no_more(extra: dict[str, Any], where: str) -> None:
    if extra:
        names = ", ".join(sorted(extra))
        raise InvalidInputError(f"unknown argument(s) {names}", field=where + sorted(extra)[0])
