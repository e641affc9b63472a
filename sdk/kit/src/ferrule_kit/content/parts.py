"""The open part-type registry: content types (images, audio, documents, ...) are plugins.

A message holds `ferrule_kit.content.messages.TextPart`s (every message needs text, so text is
built in) and parts of the types content plugins register. A content plugin answers the
hook ``ferrule_register_part_types`` with `PartType` descriptions: the part class, the
wire ``type`` values it reads, how to structure and unstructure it on ferrule's wire (the
kernel protocol stays OpenAI-shaped), and one encoder per wire dialect it supports.

A provider describes what it accepts in a `ferrule_kit.content.policy.ContentPolicy` (its dialect,
and the limits it puts on each part type: formats, size, URL or inline data) and calls
`PartRegistry.encode`: the registry checks the policy, then calls the content plugin's
encoder for that dialect. So provider plugins never import content plugins and content
plugins never import providers; a part the provider cannot take ends the request with
`UnsupportedContentError` before anything is sent.

The registry is process-wide (`registry`) because what it mirrors is: the installed
distributions and the wire converter of `ferrule_kit.content.messages`, which structures parts
wherever they arrive. It is filled from the ``ferrule`` entry points the first time a
part other than text is structured, encoded or looked up (text-only work never fills
it), and by `PartRegistry.register` for part types defined in-process. A host that
installs a distribution while running calls `PartRegistry.reload`.

This module stays cheap to import (one attrs class): the top layer imports it with every
kernel it makes, to hand the registry its install hint.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Union, cast

import attrs
from ferrule_kernel import (
    ENTRY_POINT_GROUP,
    InstallHint,
    InvalidInputError,
    PluginLoadError,
    import_target,
    type_name,
)

if TYPE_CHECKING:
    from .policy import Accepts, ContentPolicy

__all__ = [
    "ANTHROPIC",
    "GEMINI",
    "OPENAI",
    "OPENAI_COMPATIBLE",
    "TEXT",
    "PartRegistry",
    "PartType",
    "check_fields",
    "class_name",
    "data_url",
    "decoded_size",
    "lazy_attributes",
    "parse_data_url",
    "read_media_file",
    "registry",
    "required",
]

# -- wire dialects: the keys of `PartType.encoders` ----------------------------------------

#: OpenAI's Chat Completions (``image_url``, ``input_audio`` and ``file`` parts).
OPENAI = "openai"
#: Other Chat Completions servers (xAI, vLLM, Ollama, llama.cpp's server, ``ferrule serve``).
OPENAI_COMPATIBLE = "openai-compatible"
#: Anthropic's Messages API content blocks.
ANTHROPIC = "anthropic"
#: Gemini's ``Part`` objects.
GEMINI = "gemini"
#: Text for a model that reads text only (local Qwen3 and chat-template models): an
#: encoder for this dialect returns a string.
TEXT = "text"

#: A callable, or where one lives as a ``"package.module:attribute"`` string (imported on
#: first use, so a hook module stays cheap to import).
Target = Union[str, Callable[..., Any]]  # noqa: UP007 (an alias evaluated at runtime)


def _tuple(values: Any) -> tuple[str, ...]:
    # A function, not the builtin: attrs reads a converter's signature, and a builtin's
    # costs a tokenizer regex compiled on the first import of this module.
    return tuple(values)


@attrs.frozen
class PartType:
    """A content part type, as a content plugin's ``ferrule_register_part_types`` returns it.

    - ``name``: the part type's name (``"image"``); its parts' ``type`` attribute has this
      value, providers' policies and `UnsupportedContentError`'s ``content_type`` use it.
    - ``cls``: the part class (or a ``"module:Class"`` string), an attrs class whose
      instances go in `Message.contents`.
    - ``wire_types``: the wire ``type`` values it reads (``("image_url",)``).
    - ``structure(data) -> part``: a wire dict (with one of ``wire_types``) to a part;
      raises `InvalidInputError` naming the bad field relative to the part
      (``"image_url.url"``); `required` and `check_fields` help.
    - ``unstructure(part) -> dict``: the part on ferrule's wire; structuring it gives the
      part back.
    - ``encoders``: dialect (`OPENAI`, `OPENAI_COMPATIBLE`, `ANTHROPIC`, `GEMINI`, `TEXT`)
      -> ``encoder(part, encoding: ferrule_kit.content.policy.Encoding)``, the part in that
      dialect (a dict; a string for `TEXT`). A provider whose dialect has no encoder
      refuses the part.
    - ``adapters``: a class's public qualified name (``"PIL.Image.Image"``, see
      `class_name`; matched along the value's MRO without importing anything) -> a function
      turning such a value into a part, so an agent's prompt may hold the object itself.
    - ``exports``: public names (``"ImageContent"``) -> what ``from ferrule import <name>``
      gives.

    Parts that carry media may expose ``url`` (a str when the part points at a URL),
    ``media_format`` (a MIME type or format name) and ``size`` (bytes of inline data,
    decoded): the limits of a `ContentPolicy` are checked against them.
    """

    name: str
    cls: Target
    wire_types: tuple[str, ...] = attrs.field(converter=_tuple)
    structure: Target
    unstructure: Target
    encoders: Mapping[str, Target] = attrs.field(factory=dict)
    adapters: Mapping[str, Target] = attrs.field(factory=dict)
    exports: Mapping[str, Target] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if not self.name or self.name == "text":
            raise ValueError(f"a part type needs a name other than 'text', got {self.name!r}")
        if not self.wire_types or "text" in self.wire_types:
            raise ValueError(
                f"part type {self.name!r} needs wire types other than 'text', got {self.wire_types!r}"
            )


# -- helpers for content plugins ----------------------------------------------------------


_JSON_KINDS = {str: "string", dict: "object", list: "array", bool: "boolean", int: "integer"}


def required(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    """``data[key]``, refused naming ``where`` when missing or not of ``kind``: `str`,
    `dict`, `list`, `bool`, `int` or `float` (a JSON number: an int is taken too)."""
    if key not in data:
        raise InvalidInputError("required field missing", field=where)
    value = data[key]
    if kind is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
    if not ok:
        expected = _JSON_KINDS.get(kind, "number")
        raise InvalidInputError(f"expected {expected}, got {type_name(value)}", field=where)
    return value


def check_fields(
    data: Mapping[str, Any], allowed: set[str] | frozenset[str], where: str = ""
) -> None:
    """Refuse keys of ``data`` outside ``allowed``, each named (under ``where``)."""
    extra = set(data) - set(allowed)
    if extra:
        prefix = f"{where}." if where else ""
        raise InvalidInputError(
            "unknown field",
            errors=[{"path": prefix + key, "message": "unknown field"} for key in sorted(extra)],
        )


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package``'s ``__init__``, importing each of
    ``names`` (name -> submodule, relative: ``".content"``) on first access.

    Discovery imports a plugin's package on every ``Runtime()`` (its hook module lives in
    it); with ``__getattr__ = lazy_attributes(__name__, {...})`` the package's public names
    cost nothing until used.
    """
    import importlib

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module, package), name)

    return __getattr__


