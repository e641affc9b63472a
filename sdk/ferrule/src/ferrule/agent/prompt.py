"""A prompt (a string, a content part, an object a content plugin converts, or a list of
them) and the files that go with it, as the content parts of a user message.

No content plugin is named here: a part of any registered part type is taken as it is, and
any other object goes through the adapter a content plugin registered for its class
(ferrule-image: Pillow images; ferrule-document: paths). For a kind of object that no
installed plugin converts, the catalog says which plugin would.
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ferrule_kernel import InvalidInputError, field_errors
from ferrule_kit.content.messages import ContentPart, TextPart
from ferrule_kit.content.parts import class_name, registry

from ..media import Media

_WHAT = "a string, a content part or an object a content plugin converts (a Pillow image, a path)"


def _part(item: Any, field: str) -> ContentPart | None:
    """``item`` as a content part, or None when nothing installed converts it."""
    if isinstance(item, str):
        return TextPart(item)
    if isinstance(item, TextPart) or registry.is_part(item):
        return item
    if isinstance(item, Media):  # Agno's Image, Audio, File
        return item.to_part(field)
    try:
        part = registry.adapt(item)
    except InvalidInputError as exc:  # the object could not be made a part: say which one
        errors = field_errors(exc, field)
        raise InvalidInputError(f"{field}: {exc.message}", errors=errors) from None
    if part is None:
        _refuse_missing_plugin(item, field)
    elif not registry.is_part(part):
        raise InvalidInputError(
            f"the adapter for {type(item).__name__} returned {registry.describe(part)}",
            field=field,
        )
    return part


def _refuse_missing_plugin(item: Any, field: str) -> None:
    """Raise `ImportError` saying what to install when the catalog knows which content
    plugin converts objects of ``item``'s class (or a base class)."""
    from ..catalog import install_hint

    for cls in type(item).__mro__:
        hint = install_hint("object", class_name(cls))
        if hint is not None:
            raise ImportError(
                f"{field}: a {type(item).__name__} is made a content part by a content "
                f"plugin that is not installed. {hint}",
                name=cls.__module__,
            )


def prompt_parts(prompt: Any, files: Sequence[Any] = ()) -> list[ContentPart]:
    """A prompt (a string, a part, an object a content plugin converts, or a list of them)
    as content parts, followed by ``files``: paths (made parts by the content plugin that
    registered an adapter for paths: ferrule-document) or parts."""
    if isinstance(prompt, str) or not isinstance(prompt, Iterable):
        items: Iterable[Any] = [prompt]
        single = True
    elif isinstance(prompt, (bytes, Mapping)):
        raise InvalidInputError(
            f"a prompt is {_WHAT}, or a list of them; got {type(prompt).__name__}", field="prompt"
        )
    else:
        items, single = prompt, False
    parts: list[ContentPart] = []
    for index, item in enumerate(items):
        field = "prompt" if single else f"prompt[{index}]"
        part = _part(item, field)
        if part is None:
            raise InvalidInputError(
                f"{field}: expected {_WHAT}, got {type(item).__name__}", field=field
            )
        parts.append(part)
    if not parts:
        raise InvalidInputError("the prompt is empty", field="prompt")
    if isinstance(files, (str, bytes, os.PathLike)):
        raise InvalidInputError(
            "files is a list of paths or content parts; got one on its own", field="files"
        )
    for index, file in enumerate(files):
        field = f"files[{index}]"
        part = _part(pathlib.Path(file) if isinstance(file, (str, os.PathLike)) else file, field)
        if part is None:
            raise InvalidInputError(
                f"{field}: expected a path or a content part, got {type(file).__name__}",
                field=field,
            )
        parts.append(part)
    return parts
