"""The entry points of installed plugins, and the discovery cache that finds them without
importing importlib.metadata at every start.

Scanning the installed distributions needs importlib.metadata, which costs more to import
than the rest of a cold start; listing the sys.path folders' metadata folders and reading
the few ``entry_points.txt`` files costs a fraction of it. So the entry points found are
cached in one JSON file per environment and group, with the key of what is installed and
the provider index (`provider_index`).

The cache is a cache: a file read up to `MAX_CACHE_BYTES`, used only when it holds the
current key, has the shape this module writes, and lists exactly the entry points the
installed distributions declare (read from their ``entry_points.txt``). Anything else
(truncated, garbage, records of the wrong shape, a planted list) is logged once
(``discovery_cache_ignored``) and rebuilt from a scan; it never stops a start.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import zlib
from typing import Any

import attrs

from .log import get_logger

log = get_logger("ferrule.discovery")

__all__ = [
    "MAX_CACHE_BYTES",
    "EntryPointRecord",
    "cache_file",
    "find_entry_points",
    "provider_index",
    "save_provider_index",
]


@attrs.frozen
class EntryPointRecord:
    name: str
    value: str
    distribution: str | None
    version: str | None

    def load(self) -> Any:
        module_name, _, attr_path = self.value.partition(":")
        obj: Any = importlib.import_module(module_name.strip())
        for attr in filter(None, attr_path.strip().split(".")):
            obj = getattr(obj, attr)
        return obj


def _scan_entry_points(group: str) -> list[EntryPointRecord]:
    from importlib import metadata

    seen: set[tuple[str, str]] = set()
    found = []
    for ep in metadata.entry_points(group=group):
        key = (ep.name, ep.value)
        if key in seen:  # the same distribution can be visible twice on sys.path
            continue
        seen.add(key)
        dist = getattr(ep, "dist", None)
        found.append(
            EntryPointRecord(
                ep.name,
                ep.value,
                dist.metadata["Name"] if dist is not None else None,
                dist.version if dist is not None else None,
            )
        )
    return found


def _metadata_stamp(entry: str) -> tuple[str, int, list[str]]:
    """What identifies the distributions installed in one sys.path entry, the mtime that
    goes with it (0: none) and their metadata folders: the names of its ``*.dist-info`` /
    ``*.egg-info`` folders (a name holds the version) and, where there are some, the
    entry's own mtime, which installing, upgrading or reinstalling any distribution
    changes; a zip file's mtime. One ``stat`` and one listing per entry, no ``stat`` per
    distribution: this runs at every cold start. A folder with no distributions (a
    project's, a package's source) is named only: editing files there is no reason to scan
    again."""
    try:
        with os.scandir(entry or ".") as scan:
            names = sorted(e.name for e in scan if e.name.endswith((".dist-info", ".egg-info")))
        if not names:
            return "", 0, []
        mtime = os.stat(entry or ".").st_mtime_ns
        return f"{mtime}:{','.join(names)}", mtime, names
    except NotADirectoryError:
        try:
            mtime = os.stat(entry).st_mtime_ns
        except OSError:
            return "-", 0, []
        return str(mtime), mtime, []
    except OSError:
        return "-", 0, []


#: A folder changed this recently may change again within its file system's timestamp
#: granularity (a few ms) without a new mtime: a key holding it is not cached (git's
#: "racy" index rule), so a distribution installed just then is never missed.
_RACY_NS = 2_000_000_000


@attrs.frozen
class _Installed:
    """The installed distributions as seen from ``sys.path``: the cache's key, whether it
    is safe to cache (no folder changed in the last two seconds), and each metadata folder
    (its path), for checking a cache file against what is installed."""

    key: str
    cacheable: bool
    folders: list[str]


def _installed(group: str) -> _Installed:
    parts = [sys.version, group]
    folders: list[str] = []
    newest = 0
    for entry in sys.path:
        stamp, mtime, names = _metadata_stamp(entry)
        if stamp:  # an entry holding no distribution adds none: a script's own folder,
            parts.append(f"{entry}:{stamp}")  # the current one, a package's source
        folders += [os.path.join(entry or ".", name) for name in names]
        newest = max(newest, mtime)
    return _Installed("\0".join(parts), time.time_ns() - newest > _RACY_NS, folders)


def cache_file(group: str) -> str:
    """One file per environment and group, overwritten when the key changes (so
    installs and upgrades do not pile files up). The key leaves out the folders holding
    no distribution, so programs started from different folders share it."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = zlib.crc32(f"{sys.prefix}\0{sys.executable}\0{group}".encode())
    return os.path.join(base, "ferrule", f"entry-points-{name:08x}.json")


#: What a cache file read found, by group: its key and the provider index stored with the
#: entry points (`provider_index`), for `save_provider_index` to compare and write.
_READ: dict[str, tuple[str, dict[tuple[str, str], str]]] = {}
#: The largest cache file read: a real one is a few KiB; anything larger is damage.
MAX_CACHE_BYTES = 1 << 20
_CACHE_FORMAT = 1


def _cache_enabled() -> bool:
    return os.environ.get("FERRULE_DISCOVERY_CACHE", "1") not in ("0", "false", "no")