def class_name(cls: type) -> str:
    """A class's public qualified name, as `PartType.adapters` keys name it: its module path
    up to the first private part, then its qualified name (``pathlib.PurePath``, although
    Python 3.13 defines it in ``pathlib._local``)."""
    module = []
    for part in cls.__module__.split("."):
        if part.startswith("_"):
            break
        module.append(part)
    return ".".join([*module, cls.__qualname__])


def decoded_size(b64: str) -> int:
    """The length of what base64 text decodes to, computed from its length."""
    return len(b64) * 3 // 4 - b64[-2:].count("=")


def data_url(mime_type: str | None, b64: str) -> str:
    """A ``data:`` URL of base64 data."""
    return f"data:{mime_type or 'application/octet-stream'};base64,{b64}"


def parse_data_url(url: str, where: str) -> tuple[str | None, str]:
    """``(MIME type or None, base64 payload)`` of a base64 ``data:`` URL, refused naming
    ``where`` otherwise."""
    header, _, payload = url.partition(",")
    if not header.startswith("data:") or ";base64" not in header or not payload:
        raise InvalidInputError("data URLs must be base64", field=where)
    return header[5:].split(";")[0] or None, payload


def read_media_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """A media file's bytes, refused (naming ``path``) when unreadable or over ``max_bytes``
    — checked before reading it."""
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise InvalidInputError(
                f"{os.fspath(path)} is {size / 2**20:.1f} MiB; the limit is {max_bytes / 2**20:.0f} MiB",
                field="path",
            )
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise InvalidInputError(
            f"cannot read {os.fspath(path)!r}: {exc.strerror}", field="path"
        ) from None


