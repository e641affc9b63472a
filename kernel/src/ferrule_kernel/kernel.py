"""The kernel: routes define, delete, call, call_method and iter to plugins.

A request is resolved and its input validated synchronously (`Kernel.prepare`), which
gives a `Prepared` request; that is then run on the event loop (`run` / `stream`) or,
for plain sync code and a sync caller, in the caller's own thread (`run_inline` /
`stream_inline`) so a synchronous script pays no thread hop for a trivial operator.
Whatever a plugin raises ends that request with a typed error; the kernel keeps serving.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import attrs
import pluggy

from . import discovery
from .errors import (
    DuplicateComponentError,
    FerruleError,
    InvalidInputError,
    InvalidOutputError,
    PluginError,
    PluginLoadError,
    UnknownComponentError,
    UnknownComponentTypeError,
    UnknownMethodError,
    UnknownOperatorError,
    interrupts_request,
    scrub_secrets,
)
from .log import get_logger
from .specs import ComponentTypeSpec, MethodSpec, OperatorSpec
from .trust import validating
from .validation import default_converter, json_schema, key_path, structure_input, type_name

# asyncio is imported where it is used: a synchronous caller of a plain operator never
# needs it, and it costs a large part of a cold start.

log = get_logger("ferrule.kernel")

#: ``install_hint(kind, name)``: a sentence saying what provides ``name`` (of kind
#: ``"operator"`` or ``"component_type"``), e.g. ``"It is provided by ferrule-echo: pip
#: install ferrule-echo."``, or None. The kernel knows no plugin; its host hands it this.
InstallHint = Callable[[str, str], str | None]

_END = object()


def _plugin_error(label: str, provider: str, exc: BaseException) -> FerruleError:
    """The typed error a plugin's exception ends its request with; the exception becomes
    its cause. A `FerruleError` the plugin raised is passed on as it is. Any other
    exception's text goes to clients, so what looks like a secret in it is scrubbed."""
    if isinstance(exc, FerruleError):
        return exc
    try:
        text = str(exc)
    except Exception:  # an exception whose own __str__ fails must not escape this path
        text = "<unprintable>"
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    error = PluginError(
        scrub_secrets(f"{label} failed in plugin {provider!r}: {what}"),
        plugin=provider,
        target=label,
        exception_type=type(exc).__name__,
    )
    error.__cause__ = exc
    return error


def _failure(label: str, provider: str, exc: BaseException) -> BaseException:
    """What ends a request whose plugin code raised ``exc`` in this thread: ``exc`` itself
    when it interrupts the request (`interrupts_request`), else one typed error. Every
    other `BaseException` (`SystemExit`, `KeyboardInterrupt` in a worker thread, a stray
    `GeneratorExit` or `CancelledError`) is the plugin's failure: let through, it would
    stop the event loop or the thread that serves every other request."""
    if interrupts_request(exc):
        return exc
    log.debug("request_failed", target=label, plugin=provider, error=repr(exc))
    return _plugin_error(label, provider, exc)


def _invalid_output(label: str, provider: str, errors: list[dict[str, str]]) -> InvalidOutputError:
    summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
    return InvalidOutputError(
        f"{label} in plugin {provider!r} produced invalid output: {summary}",
        plugin=provider,
        target=label,
        errors=errors,
    )


