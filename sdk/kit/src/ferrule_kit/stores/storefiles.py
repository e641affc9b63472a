"""Store files: where embedded stores (SQLite files, ...) keep their files, named safely.

A request names a store file, never a path: `store_file` checks such a name and
`resolve_store_file` finds it under the host's storage directory (`storage_root`), refusing
one that a symlink leads outside it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError

__all__ = ["STORAGE_DIR_ENV", "resolve_store_file", "storage_root", "store_file"]

#: The host's storage directory; embedded stores (SQLite files, ...) live under it.
STORAGE_DIR_ENV = "FERRULE_STORAGE_DIR"
_STORE_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*")


def storage_root() -> Path:
    """The directory embedded stores keep their files in: ``$FERRULE_STORAGE_DIR``, else
    ``$XDG_DATA_HOME/ferrule`` (``~/.local/share/ferrule``)."""
    configured = os.environ.get(STORAGE_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "ferrule"


def store_file(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An attrs validator for a store file's name, relative to `storage_root`.

    A request names a store file, never a path: a name from the wire must not reach a
    file outside the host's storage directory. So a name is relative, made of
    ``[A-Za-z0-9._-]`` path segments that do not start with a dot (no ``..``, no hidden
    files, no ``file:`` URI, no ``:memory:``).
    """
    if value is not None and not _STORE_FILE.fullmatch(value):
        raise InvalidInputError(
            "must be a file name relative to the storage directory: path segments of "
            "letters, digits, '.', '_' and '-', not starting with '.'",
            field=f"$.{attribute.name}",
        )


def resolve_store_file(name: str, field: str, root: Path | None = None) -> Path:
    """The path of store file ``name`` (checked by `store_file`) under ``root`` (default
    `storage_root`); refused (naming ``field``) if a symlink leads it outside ``root``."""
    base = (root or storage_root()).resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base):
        raise InvalidInputError(
            "leads outside the storage directory (through a symlink)", field=field
        )
    return path