def media_bytes(data: Any, what: str, max_bytes: int) -> bytes:
    """``data`` as bytes, refused (field ``data``) unless it is bytes-like, not empty and at
    most ``max_bytes``; ``what`` names it in the message (``"the image"``)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidInputError(f"expected bytes, got {type(data).__name__}", field="data")
    data = bytes(data)
    if not data:
        raise InvalidInputError(f"{what} is empty", field="data")
    if len(data) > max_bytes:
        raise InvalidInputError(
            f"{what} is {len(data) / 2**20:.1f} MiB; the limit is {max_bytes / 2**20:.0f} MiB",
            field="data",
        )
    return data


# -- the registry ------------------------------------------------------------------------


class _Entry:
    """A registered part type, where it came from, and its targets once imported."""

    __slots__ = ("_resolved", "part_type", "source")

    def __init__(self, part_type: PartType, source: str) -> None:
        self.part_type = part_type
        self.source = source  # the distribution, or "in-process"
        self._resolved: dict[str, Any] = {}

    def resolve(self, target: Target, what: str) -> Any:
        if not isinstance(target, str):
            return target
        value = self._resolved.get(target)
        if value is None:
            try:
                value = self._resolved[target] = import_target(target)
            except Exception as exc:
                raise PluginLoadError(
                    f"plugin {self.source!r} could not load {target!r} ({what} of part type "
                    f"{self.part_type.name!r}): {type(exc).__name__}: {exc}",
                    plugin=self.source,
                ) from exc
        return value

    @property
    def cls(self) -> type:
        return self.resolve(self.part_type.cls, "the class")


class PartRegistry:
    """The part types installed (see the module docstring); `registry` is the process's.

    ``install_hint`` (an `InstallHint`, handed in by the layer above, which knows the
    distributions) completes the error for a wire ``type`` nothing installed reads.
    ``problems`` maps a plugin to why its part types are missing (a failed import or hook).
    """

    def __init__(
        self,
        *,
        load_entry_points: bool = True,
        group: str = ENTRY_POINT_GROUP,
        install_hint: InstallHint | None = None,
    ) -> None:
        self.install_hint = install_hint
        self.problems: dict[str, str] = {}
        self._load_entry_points = load_entry_points
        self._group = group
        self._lock = threading.RLock()
        self._loaded = False
        self._local: list[PartType] = []  # registered in-process, kept across reloads
        self._by_name: dict[str, _Entry] = {}
        self._by_wire: dict[str, _Entry] = {}
        self._by_class: dict[type, _Entry] = {}
        self._adapters: dict[str, tuple[_Entry, Target]] = {}
        self._exports: dict[str, tuple[_Entry, Target]] = {}

    # -- filling ----------------------------------------------------------------------

    def _load(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if self._loaded:
                return
            if self._load_entry_points:
                self._load_plugins()
            for part_type in self._local:
                try:
                    self._add(part_type, "in-process")
                except ValueError as exc:  # an installed one took its name since
                    self.problems["in-process"] = str(exc)
            self._loaded = True

    def _load_plugins(self) -> None:
        from ferrule_kernel import discover_plugins

        from ferrule_kit import kit_plugin

        pm, infos = discover_plugins(self._group)
        pm.register(kit_plugin)  # adds this layer's hook specifications
        sources = {info.name: info.distribution or info.name for info in infos}
        for info in infos:
            if info.error:
                self.problems[sources[info.name]] = info.error
        for impl in pm.hook.ferrule_register_part_types.get_hookimpls():
            source = sources.get(impl.plugin_name, impl.plugin_name)
            try:
                found = cast("list[Any] | None", impl.function()) or []
                bad = [t for t in found if not isinstance(t, PartType)]
                if bad:
                    raise TypeError(f"returned {bad[0]!r}, expected PartType")
                for part_type in found:
                    self._add(part_type, source)
            except Exception as exc:
                self.problems[source] = (
                    f"ferrule_register_part_types failed: {type(exc).__name__}: {exc}"
                )

    def _add(self, part_type: PartType, source: str) -> None:
        taken = self._by_name.get(part_type.name)
        if taken is not None:
            raise ValueError(
                f"part type {part_type.name!r} is already registered by {taken.source!r}"
            )
        for wire_type in part_type.wire_types:
            if wire_type in self._by_wire:
                owner = self._by_wire[wire_type]
                raise ValueError(
                    f"wire type {wire_type!r} is already read by part type "
                    f"{owner.part_type.name!r} of {owner.source!r}"
                )
        entry = _Entry(part_type, source)
        self._by_name[part_type.name] = entry
        self._by_wire.update(dict.fromkeys(part_type.wire_types, entry))
        self._adapters.update((k, (entry, v)) for k, v in part_type.adapters.items())
        self._exports.update((k, (entry, v)) for k, v in part_type.exports.items())

    def register(self, part_type: PartType) -> None:
        """Register a part type defined in-process (entry points are read first, so a
        clash with an installed one raises `ValueError` now)."""
        self._load()
        with self._lock:
            self._add(part_type, "in-process")
            self._local.append(part_type)

    def unregister(self, name: str) -> PartType:
        """Forget part type ``name`` (until `reload`, for an installed one); return it."""
        self._load()
        with self._lock:
            entry = self._by_name.pop(name)
            self._by_wire = {k: v for k, v in self._by_wire.items() if v is not entry}
            self._by_class = {k: v for k, v in self._by_class.items() if v is not entry}
            self._adapters = {k: v for k, v in self._adapters.items() if v[0] is not entry}
            self._exports = {k: v for k, v in self._exports.items() if v[0] is not entry}
            self._local = [t for t in self._local if t.name != name]
            return entry.part_type

    def reload(self) -> None:
        """Read the entry points again (after a distribution was installed or removed)."""
        with self._lock:
            self.problems.clear()
            for table in (
                self._by_name,
                self._by_wire,
                self._by_class,
                self._adapters,
                self._exports,
            ):
                table.clear()
            self._loaded = False

    # -- what is installed ------------------------------------------------------------

    def part_types(self) -> dict[str, PartType]:
        """Every registered part type, by name."""
        self._load()
        return {name: entry.part_type for name, entry in self._by_name.items()}

    def source(self, name: str) -> str:
        """The distribution that registered part type ``name`` (``"in-process"`` for
        `register`)."""
        self._load()
        return self._by_name[name].source

    def wire_types(self) -> list[str]:
        """The wire ``type`` values understood: ``"text"`` and every registered one."""
        self._load()
        return ["text", *self._by_wire]

    def part_class(self, name: str) -> type:
        """The class of part type ``name`` (`KeyError` if none is registered)."""
        self._load()
        return self._by_name[name].cls

    def _entry_of(self, part: Any) -> _Entry | None:
        entry = self._by_class.get(type(part))
        if entry is not None:
            return entry
        self._load()
        name = getattr(part, "type", None)
        entry = self._by_name.get(name) if isinstance(name, str) else None
        if entry is None or not isinstance(part, entry.cls):
            return None
        self._by_class[type(part)] = entry
        return entry

    def is_part(self, value: Any) -> bool:
        """True for an instance of a registered part type."""
        return self._entry_of(value) is not None

    def describe(self, value: Any) -> str:
        """What a value that is not a registered part is, for error messages."""
        self._load()
        name = getattr(value, "type", None)
        if isinstance(name, str) and name not in self._by_name:
            return (
                f"{type(value).__name__} of part type {name!r}, which no installed content "
                "plugin registers (install its distribution, or register it: "
                "ferrule_kit.content.parts.registry.register)"
            )
        return f"{type(value).__name__}, which is not a content part"

    # -- the wire ---------------------------------------------------------------------

    def structure(self, data: dict[str, Any]) -> Any:
        """A wire part (any ``type`` but ``"text"``) as its part; an unknown ``type`` is an
        `InvalidInputError` naming the field, what would read it and what is installed."""
        if "type" not in data:
            raise InvalidInputError("required field missing", field="type")
        kind = data["type"]
        self._load()
        entry = self._by_wire.get(kind) if isinstance(kind, str) else None
        if entry is None:
            hint = None
            if isinstance(kind, str) and self.install_hint is not None:
                hint = self.install_hint("part_type", kind)
            raise InvalidInputError(
                f"unknown part type {kind!r}.{f' {hint}' if hint else ''} Installed part types: "
                + ", ".join(repr(w) for w in self.wire_types()),
                field="type",
            )
        return entry.resolve(entry.part_type.structure, "structure")(data)

    def unstructure(self, part: Any) -> dict[str, Any]:
        """A registered part on ferrule's wire."""
        entry = self._entry_of(part)
        if entry is None:
            raise InvalidInputError(f"cannot put {self.describe(part)} on the wire")
        return entry.resolve(entry.part_type.unstructure, "unstructure")(part)

    # -- providers --------------------------------------------------------------------

    def encode(self, part: Any, policy: ContentPolicy, field: str) -> Any:
        """``part`` in ``policy``'s dialect, or `UnsupportedContentError` (naming ``field``,
        the provider and the part type) when the provider cannot take it."""
        entry = self._entry_of(part)
        if entry is None:
            raise policy.refuse(
                f"{policy.name} cannot take {self.describe(part)}",
                field,
                str(getattr(part, "type", type(part).__name__)),
            )
        name = entry.part_type.name
        encoder = entry.part_type.encoders.get(policy.dialect)
        if encoder is None or name in policy.refuses:
            raise policy.refuse(
                f"{policy.name} does not accept {name} input; it accepts {self.accepted(policy)}",
                field,
                name,
            )
        limits = policy.limits.get(name)
        if limits is not None:
            self._check(part, name, policy, limits, field)
        from .policy import Encoding

        return entry.resolve(encoder, f"the {policy.dialect} encoder")(
            part, Encoding(policy, field)
        )

    def _check(
        self, part: Any, name: str, policy: ContentPolicy, limits: Accepts, field: str
    ) -> None:
        if getattr(part, "url", None) is not None:
            if not limits.urls:
                raise policy.refuse(
                    f"{policy.name} does not accept {name} parts by URL; send the {name} as "
                    f"base64 data instead; it accepts {self.accepted(policy)}",
                    field,
                    f"{name}_url",
                )
            return  # what a URL holds is for the provider to fetch and judge
        if not limits.inline:
            raise policy.refuse(
                f"{policy.name} takes {name} parts by URL only; give a public URL", field, name
            )
        media_format = getattr(part, "media_format", None)
        if limits.formats is not None and media_format not in limits.formats:
            raise policy.refuse(
                f"{policy.name} does not accept {name} format {media_format or 'unknown'} "
                f"(use {', '.join(sorted(limits.formats))})",
                field,
                name,
            )
        size = getattr(part, "size", None)
        if limits.max_bytes is not None and isinstance(size, int) and size > limits.max_bytes:
            raise policy.refuse(
                f"{policy.name} takes {name} parts up to {policy.size(limits.max_bytes, 0)}; "
                f"this one is {policy.size(size)}: make it smaller",
                field,
                name,
            )

    def accepted(self, policy: ContentPolicy) -> str:
        """What ``policy``'s provider accepts, in words, from what is installed."""
        self._load()
        kinds = ["text"]
        for name, entry in self._by_name.items():
            if policy.dialect not in entry.part_type.encoders or name in policy.refuses:
                continue
            limits = policy.limits.get(name)
            details = []
            if limits is not None:
                if not limits.urls:
                    details.append("base64 only")
                elif not limits.inline:
                    details.append("URL only")
                if limits.formats is not None:
                    details.append(", ".join(sorted(limits.formats)))
            kinds.append(f"{name} ({'; '.join(details)})" if details else name)
        return ", ".join(kinds)

    # -- the layer above --------------------------------------------------------------

    def adapt(self, value: Any) -> Any | None:
        """``value`` (a Pillow image, ...) as a part by the adapter a content plugin
        registered for its class or a base class, or None when none did."""
        self._load()
        for cls in type(value).__mro__:
            found = self._adapters.get(class_name(cls))
            if found is not None:
                entry, target = found
                return entry.resolve(target, f"the adapter for {cls.__qualname__}")(value)
        return None

    def exported(self) -> list[str]:
        """The public names content plugins export (``ImageContent``, ...)."""
        self._load()
        return sorted(self._exports)

    def export(self, name: str) -> Any:
        """What a content plugin exports as ``name`` (`KeyError` if none does)."""
        self._load()
        entry, target = self._exports[name]
        return entry.resolve(target, f"export {name!r}")


registry = PartRegistry()