def _json_problem(value: Any) -> tuple[list[str | int], str] | None:
    """Where ``value`` first stops being JSON — the path (innermost step first) and what is
    wrong — or None. Checked on every output, so the common case does no allocation."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return None
    if kind is float or isinstance(value, float):
        return None if math.isfinite(value) else ([], f"{value!r} is not a JSON number")
    if kind is dict:
        for key, item in value.items():
            if not isinstance(key, str):
                return [], f"key {key!r} is not a string"
            problem = _json_problem(item)
            if problem is not None:
                problem[0].append(key)
                return problem
        return None
    if kind is list or kind is tuple:
        for index, item in enumerate(value):
            problem = _json_problem(item)
            if problem is not None:
                problem[0].append(index)
                return problem
        return None
    if isinstance(value, (str, int)):  # str and int subclasses (enums) encode as themselves
        return None
    return [], f"{type_name(value)} is not a JSON value"


def _json_path(steps: list[str | int]) -> str:
    path = "$"
    for step in reversed(steps):
        path = f"{path}[{step}]" if isinstance(step, int) else key_path(path, step)
    return path


def _to_output(
    value: Any, label: str, provider: str, conv: Any = None, outputs: type | None = None
) -> dict[str, Any]:
    """The output a plugin produced, as a JSON object, checked: what cannot cross the
    network (NaN, an arbitrary object) or does not match the declared ``outputs`` class
    is an `InvalidOutputError` naming the field, in-process as over `ferrule serve`."""
    if type(value) is dict:
        out = value
    elif attrs.has(type(value)):
        out = (conv or default_converter()).unstructure(value)
    elif isinstance(value, Mapping):
        out = dict(value)
    else:
        message = f"expected an object, got {type_name(value)}"
        raise _invalid_output(label, provider, [{"path": "$", "message": message}])
    if outputs is not None and not isinstance(value, outputs):
        try:
            structure_input(out, outputs, target=label, conv=conv)
        except InvalidInputError as exc:
            raise _invalid_output(label, provider, exc.errors) from None
    try:
        problem = _json_problem(out)
    except RecursionError:
        problem = [], "nested too deeply"
    if problem is not None:
        steps, message = problem
        raise _invalid_output(label, provider, [{"path": _json_path(steps), "message": message}])
    return out


@attrs.define(slots=True, eq=False)
class Prepared:
    """A validated request, ready to run: the implementation, its argument and how to drive it."""

    label: str
    provider: str
    fn: Callable[..., Any]
    arg: Any
    kind: str  # discovery.call_kind
    blocking: bool
    streaming: bool
    #: The spec's converter; None: the kernel's (`default_converter`).
    converter: Any = None
    #: The declared output class (each item's, for a stream), or None: JSON is checked only.
    outputs: type | None = None

    @property
    def inline(self) -> bool:
        """True when a sync caller may run this in its own thread (plain sync code)."""
        return self.kind in ("sync", "sync_gen")

    def _fail(self, exc: BaseException) -> BaseException:
        return _failure(self.label, self.provider, exc)

    def _output(self, value: Any) -> dict[str, Any]:
        return _to_output(value, self.label, self.provider, self.converter, self.outputs)

    def _call(self) -> Any:
        """Run the implementation in this thread (the caller's, the loop's or a worker's):
        what it raises is judged here, where a Ctrl-C can be told from the plugin's own."""
        try:
            return self.fn(self.arg)
        except BaseException as exc:
            raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)

    def run_inline(self) -> dict[str, Any]:
        return self._output(self._call())

    async def run(self) -> dict[str, Any]:
        if self.kind == "async":
            try:
                result = await self.fn(self.arg)
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)
        elif self.blocking:
            import asyncio

            result = await asyncio.to_thread(self._call)
        else:
            result = self._call()
        return self._output(result)

    def _iterator(self, items: Any) -> Iterator[Any]:
        try:
            return iter(items)
        except TypeError:
            message = f"expected a stream of objects, got {type_name(items)}"
            raise _invalid_output(self.label, self.provider, [{"path": "$", "message": message}])  # noqa: B904

    def stream_inline(self) -> Iterator[dict[str, Any]]:
        return self._iterate(self._iterator(self._call()))

    def _close(self, items: Any) -> None:
        """Close a sync producer; what closing raises is the plugin's failure."""
        close = getattr(items, "close", None)
        if close is not None:
            try:
                close()
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)

    def _close_failed(self, exc: Exception) -> None:
        # The stream already ends (with an error, or its consumer left): a producer that
        # also fails to close is logged, not raised over that ending.
        log.warning(
            "producer_close_failed", target=self.label, plugin=self.provider, error=str(exc)
        )

    def _iterate(self, items: Iterator[Any]) -> Iterator[dict[str, Any]]:
        try:
            while True:
                try:
                    item = next(items)
                except StopIteration:
                    break
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)
                yield self._output(item)
        except BaseException:
            try:
                self._close(items)
            except Exception as exc:
                self._close_failed(exc)
            raise
        self._close(items)

    async def stream(self) -> AsyncGenerator[dict[str, Any], None]:
        source: AsyncGenerator[dict[str, Any], None]
        if self.kind in ("sync_gen", "sync") and self.blocking:
            source = self._stream_threaded()
        else:
            items = self._call()
            if inspect.isawaitable(items):
                try:
                    items = await items
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)
            if hasattr(items, "__aiter__"):
                source = self._stream_async(items.__aiter__())
            else:
                source = _aiter_sync(self._iterate(self._iterator(items)))
        try:
            async for item in source:
                yield item
        finally:
            await source.aclose()  # close the producer now, not when garbage-collected

    async def _aclose(self, agen: Any) -> None:
        aclose = getattr(agen, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except BaseException as exc:
                raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)

    async def _stream_async(self, agen: AsyncIterator[Any]) -> AsyncGenerator[dict[str, Any], None]:
        try:
            while True:
                try:
                    item = await agen.__anext__()
                except StopAsyncIteration:
                    break
                except BaseException as exc:
                    raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)
                yield self._output(item)
        except BaseException:
            try:
                await self._aclose(agen)
            except Exception as exc:
                self._close_failed(exc)
            raise
        await self._aclose(agen)

    async def _stream_threaded(self) -> AsyncGenerator[dict[str, Any], None]:
        # One thread hop per item: the producer never runs ahead of the consumer, so
        # closing or cancelling the stream stops it before its next item.
        import asyncio
        import threading

        loop = asyncio.get_running_loop()
        items = self._iterator(await loop.run_in_executor(None, self._call))
        # A cancelled consumer leaves a step running in its thread; a generator cannot be
        # closed while it runs, so closing waits for that step to finish.
        lock = threading.Lock()

        def step() -> Any:
            with lock:
                try:
                    return next(items, _END)
                except BaseException as exc:  # judged in the worker thread that ran it
                    raise self._fail(exc)  # noqa: B904 (the cause is set by _plugin_error)

        def close_items() -> None:
            with lock:
                self._close(items)

        try:
            while True:
                item = await loop.run_in_executor(None, step)
                if item is _END:
                    break
                yield self._output(item)
        except BaseException:
            try:
                await loop.run_in_executor(None, close_items)
            except Exception as exc:
                self._close_failed(exc)
            raise
        await loop.run_in_executor(None, close_items)


