"""Paths on the server's disk that a request names (a model file, a model directory).

Code in this process may name any path: it could open the file itself. A network client
(`ferrule serve`) may name only paths under the directories the server's operator lists
in ``FERRULE_REMOTE_PATHS`` (separated by ``os.pathsep``; none by default), checked after
resolving symbolic links and ``..``, so that reaching the server is not reading its disk.
See `ferrule_kernel.trust` for who counts as which.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
from ferrule_kernel import caller_is_trusted, untrusted_refusal

#: The setting: directories under which network clients may name files.
REMOTE_PATHS_VARIABLE = "FERRULE_REMOTE_PATHS"


def remote_roots() -> list[str]:
    """The directories of ``FERRULE_REMOTE_PATHS``, resolved."""
    entries = os.environ.get(REMOTE_PATHS_VARIABLE, "").split(os.pathsep)
    return [os.path.realpath(entry) for entry in entries if entry.strip()]


def _under(path: str, root: str) -> bool:
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # another drive (Windows)
        return False


def check_server_path(value: str, field: str) -> None:
    """Refuse ``value`` at ``field`` unless the caller is trusted or ``value`` is an absolute
    path that lies, resolved, under a directory of ``FERRULE_REMOTE_PATHS``."""
    if caller_is_trusted():
        return
    if os.path.isabs(value):
        real = os.path.realpath(value)
        if any(_under(real, root) for root in remote_roots()):
            return
    # The message names neither the resolved path nor the allowed directories: it goes
    # to the client that is not allowed to learn the server's layout.
    raise untrusted_refusal(
        "names a path on the server, which a network client may do only under the "
        f"directories the server lists in {REMOTE_PATHS_VARIABLE} (as an absolute path)",
        field,
    )


def server_path(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """An attrs validator for a field that is a path on the server (None passes)."""
    if value is not None:
        check_server_path(value, attribute.name)
