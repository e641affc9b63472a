"""Plugin discovery: entry points -> pluggy -> a registry of descriptions.

Loading a plugin imports only its hook module, which returns descriptions; the code a
description names is imported the first time it is needed (`Entry.resolve`). A plugin
that fails to import, or whose hook raises or returns something else than descriptions,
is recorded with the reason and left out; the others are unaffected.
"""

from __future__ import annotations

import importlib
import inspect
import types
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import pluggy

from . import hookspecs
from .entrypoints import (
    EntryPointRecord,
    find_entry_points,
    provider_index,
    save_provider_index,
)
from .errors import PluginLoadError, interrupts_request
from .log import get_logger
from .scrubbing import scrub_secrets
from .specs import ComponentTypeSpec, OperatorSpec, Target

log = get_logger("ferrule.discovery")

ENTRY_POINT_GROUP = "ferrule"
hookimpl = pluggy.HookimplMarker("ferrule")


@attrs.define
class PluginInfo:
    """What `ferrule plugins` shows for one plugin."""

    name: str
    module: str
    distribution: str | None = None
    version: str | None = None
    operators: list[str] = attrs.Factory(list)
    component_types: list[str] = attrs.Factory(list)
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def _describe_exception(exc: BaseException) -> str:
    return scrub_secrets(f"{type(exc).__name__}: {exc}")  # shown to clients too


def import_target(target: Target) -> Callable[..., Any]:
    """Import a ``"module:attr.attr"`` string (or return a callable as is)."""
    if not isinstance(target, str):
        return target
    module_name, _, attr_path = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for attr in filter(None, attr_path.split(".")):
        obj = getattr(obj, attr)
    return obj


_NAMED: dict[str, Any] = {}


@attrs.define(eq=False)
class Entry:
    """A registered operator or component type with the plugin that provides it."""

    spec: OperatorSpec | ComponentTypeSpec
    plugin: PluginInfo
    _resolved: Callable[..., Any] | None = None
    _kind: str | None = None

    @property
    def provider(self) -> str:
        return self.plugin.distribution or self.plugin.name

    def resolve(self) -> Callable[..., Any]:
        """The implementation, imported on first use; a failed import is a `PluginLoadError`."""
        if self._resolved is None:
            target = (
                self.spec.function if isinstance(self.spec, OperatorSpec) else self.spec.factory
            )
            try:
                self._resolved = import_target(target)
            except BaseException as exc:  # a module may sys.exit() as it is imported
                if interrupts_request(exc):
                    raise
                raise PluginLoadError(
                    f"plugin {self.provider!r} could not load {target!r} for "
                    f"{self.spec.name!r}: {_describe_exception(exc)}",
                    plugin=self.provider,
                ) from exc
        return self._resolved

    def named(self, value: Any) -> Any:
        """A class or converter a description names lazily (``"module:attr"``), imported
        once; anything else as it is. A failed import is a `PluginLoadError`."""
        if not isinstance(value, str):
            return value
        resolved = _NAMED.get(value)
        if resolved is None:
            try:
                resolved = _NAMED[value] = import_target(value)
            except BaseException as exc:
                if interrupts_request(exc):
                    raise
                raise PluginLoadError(
                    f"plugin {self.provider!r} could not load {value!r} for "
                    f"{self.spec.name!r}: {_describe_exception(exc)}",
                    plugin=self.provider,
                ) from exc
        return resolved

    def kind(self) -> str:
        """`call_kind` of the implementation, computed once."""
        if self._kind is None:
            self._kind = call_kind(self.resolve())
        return self._kind


@attrs.define
class Registry:
    plugins: list[PluginInfo]
    operators: dict[str, Entry]
    component_types: dict[str, Entry]  # by name and by alias
    component_type_names: list[str]  # canonical names only, in registration order