async def _aiter_sync(items: Iterator[dict[str, Any]]) -> AsyncGenerator[dict[str, Any], None]:
    try:
        for item in items:
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


@attrs.define(eq=False)
class Component:
    name: str
    type_name: str
    entry: discovery.Entry
    instance: Any
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
    first use. ``install_hint`` (see `InstallHint`) completes the message of an unknown
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
        self._registry: discovery.Registry | None = None
        self._components: dict[str, Component] = {}
        self._pending: set[str] = set()
        self._deleted: set[str] = set()
        for plugin in plugins:
            self.register(plugin)

    # -- discovery ---------------------------------------------------------------------

    def register(self, plugin: object, name: str | None = None) -> None:
        """Register a plugin object (a module or any object with hook implementations)."""
        self.plugin_manager.register(plugin, name=name)
        self._registry = None

    def load_plugins(self) -> discovery.Registry:
        """Discover and register plugins now (otherwise done on first use); idempotent."""
        return self.registry

    @property
    def registry(self) -> discovery.Registry:
        if self._registry is None:
            if self._entry_point_infos is None:
                self._entry_point_infos = (
                    discovery.load_entry_point_plugins(self.plugin_manager, self._group)
                    if self._load_entry_points
                    else []
                )
            for info in self._entry_point_infos:
                info.operators.clear()
                info.component_types.clear()
            self._registry = discovery.build_registry(self.plugin_manager, self._entry_point_infos)
        return self._registry

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
        entry = self.registry.operators.get(name)
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
        entry = self.registry.component_types.get(name)
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
        fn: Callable[..., Any],
        kind: str,
        spec: Any,
        label: str,
        inputs: Any,
        trusted: bool,
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
        if isinstance(target, str) and target not in self.registry.operators and "." in target:
            name, _, method = target.rpartition(".")
            if name in self._components or name in self._deleted:
                return self.prepare_method(
                    name, method, inputs, streaming=streaming, trusted=trusted
                )
        entry = self._operator(target)
        spec: OperatorSpec = entry.spec  # type: ignore[assignment]
        self._check_streaming(f"operator {target!r}", spec.streaming, streaming)
        return self._prepare(
            entry, entry.resolve(), entry.kind(), spec, f"operator {target!r}", inputs, trusted
        )

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
            raise _failure(label, component.entry.provider, exc)  # noqa: B904
        kind = component.kinds.get(method)
        if kind is None:
            kind = component.kinds[method] = discovery.call_kind(fn)
        return self._prepare(component.entry, fn, kind, spec, label, inputs, trusted)

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
    ) -> None:
        """Create component ``name`` of ``component_type``. With ``placement`` (a JSON
        object with a string ``kind``), the plugin answering ``ferrule_place_component``
        for that kind builds it where it says (a Ray actor, ...) and this kernel routes the
        component's requests to the stand-in it returns."""
        if not isinstance(name, str) or not name:
            raise InvalidInputError(
                f"name: expected a non-empty string, got {type_name(name)}", field="name"
            )
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

            def create() -> Any:  # in a worker thread: what it raises is judged there
                try:
                    return factory(arg)
                except BaseException as exc:
                    raise _failure(label, entry.provider, exc)  # noqa: B904

            try:
                if discovery.call_kind(factory) == "async":
                    instance = await factory(arg)
                else:
                    import asyncio

                    instance = await asyncio.to_thread(create)
                    if inspect.isawaitable(instance):
                        instance = await instance
            except BaseException as exc:
                raise _failure(label, entry.provider, exc)  # noqa: B904
            if instance is None:
                # Caught here, not as an AttributeError at the component's first request.
                raise PluginError(
                    f"{label} failed in plugin {entry.provider!r}: its factory returned None, "
                    "not the component",
                    plugin=entry.provider,
                    target=label,
                )
            self._components[name] = Component(name, spec.name, entry, instance)
            self._deleted.discard(name)
            log.debug("component_defined", name=name, component_type=spec.name)
        finally:
            self._pending.discard(name)

    def _placement_factory(
        self, spec: ComponentTypeSpec, name: str, attributes: Any, placement: Any, label: str
    ) -> Callable[[Any], Any]:
        if not isinstance(placement, Mapping):
            raise InvalidInputError(
                f"placement: expected an object, got {type_name(placement)}", field="placement"
            )
        kind = placement.get("kind")
        if not isinstance(kind, str):
            raise InvalidInputError(
                f"placement.kind: expected string, got {type_name(kind)}", field="placement.kind"
            )
        try:
            factory: Callable[[Any], Any] | None = self.plugin_manager.hook.ferrule_place_component(
                component_type=spec.name,
                name=name,
                attributes=dict(attributes or {}),
                placement=dict(placement),
                spec=spec,
            )
        except BaseException as exc:
            raise _failure(label, f"placement {kind!r}", exc)  # noqa: B904
        if factory is None:
            raise InvalidInputError(
                f"placement.kind: no installed plugin places components on {kind!r}."
                f"{self._hint('placement', kind)}",
                field="placement.kind",
            )
        return factory

    async def delete(self, name: str) -> None:
        component = self._component(name)
        del self._components[name]
        self._deleted.add(name)
        close = getattr(component.instance, "close", None)
        if close is None:
            return
        try:
            result = close()
            if inspect.isawaitable(result):
                await result
        except BaseException as exc:
            raise _failure(f"delete {name!r}", component.entry.provider, exc)  # noqa: B904

    async def aclose(self) -> None:
        """Delete every component (closing each); errors are logged, not raised."""
        for name in list(self._components):
            try:
                await self.delete(name)
            except FerruleError as exc:
                log.warning("component_close_failed", name=name, error=exc.message)
