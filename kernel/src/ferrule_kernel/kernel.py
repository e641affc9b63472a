"""The kernel's registry and requests: resolves define, delete, call, call_method and iter.

`Kernel` holds what plugins registered (discovered once, on first use) and the defined
components. A request is resolved and its input validated synchronously (`Kernel.prepare`),
which gives a `Prepared` request that the execution engine (`ferrule_kernel.execution`)
drives. Whatever a plugin raises ends that request with a typed error
(`ferrule_kernel.failures`); the kernel keeps serving.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

import attrs
import pluggy

from . import discovery
from .composition import ComponentRequests
from .errors import (
    DuplicateComponentError,
    FerruleError,
    InvalidInputError,
    PluginError,
    PluginLoadError,
    UnknownComponentError,
    UnknownComponentTypeError,
    UnknownMethodError,
    UnknownOperatorError,
)
from .execution import Prepared
from .failures import request_failure
from .log import get_logger
from .specs import ComponentTypeSpec, MethodSpec, OperatorSpec
from .trust import validating
from .validation import json_schema, structure_input, type_name

log = get_logger("ferrule.kernel")

#: ``install_hint(kind, name)``: a sentence saying what provides ``name`` (of kind
#: ``"operator"`` or ``"component_type"``), e.g. ``"It is provided by ferrule-echo: pip
#: install ferrule-echo."``, or None. The kernel knows no plugin; its host hands it this.
InstallHint = Callable[[str, str], str | None]


@attrs.define(eq=False)
class Component:
    name: str
    type_name: str
    entry: discovery.Entry
    instance: Any
    #: The component built on this one (`Kernel.define`'s ``owner``), or None.
    owner: str | None = None
    kinds: dict[str, str] = attrs.Factory(dict)  # method name -> call_kind, computed once


def _schema(key: str, entry: discovery.Entry, cls: Any) -> dict[str, Any]:
    """``{key: schema}``, or ``{key: None, "error": ...}`` when the class cannot be loaded:
    one broken description must not break listing the others."""
    try:
        return {key: json_schema(entry.named(cls))}
    except PluginLoadError as exc:
        return {key: None, "error": exc.message}


def _names(names: Any) -> str:
    names = sorted(names)
    return ", ".join(repr(n) for n in names) if names else "none"


class Kernel:
    """Routes the five requests to what plugins registered.

    Plugins come from the entry-point group ``ferrule`` (unless ``load_entry_points``
    is False) and from ``plugins`` given here or to `register`. Discovery runs once, on
    first use; until it has, a request naming an operator or component type imports only
    the plugin that provided it when the same installed plugins were last all loaded
    (`discovery.provider_index`), if it still registers it and no plugin given here does.
    Anything else (listing, an unknown name, `load_plugins`, `registry`, a placement)
    discovers them all. ``install_hint`` (see `InstallHint`) completes the message of an unknown
    operator or component type with what to install; without it the message lists what
    is installed only.
    """

    def __init__(
        self,
        *,
        plugins: tuple[object, ...] | list[object] = (),
        load_entry_points: bool = True,
        entry_point_group: str = discovery.ENTRY_POINT_GROUP,
        install_hint: InstallHint | None = None,
    ) -> None:
        self.plugin_manager: pluggy.PluginManager = discovery.new_plugin_manager()
        #: The `InstallHint` handed in, or None.
        self.install_hint = install_hint
        self._load_entry_points = load_entry_points
        self._group = entry_point_group
        self._entry_point_infos: list[discovery.PluginInfo] | None = None
        self._entry_points: list[discovery.EntryPointRecord] | None = None
        self._registry: discovery.Registry | None = None
        # entries loaded from their plugin alone, before discovery (see the class docstring)
        self._provided: dict[tuple[str, str], discovery.Entry] = {}
        self._components: dict[str, Component] = {}
        # owner -> the components it is built on, in the order they were defined
        self._owned: dict[str, list[str]] = {}
        self._pending: set[str] = set()
        self._deleted: set[str] = set()
        for plugin in plugins:
            self.register(plugin)

    # -- discovery ---------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object (a module or any object with hook implementations)."""
        if self._provided:  # a request came first: it would have discovered every plugin
            self.load_plugins()
        self.plugin_manager.register(plugin, name=name)
        self._registry = None

    def load_plugins(self) -> discovery.Registry:
        """Discover and register plugins now (otherwise done on first use); idempotent."""
        return self.registry

    @property
    def registry(self) -> discovery.Registry:
        if self._registry is None:
            if self._entry_point_infos is None:
                if self._load_entry_points:
                    self._entry_points = self._found_entry_points()
                    self._entry_point_infos = discovery.load_entry_point_plugins(
                        self.plugin_manager, self._group, self._entry_points
                    )
                else:
                    self._entry_point_infos = []
            for info in self._entry_point_infos:
                info.operators.clear()
                info.component_types.clear()
            registry = discovery.build_registry(self.plugin_manager, self._entry_point_infos)
            self._registry, self._provided = registry, {}
            if self._entry_points is not None:
                index = discovery.provider_index_of(registry, self._entry_point_infos)
                if index is not None:
                    discovery.save_provider_index(self._group, self._entry_points, index)
        return self._registry

    def _found_entry_points(self) -> list[discovery.EntryPointRecord]:
        if self._entry_points is None:
            self._entry_points = discovery.find_entry_points(self._group)
        return self._entry_points

    def _lookup(self, kind: str, name: str) -> discovery.Entry | None:
        """The entry of operator or component type (``kind``) ``name``, or None: before
        discovery, from its plugin alone when that is known (see the class docstring)."""
        if self._entry_point_infos is None and self._load_entry_points:
            entry = self._provided.get((kind, name)) or self._load_provider(kind, name)
            if entry is not None:
                return entry
        registry = self.registry
        return (registry.operators if kind == "operator" else registry.component_types).get(name)

    def _load_provider(self, kind: str, name: str) -> discovery.Entry | None:
        hook, expected = (
            ("ferrule_register_operators", OperatorSpec)
            if kind == "operator"
            else ("ferrule_register_component_types", ComponentTypeSpec)
        )
        records = self._found_entry_points()  # reads the index with them, once
        provider = discovery.provider_index(self._group).get((kind, name))
        record = next((r for r in records if r.name == provider), None)
        if record is None or self._given_plugins_register(hook, expected, name):
            return None
        entry = discovery.load_provider(record, hook, expected, name)
        if entry is not None:
            self._provided[(kind, name)] = entry
        return entry

    def _given_plugins_register(self, hook: str, expected: type, name: str) -> bool:
        """Whether a plugin given to this kernel (registered before any entry point, so
        first to register a name) registers ``name``, or fails to say: discovery decides."""
        infos = {
            n: discovery.plugin_info_for(p, n) for n, p in self.plugin_manager.list_name_plugin()
        }
        specs = list(discovery.collect(self.plugin_manager, hook, expected, infos))
        if any(info.error is not None for info in infos.values()):
            return True
        return any(spec.name == name or name in getattr(spec, "aliases", ()) for _, spec in specs)

    def plugins(self) -> list[dict[str, Any]]:
        """Every plugin seen, with what it registers, or why it is broken."""
        return [info.to_dict() for info in self.registry.plugins]

    def operators(self) -> list[dict[str, Any]]:
        specs = {name: (entry, entry.spec) for name, entry in self.registry.operators.items()}
        return [
            {
                "name": name,
                "streaming": spec.streaming,
                "description": spec.description,
                "distribution": entry.provider,
                **_schema("input_schema", entry, spec.inputs),
            }
            for name, (entry, spec) in sorted(specs.items())
            if isinstance(spec, OperatorSpec)
        ]

    def component_types(self) -> list[dict[str, Any]]:
        out = []
        for name in sorted(self.registry.component_type_names):
            entry = self.registry.component_types[name]
            spec: ComponentTypeSpec = entry.spec  # type: ignore[assignment]
            out.append(
                {
                    "name": name,
                    "aliases": list(spec.aliases),
                    "description": spec.description,
                    "distribution": entry.provider,
                    **_schema("attributes_schema", entry, spec.attributes),
                    "methods": [
                        {
                            "name": m.name,
                            "streaming": m.streaming,
                            "description": m.description,
                            **_schema("input_schema", entry, m.inputs),
                        }
                        for m in spec.methods
                    ],
                }
            )
        return out

    def components(self) -> dict[str, str]:
        """Defined components: name -> component type."""
        return {name: c.type_name for name, c in self._components.items()}

    def component(self, name: str) -> Any:
        """The instance behind a defined component (for in-process embedding and tests)."""
        return self._component(name).instance

    # -- resolution --------------------------------------------------------------------

    def _operator(self, name: Any) -> discovery.Entry:
        if not isinstance(name, str):
            raise InvalidInputError(
                f"operator: expected string, got {type_name(name)}", field="operator"
            )
        entry = self._lookup("operator", name)
        if entry is None:
            raise UnknownOperatorError(
                f"unknown operator {name!r}.{self._hint('operator', name)} "
                f"Installed operators: {_names(self.registry.operators)}",
                operator=name,
                installed=sorted(self.registry.operators),
            )
        return entry

    def _component_type(self, name: Any) -> discovery.Entry:
        if not isinstance(name, str):
            raise InvalidInputError(
                f"component_type: expected string, got {type_name(name)}", field="component_type"
            )
        entry = self._lookup("component_type", name)
        if entry is None:
            raise UnknownComponentTypeError(
                f"unknown component type {name!r}.{self._hint('component_type', name)} "
                f"Installed component types: {_names(self.registry.component_type_names)}",
                component_type=name,
                installed=sorted(self.registry.component_type_names),
            )
        return entry

    def _hint(self, kind: str, name: str) -> str:
        hint = self.install_hint(kind, name) if self.install_hint is not None else None
        return f" {hint}" if hint else ""

    def _component(self, name: Any) -> Component:
        if not isinstance(name, str):
            raise InvalidInputError(f"name: expected string, got {type_name(name)}", field="name")
        component = self._components.get(name)
        if component is None:
            if name in self._deleted:
                raise UnknownComponentError(
                    f"component {name!r} was deleted; define it again to use it", name=name
                )
            raise UnknownComponentError(
                f"no component named {name!r}. Defined components: {_names(self._components)}",
                name=name,
                defined=sorted(self._components),
            )
        return component

    def _prepare(
        self,
        entry: discovery.Entry,
        spec: OperatorSpec | MethodSpec,
        fn: Callable[..., Any],
        inputs: Any,
        trusted: bool,
        *,
        kind: str,
        label: str,
    ) -> Prepared:
        conv = entry.named(spec.converter)
        with validating(trusted):
            arg = structure_input(inputs, entry.named(spec.inputs), target=label, conv=conv)
        return Prepared(
            label,
            entry.provider,
            fn,
            arg,
            kind,
            spec.blocking,
            spec.streaming,
            conv,
            entry.named(spec.outputs),
        )

    def prepare(
        self, target: str, inputs: Any, *, streaming: bool = False, trusted: bool = False
    ) -> Prepared:
        """Resolve and validate ``call`` / ``iter`` of an operator or ``"component.method"``.

        ``trusted``: the request comes from code in this process, not over the network
        (see `ferrule_kernel.trust`); only then may its input name code or server files.
        """
        entry = self._lookup("operator", target) if isinstance(target, str) else None
        if entry is None and isinstance(target, str) and "." in target:
            name, _, method = target.rpartition(".")
            if name in self._components or name in self._deleted:
                return self.prepare_method(
                    name, method, inputs, streaming=streaming, trusted=trusted
                )
        if entry is None:
            entry = self._operator(target)
        spec: OperatorSpec = entry.spec  # type: ignore[assignment]
        label = f"operator {target!r}"
        self._check_streaming(label, spec.streaming, streaming)
        fn, kind = entry.resolve(), entry.kind()
        return self._prepare(entry, spec, fn, inputs, trusted, kind=kind, label=label)

    def prepare_method(
        self,
        name: str,
        method: str,
        inputs: Any,
        *,
        streaming: bool = False,
        trusted: bool = False,
    ) -> Prepared:
        component = self._component(name)
        type_spec: ComponentTypeSpec = component.entry.spec  # type: ignore[assignment]
        if not isinstance(method, str):
            raise InvalidInputError(
                f"method: expected string, got {type_name(method)}", field="method"
            )
        spec: MethodSpec | None = type_spec.method(method)
        if spec is None:
            raise UnknownMethodError(
                f"component {name!r} ({component.type_name}) has no method {method!r}. "
                f"Its methods: {_names(m.name for m in type_spec.methods)}",
                name=name,
                method=method,
                methods=[m.name for m in type_spec.methods],
            )
        label = f"{name}.{method}"
        self._check_streaming(f"method {label!r}", spec.streaming, streaming)
        try:
            fn = getattr(component.instance, method)
        except BaseException as exc:  # the instance lacks a method its type declares
            raise request_failure(label, component.entry.provider, exc)  # noqa: B904
        kind = component.kinds.get(method)
        if kind is None:
            kind = component.kinds[method] = discovery.call_kind(fn)
        return self._prepare(component.entry, spec, fn, inputs, trusted, kind=kind, label=label)

    @staticmethod
    def _check_streaming(what: str, is_streaming: bool, wanted: bool) -> None:
        if is_streaming and not wanted:
            raise InvalidInputError(
                f"{what} streams its output: use iter (call_iter / call_iter_method)",
                field="request",
            )
        if wanted and not is_streaming:
            raise InvalidInputError(
                f"{what} does not stream: use call (call_method)", field="request"
            )

    # -- the five requests -------------------------------------------------------------

    # Each takes ``trusted`` (see `prepare`): False unless the caller is code in this process.

    async def call(self, operator: str, inputs: Any, *, trusted: bool = False) -> dict[str, Any]:
        return await self.prepare(operator, inputs, trusted=trusted).run()

    async def call_method(
        self, name: str, method: str, inputs: Any, *, trusted: bool = False
    ) -> dict[str, Any]:
        return await self.prepare_method(name, method, inputs, trusted=trusted).run()

    def iter(
        self, target: str, inputs: Any, *, trusted: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Stream an operator or ``"component.method"``; validation errors raise here, at once."""
        return self.prepare(target, inputs, streaming=True, trusted=trusted).stream()

    def iter_method(
        self, name: str, method: str, inputs: Any, *, trusted: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        return self.prepare_method(name, method, inputs, streaming=True, trusted=trusted).stream()

    async def define(
        self,
        component_type: str,
        name: str,
        attributes: Any = None,
        *,
        placement: Any = None,
        trusted: bool = False,
        owner: str | None = None,
    ) -> None:
        """Create component ``name`` of ``component_type``. With ``placement`` (a JSON
        object with a string ``kind``), the plugin answering ``ferrule_place_component``
        for that kind builds it where it says (a Ray actor, ...) and this kernel routes the
        component's requests to the stand-in it returns. ``owner``: the component (defined,
        or being defined) that is built on this one (`ComponentRequests.define` names it):
        this one is then deleted with its owner, and a `delete` of its own is refused."""
        if not isinstance(name, str) or not name:
            raise InvalidInputError(
                f"name: expected a non-empty string, got {type_name(name)}", field="name"
            )
        if owner is not None and owner not in self._pending and owner not in self._components:
            raise InvalidInputError(f"owner: no component {owner!r} is defined", field="owner")
        entry = self._component_type(component_type)
        spec: ComponentTypeSpec = entry.spec  # type: ignore[assignment]
        if name in self._components or name in self._pending:
            existing = self._components.get(name)
            what = f" (a {existing.type_name})" if existing else ""
            raise DuplicateComponentError(
                f"a component named {name!r}{what} is already defined; delete it first or pick another name",
                name=name,
            )
        with validating(trusted):
            arg = structure_input(
                {} if attributes is None else attributes,
                entry.named(spec.attributes),
                target=f"component type {spec.name!r}",
                conv=entry.named(spec.converter),
            )
        label = f"define {name!r} ({spec.name})"
        placed = (
            None
            if placement is None
            else self._placement_factory(spec, name, attributes, placement, label)
        )
        self._pending.add(name)
        try:
            factory = entry.resolve() if placed is None else placed
            args: tuple[Any, ...] = (arg,)
            if spec.uses_components and placed is None:
                args = (arg, ComponentRequests(self, name, trusted=trusted))
            instance = await self._create(factory, args, label, entry.provider)
            self._components[name] = Component(name, spec.name, entry, instance, owner)
            if owner is not None:
                self._owned.setdefault(owner, []).append(name)
            self._deleted.discard(name)
            log.debug("component_defined", name=name, component_type=spec.name)
        except BaseException:
            await self._delete_owned(name)  # what its factory defined goes with it
            raise
        finally:
            self._pending.discard(name)

    @staticmethod
    async def _create(
        factory: Callable[..., Any], args: tuple[Any, ...], label: str, provider: str
    ) -> Any:
        """The component ``factory(*args)`` makes (sync factories in a worker thread)."""

        def create() -> Any:  # in a worker thread: what it raises is judged there
            try:
                return factory(*args)
            except BaseException as exc:
                raise request_failure(label, provider, exc)  # noqa: B904

        try:
            if discovery.call_kind(factory) == "async":
                instance = await factory(*args)
            else:
                import asyncio

                instance = await asyncio.to_thread(create)
                if inspect.isawaitable(instance):
                    instance = await instance
        except BaseException as exc:
            raise request_failure(label, provider, exc)  # noqa: B904
        if instance is None:
            # Caught here, not as an AttributeError at the component's first request.
            raise PluginError(
                f"{label} failed in plugin {provider!r}: its factory returned None, "
                "not the component",
                plugin=provider,
                target=label,
            )
        return instance

    def _placement_factory(
        self, spec: ComponentTypeSpec, name: str, attributes: Any, placement: Any, label: str
    ) -> Callable[[Any], Any]:
        if not isinstance(placement, Mapping):
            raise InvalidInputError(
                f"placement: expected an object, got {type_name(placement)}", field="placement"
            )
        if spec.uses_components:
            raise InvalidInputError(
                f"placement: component type {spec.name!r} is built on components of this "
                "kernel, so it runs here; define it without a placement",
                field="placement",
            )
        kind = placement.get("kind")
        if not isinstance(kind, str):
            raise InvalidInputError(
                f"placement.kind: expected string, got {type_name(kind)}", field="placement.kind"
            )
        self.load_plugins()  # the placing plugins answer through the plugin manager
        try:
            factory: Callable[[Any], Any] | None = self.plugin_manager.hook.ferrule_place_component(
                component_type=spec.name,
                name=name,
                attributes=dict(attributes or {}),
                placement=dict(placement),
                spec=spec,
            )
        except BaseException as exc:
            raise request_failure(label, f"placement {kind!r}", exc)  # noqa: B904
        if factory is None:
            raise InvalidInputError(
                f"placement.kind: no installed plugin places components on {kind!r}."
                f"{self._hint('placement', kind)}",
                field="placement.kind",
            )
        return factory

    async def delete(self, name: str) -> None:
        """Delete component ``name``, closing it, then the components it is built on."""
        component = self._component(name)
        if component.owner is not None:
            raise InvalidInputError(
                f"name: component {name!r} is part of {component.owner!r}, which is built on "
                f"it; delete {component.owner!r}",
                field="name",
            )
        del self._components[name]
        self._deleted.add(name)
        try:
            await self._close(component)
        finally:
            await self._delete_owned(name)

    @staticmethod
    async def _close(component: Component) -> None:
        close = getattr(component.instance, "close", None)
        if close is None:
            return
        try:
            result = close()
            if inspect.isawaitable(result):
                await result
        except BaseException as exc:
            raise request_failure(f"delete {component.name!r}", component.entry.provider, exc)  # noqa: B904

    async def _delete_owned(self, owner: str) -> None:
        """Delete the components ``owner`` is built on, the last defined first (each closed,
        then what it is built on); a failure to close one is logged, not raised."""
        for name in reversed(self._owned.pop(owner, [])):
            component = self._components.pop(name, None)
            if component is None:
                continue
            self._deleted.add(name)
            try:
                await self._close(component)
            except FerruleError as exc:
                log.warning("component_close_failed", name=name, error=exc.message)
            await self._delete_owned(name)

    async def aclose(self) -> None:
        """Delete every component (closing each); errors are logged, not raised."""
        for name in list(self._components):
            component = self._components.get(name)
            if component is None or component.owner is not None:
                continue  # deleted with its owner
            try:
                await self.delete(name)
            except FerruleError as exc:
                log.warning("component_close_failed", name=name, error=exc.message)


__all__ = ["InstallHint", "Kernel", "Prepared"]