class _PluginManager(pluggy.PluginManager):
    """pluggy's manager, reading a module plugin's hook markers from its ``__dict__``.

    pluggy looks at every attribute of a plugin with `inspect.getattr_static` (so that a
    class instance's properties are not run), which is most of what registering costs a
    cold start. A module has no such descriptors: a function in its ``__dict__`` is what
    getattr_static would find, and anything else is no hook. Other plugins (objects,
    classes, and modules holding staticmethod-like wrappers) go through pluggy's own look.
    """

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if type(plugin) is types.ModuleType:
            value = plugin.__dict__.get(name)
            if inspect.isfunction(value):
                opts = getattr(value, f"{self.project_name}_impl", None)
                return opts if isinstance(opts, dict) else None
            if not isinstance(value, (staticmethod, classmethod, types.MethodType)):
                return None
        return super().parse_hookimpl_opts(plugin, name)


def new_plugin_manager() -> pluggy.PluginManager:
    pm = _PluginManager("ferrule")
    pm.add_hookspecs(hookspecs)
    pm.hook.ferrule_add_hookspecs.call_historic(kwargs={"pluginmanager": pm})
    return pm


def load_entry_point_plugins(
    pm: pluggy.PluginManager, group: str, records: list[EntryPointRecord] | None = None
) -> list[PluginInfo]:
    """Import and register every entry point of ``group`` (``records`` when the caller
    found them already); failures are recorded, not raised."""
    infos = []
    for ep in find_entry_points(group) if records is None else records:
        info = PluginInfo(
            name=ep.name, module=ep.value, distribution=ep.distribution, version=ep.version
        )
        infos.append(info)
        if pm.has_plugin(ep.name):
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except BaseException as exc:  # SystemExit at import included: one broken plugin
            if interrupts_request(exc):
                raise
            info.error = f"import failed: {_describe_exception(exc)}"
            log.debug("plugin_import_failed", plugin=ep.name, error=info.error)
    return infos


def discover_plugins(
    group: str = ENTRY_POINT_GROUP,
) -> tuple[pluggy.PluginManager, list[PluginInfo]]:
    """A new plugin manager holding every plugin of the entry-point group ``group``, found
    as a `Kernel` finds them (the discovery cache included), and what was found: a plugin
    whose module fails to import is listed with its ``error`` and left out.

    For a layer above the kernel that asks plugins a question of its own outside any
    kernel (the plugin kit's part-type registry): its hook specifications reach this
    manager as they reach a kernel's, through ``ferrule_add_hookspecs``.
    """
    pm = new_plugin_manager()
    return pm, load_entry_point_plugins(pm, group)


def plugin_info_for(plugin: object, name: str) -> PluginInfo:
    """A plugin registered directly (not through an entry point) has no distribution."""
    module = getattr(plugin, "__name__", None) or type(plugin).__module__
    return PluginInfo(name=name, module=module)


def collect(
    pm: pluggy.PluginManager,
    hook_name: str,
    expected: type,
    infos: dict[str, PluginInfo],
) -> Iterable[tuple[PluginInfo, Any]]:
    """What each plugin's registration hook ``hook_name`` returns, one plugin at a time:
    a plugin whose hook raises, or returns anything but ``expected`` descriptions, gets its
    ``infos`` entry's ``error`` and adds nothing."""
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        info = infos[impl.plugin_name]
        try:
            specs = impl.function() or []
            bad = [s for s in specs if not isinstance(s, expected)]
            if bad:
                raise TypeError(f"{hook_name} returned {bad[0]!r}, expected {expected.__name__}")
        except BaseException as exc:
            if interrupts_request(exc):
                raise
            info.error = f"{hook_name} failed: {_describe_exception(exc)}"
            log.debug("plugin_hook_failed", plugin=info.name, error=info.error)
            continue
        for spec in specs:
            yield info, spec


def _conflict(info: PluginInfo, what: str, name: str, other: Entry) -> None:
    note = f"{what} {name!r} is already provided by {other.provider!r}; this one is ignored"
    info.error = note if info.error is None else f"{info.error}; {note}"