def _write_cache(path: str, key: str, records: list[EntryPointRecord], index: Any) -> None:
    import json

    document = {
        "format": _CACHE_FORMAT,
        "key": key,
        "entry_points": [[r.name, r.value, r.distribution, r.version] for r in records],
        "index": [[kind, name, plugin] for (kind, name), plugin in sorted(index.items())],
    }
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(document, f, ensure_ascii=False, separators=(",", ":"))
        os.replace(tmp, path)
    except OSError:  # a read-only home is fine: we just scan every time
        pass


class _Damaged(Exception):
    """A cache file that is not one this module wrote for what is installed now."""


def _declared(folders: list[str], group: str) -> set[tuple[str, str]]:
    """The ``(name, value)`` entry points of ``group`` that the metadata ``folders``
    declare, read from their ``entry_points.txt`` as importlib.metadata reads it (a small
    file a distribution with entry points has; most have none)."""
    declared: set[tuple[str, str]] = set()
    for folder in folders:
        try:
            with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as f:
                text = f.read(MAX_CACHE_BYTES)
        except (OSError, UnicodeDecodeError):
            continue
        if f"[{group}]" not in text.replace(" ", ""):  # most declare other groups only
            continue
        section = None
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
            elif section == group and "=" in line:
                name, _, value = line.partition("=")
                declared.add((name.strip(), value.strip()))
    return declared


def _strings(row: Any, size: int, optional: int, what: str) -> list[Any]:
    """``row`` as a list of ``size`` strings, the last ``optional`` of which may be null."""
    if not isinstance(row, list) or len(row) != size:
        raise _Damaged(f"{what} is not a list of {size}")
    for index, value in enumerate(row):
        if not (isinstance(value, str) or (value is None and index >= size - optional)):
            raise _Damaged(f"{what} holds a {type(value).__name__}")
    return row


def _parse_cache(
    data: bytes, installed: _Installed, group: str
) -> tuple[list[EntryPointRecord], dict[tuple[str, str], str]] | None:
    """The records and provider index of a cache file's ``data``; None when it was written
    for other installed distributions (a miss); `_Damaged` when it is not a cache file of
    ours, or its records are not what the installed distributions declare."""
    import json

    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Damaged(f"not JSON ({type(exc).__name__})") from None
    if not isinstance(document, dict) or document.get("format") != _CACHE_FORMAT:
        raise _Damaged("not a cache file of this format")
    if document.get("key") != installed.key:
        return None
    rows, index_rows = document.get("entry_points"), document.get("index")
    if not isinstance(rows, list) or not isinstance(index_rows, list):
        raise _Damaged("entry_points or index is not a list")
    records = [EntryPointRecord(*_strings(r, 4, 2, "an entry point")) for r in rows]
    index = {(k, n): p for k, n, p in (_strings(r, 3, 0, "an index entry") for r in index_rows)}
    if {(r.name, r.value) for r in records} != _declared(installed.folders, group):
        raise _Damaged("its entry points are not those the installed distributions declare")
    return records, index


def _read_cache(
    path: str, installed: _Installed, group: str
) -> tuple[list[EntryPointRecord], dict[tuple[str, str], str]] | None:
    """The cached records and index for ``installed``, or None: no file, a file for other
    distributions, or a damaged one (logged, then rebuilt by the caller)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CACHE_BYTES + 1)
    except OSError:
        return None
    try:
        if len(data) > MAX_CACHE_BYTES:
            raise _Damaged(f"larger than {MAX_CACHE_BYTES} bytes")
        return _parse_cache(data, installed, group)
    except _Damaged as exc:
        log.warning("discovery_cache_ignored", path=path, reason=str(exc))
        return None


def find_entry_points(group: str) -> list[EntryPointRecord]:
    """The entry points of ``group``, from the discovery cache when the installed
    distributions are unchanged (``FERRULE_DISCOVERY_CACHE=0`` turns the cache off); a
    damaged cache is logged, then rebuilt (see the module's docstring)."""
    _READ.pop(group, None)
    if not _cache_enabled():
        return _scan_entry_points(group)
    installed = _installed(group)
    path = cache_file(group)
    cached = _read_cache(path, installed, group)
    if cached is not None:
        records, index = cached
        _READ[group] = (installed.key, index)
        return records
    found = _scan_entry_points(group)
    if installed.cacheable:
        _write_cache(path, installed.key, found, {})
        _READ[group] = (installed.key, {})
    return found


def provider_index(group: str) -> dict[tuple[str, str], str]:
    """Which entry point provided each name (``("operator", name)`` or
    ``("component_type", name_or_alias)`` -> entry-point name) when the plugins of the
    same installed distributions were last all loaded, as `find_entry_points` last read it
    from the cache; empty without one.

    A hint, never the answer: a `Kernel` asked for a name it holds imports that one plugin
    only, and still takes the description from the plugin's own hook.
    """
    read = _READ.get(group)
    return read[1] if read is not None else {}


def save_provider_index(
    group: str, records: list[EntryPointRecord], index: dict[tuple[str, str], str]
) -> None:
    """Store ``index`` (see `provider_index`) beside the entry points ``records`` that
    `find_entry_points` read or cached for the current key; nothing when it holds this
    index already, or when nothing was cached (the cache off, a folder changed just now)."""
    read = _READ.get(group)
    if read is None or read[1] == index:
        return
    key = read[0]
    _write_cache(cache_file(group), key, records, index)
    _READ[group] = (key, index)