def build_registry(pm: pluggy.PluginManager, entry_point_infos: list[PluginInfo]) -> Registry:
    infos = {info.name: info for info in entry_point_infos}
    for name, plugin in pm.list_name_plugin():
        if name not in infos:
            infos[name] = plugin_info_for(plugin, name)
    operators: dict[str, Entry] = {}
    for info, spec in collect(pm, "ferrule_register_operators", OperatorSpec, infos):
        if spec.name in operators:
            _conflict(info, "operator", spec.name, operators[spec.name])
            continue
        operators[spec.name] = Entry(spec, info)
        info.operators.append(spec.name)
    component_types: dict[str, Entry] = {}
    names = []
    for info, spec in collect(pm, "ferrule_register_component_types", ComponentTypeSpec, infos):
        if spec.name in component_types:
            _conflict(info, "component type", spec.name, component_types[spec.name])
            continue
        entry = Entry(spec, info)
        component_types[spec.name] = entry
        names.append(spec.name)
        info.component_types.append(spec.name)
        for alias in spec.aliases:
            component_types.setdefault(alias, entry)
    for info in infos.values():
        if pm.get_plugin(info.name) is None and info.error is None:
            info.error = "not registered"
    return Registry(
        plugins=sorted(infos.values(), key=lambda i: i.name),
        operators=operators,
        component_types=component_types,
        component_type_names=names,
    )


def provider_index_of(
    registry: Registry, entry_points: list[PluginInfo]
) -> dict[tuple[str, str], str] | None:
    """The `provider_index` of a registry built from the plugins ``entry_points``; None
    when a plugin registered otherwise provides a name (one kernel's own plugin, which
    would hide an entry point's name from every other program's index)."""
    names = {info.name for info in entry_points}
    index = {("operator", n): e.plugin.name for n, e in registry.operators.items()}
    index.update(
        (("component_type", n), e.plugin.name) for n, e in registry.component_types.items()
    )
    return index if all(name in names for name in index.values()) else None


def load_provider(
    record: EntryPointRecord, hook_name: str, expected: type, name: str
) -> Entry | None:
    """The entry of ``name`` (an operator, or a component type by name or alias) as the
    plugin of ``record`` alone registers it: its module imported and its registration hook
    ``hook_name`` called as `build_registry` calls it, on a plugin manager of its own (so
    the caller's keeps the order of a full discovery). None when the plugin fails to
    import or to register, or registers no ``name`` now: the caller then discovers every
    plugin, which reports why."""
    info = PluginInfo(
        name=record.name,
        module=record.value,
        distribution=record.distribution,
        version=record.version,
    )
    try:
        plugin = record.load()
        pm = new_plugin_manager()
        pm.register(plugin, name=record.name)
    except BaseException as exc:
        if interrupts_request(exc):
            raise
        return None
    for _, spec in collect(pm, hook_name, expected, {record.name: info}):
        if spec.name == name or name in getattr(spec, "aliases", ()):
            return Entry(spec, info)
    return None


def call_kind(fn: Callable[..., Any]) -> str:
    """How to drive an implementation: "async", "async_gen", "sync_gen" or "sync"."""
    target = inspect.unwrap(fn)
    if inspect.isasyncgenfunction(target):
        return "async_gen"
    if inspect.iscoroutinefunction(target):
        return "async"
    if inspect.isgeneratorfunction(target):
        return "sync_gen"
    return "sync"


__all__ = [
    "ENTRY_POINT_GROUP",
    "Entry",
    "EntryPointRecord",
    "PluginInfo",
    "Registry",
    "build_registry",
    "call_kind",
    "collect",
    "discover_plugins",
    "find_entry_points",
    "hookimpl",
    "import_target",
    "load_entry_point_plugins",
    "load_provider",
    "new_plugin_manager",
    "provider_index",
    "provider_index_of",
    "save_provider_index",
]
