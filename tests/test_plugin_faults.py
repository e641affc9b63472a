"""The plugin fault suite: a plugin that raises every kind of `BaseException` at import,
registration, define, call, call_method, stream open, mid-stream and close, returns what
is not JSON, or never returns. Whichever way the kernel is reached, each faulty request
ends in one typed error within its deadline, and the kernel, the Runtime's loop thread and
its stream pump go on serving other requests.

The matrix is parametrised over *how the kernel is reached* (`REACHES`: the kernel itself,
the sync `Runtime`, `AsyncRuntime`, and `ferrule serve` through `AsyncRuntime(url=...)`). Each case
runs off the main thread: there a `KeyboardInterrupt` can only be the plugin's, whereas in
the main thread it may be the user's Ctrl-C, which must go through (the tests at the end).
"""

from __future__ import annotations

import asyncio
import math
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

import attrs
import pytest
from ferrule import AsyncRuntime, Runtime
from ferrule.server import ServerThread
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidOutputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    PluginError,
    PluginLoadError,
    RequestCancelledError,
    discovery,
    hookimpl,
)

pytestmark = pytest.mark.timeout(120)

#: How long a faulty request may take to end (they end at once: this only bounds a hang).
DEADLINE = 20.0


class Custom(BaseException):
    """A BaseException of a plugin's own."""


def _not_ours() -> BaseException:
    return asyncio.CancelledError("a task of the plugin's own was cancelled")


FAULTS: dict[str, Callable[[], BaseException]] = {
    "SystemExit": lambda: SystemExit(3),
    "KeyboardInterrupt": KeyboardInterrupt,
    "GeneratorExit": GeneratorExit,
    "CancelledError": _not_ours,
    "Custom": lambda: Custom("odd"),
    "RuntimeError": lambda: RuntimeError("plain"),
}
needs_cancelling = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="before 3.11 a task cannot tell whose cancellation it is"
)
FAULT_PARAMS = [
    pytest.param(name, marks=needs_cancelling) if name == "CancelledError" else name
    for name in FAULTS
]


@attrs.define
class Plan:
    """What the faulty plugin does now (set by each test)."""

    fault: str = "RuntimeError"
    output: Any = None
    hung: threading.Event = attrs.Factory(threading.Event)
    release: threading.Event = attrs.Factory(threading.Event)
    cancelled: threading.Event = attrs.Factory(threading.Event)

    def raise_it(self) -> None:
        raise FAULTS[self.fault]()


PLAN = Plan()


# -- the faulty plugin ---------------------------------------------------------------


@attrs.frozen
class Empty:
    pass


@attrs.frozen
class Stage:
    stage: str = ""


def ok(inputs: Empty) -> dict[str, Any]:
    return {"ok": True}


async def count(inputs: Empty):
    for i in range(3):
        yield {"i": i}


async def boom(inputs: Empty) -> dict[str, Any]:
    PLAN.raise_it()
    return {}


def boom_sync(inputs: Empty) -> dict[str, Any]:
    PLAN.raise_it()
    return {}


async def boom_open(inputs: Empty):
    PLAN.raise_it()
    yield {}


def boom_open_sync(inputs: Empty):
    PLAN.raise_it()
    yield {}


async def boom_midway(inputs: Empty):
    yield {"i": 0}
    yield {"i": 1}
    PLAN.raise_it()


def boom_midway_sync(inputs: Empty):
    yield {"i": 0}
    yield {"i": 1}
    PLAN.raise_it()


def give(inputs: Empty) -> Any:
    return PLAN.output


async def give_stream(inputs: Empty):
    yield {"i": 0}
    yield PLAN.output


async def hang(inputs: Empty) -> dict[str, Any]:
    PLAN.hung.set()
    try:
        await asyncio.sleep(3600)
    finally:
        PLAN.cancelled.set()
    return {}


def hang_sync(inputs: Empty) -> dict[str, Any]:
    # A sync call cannot be interrupted: it blocks its worker thread until released.
    PLAN.hung.set()
    PLAN.release.wait(DEADLINE * 2)
    return {}


async def escape_the_task(inputs: Empty) -> dict[str, Any]:
    # Past the kernel: a callback on the loop itself, which no request's error handling sees.
    asyncio.get_running_loop().call_soon(PLAN.raise_it)
    return {"scheduled": True}


class Faulty:
    def __init__(self, attributes: Stage) -> None:
        if attributes.stage == "define":
            PLAN.raise_it()
        self.stage = attributes.stage

    def poke(self, inputs: Empty) -> dict[str, Any]:
        if self.stage == "call_method":
            PLAN.raise_it()
        return {"poked": True}

    def close(self) -> None:
        if self.stage == "close":
            PLAN.raise_it()


class FaultyAsync(Faulty):
    @classmethod
    async def create(cls, attributes: Stage) -> FaultyAsync:
        return cls(attributes)

    async def poke(self, inputs: Empty) -> dict[str, Any]:  # type: ignore[override]
        return super().poke(inputs)

    async def close(self) -> None:  # type: ignore[override]
        super().close()


class FaultPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [
            OperatorSpec("ok", ok, Empty),
            OperatorSpec("count", count, Empty, streaming=True),
            OperatorSpec("boom", boom, Empty),
            OperatorSpec("boom_sync", boom_sync, Empty),
            OperatorSpec("boom_open", boom_open, Empty, streaming=True),
            OperatorSpec("boom_open_sync", boom_open_sync, Empty, streaming=True),
            OperatorSpec("boom_midway", boom_midway, Empty, streaming=True),
            OperatorSpec("boom_midway_sync", boom_midway_sync, Empty, streaming=True),
            OperatorSpec("give", give, Empty, blocking=False),
            OperatorSpec("give_stream", give_stream, Empty, streaming=True),
            OperatorSpec("hang", hang, Empty),
            OperatorSpec("hang_sync", hang_sync, Empty),
            OperatorSpec("escape_the_task", escape_the_task, Empty),
            OperatorSpec("late_import", f"{__name__}_no_such_module:nothing", Empty),
        ]

    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = [MethodSpec("poke", Empty)]
        return [
            ComponentTypeSpec("faulty", Faulty, Stage, methods),
            ComponentTypeSpec("faulty_async", FaultyAsync.create, Stage, methods),
        ]


class HealthyPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("healthy", ok, Empty)]


def fault_kernel() -> Kernel:
    kernel = Kernel(load_entry_points=False)
    kernel.register(FaultPlugin(), name="faults")
    kernel.register(HealthyPlugin(), name="healthy")
    return kernel


# -- how the kernel is reached ---------------------------------------------------------


class Reach(Protocol):
    """The five requests, as one way of reaching a kernel offers them (all awaitable)."""

    async def define(self, component_type: str, name: str, attributes: dict[str, Any]) -> None: ...
    async def delete(self, name: str) -> None: ...
    async def call(self, operator: str, inputs: dict[str, Any]) -> dict[str, Any]: ...
    async def call_method(
        self, name: str, method: str, inputs: dict[str, Any]
    ) -> dict[str, Any]: ...
    async def stream(self, target: str, inputs: dict[str, Any], into: list[Any]) -> None: ...
    async def close(self) -> None: ...


@attrs.define
class KernelReach:
    kernel: Kernel = attrs.Factory(fault_kernel)

    async def define(self, component_type: str, name: str, attributes: dict[str, Any]) -> None:
        await self.kernel.define(component_type, name, attributes)

    async def delete(self, name: str) -> None:
        await self.kernel.delete(name)

    async def call(self, operator: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.kernel.call(operator, inputs)

    async def call_method(self, name: str, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.kernel.call_method(name, method, inputs)

    async def stream(self, target: str, inputs: dict[str, Any], into: list[Any]) -> None:
        async for item in self.kernel.iter(target, inputs):
            into.append(item)

    async def close(self) -> None:
        await self.kernel.aclose()


@attrs.define
class SyncRuntimeReach:
    """The sync `Runtime`, called from the case's thread (its loop runs in another)."""

    rt: Runtime = attrs.Factory(lambda: Runtime(kernel=fault_kernel()))

    async def define(self, component_type: str, name: str, attributes: dict[str, Any]) -> None:
        self.rt.define(component_type, name, attributes)

    async def delete(self, name: str) -> None:
        self.rt.delete(name)

    async def call(self, operator: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return self.rt.call(operator, inputs)

    async def call_method(self, name: str, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return self.rt.call_method(name, method, inputs)

    async def stream(self, target: str, inputs: dict[str, Any], into: list[Any]) -> None:
        for item in self.rt.call_iter(target, inputs):
            into.append(item)

    async def close(self) -> None:
        self.rt.stop()


@attrs.define
class AsyncRuntimeReach:
    rt: AsyncRuntime = attrs.Factory(lambda: AsyncRuntime(kernel=fault_kernel()))

    async def define(self, component_type: str, name: str, attributes: dict[str, Any]) -> None:
        await self.rt.define(component_type, name, attributes)

    async def delete(self, name: str) -> None:
        await self.rt.delete(name)

    async def call(self, operator: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.rt.call(operator, inputs)

    async def call_method(self, name: str, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.rt.call_method(name, method, inputs)

    async def stream(self, target: str, inputs: dict[str, Any], into: list[Any]) -> None:
        async for item in self.rt.call_iter(target, inputs):
            into.append(item)

    async def close(self) -> None:
        await self.rt.stop()


@attrs.define
class ServeReach(AsyncRuntimeReach):
    """`ferrule serve` (a `ServerThread` on loopback) through `AsyncRuntime(url=...)`: the
    errors arrive over HTTP, and the server's loop is the one a fault must not stop."""

    server: ServerThread = attrs.Factory(lambda: ServerThread(fault_kernel()))
    rt: AsyncRuntime = attrs.Factory(
        lambda self: AsyncRuntime(url=self.server.start()), takes_self=True
    )

    async def close(self) -> None:
        await super().close()
        await asyncio.to_thread(self.server.stop)


REACHES: dict[str, Callable[[], Reach]] = {
    "kernel": KernelReach,
    "runtime": SyncRuntimeReach,
    "async-runtime": AsyncRuntimeReach,
    "serve": ServeReach,
}


def off_main(case: Callable[[Reach], Awaitable[None]], reach_name: str) -> None:
    """Run ``case`` against a fresh reach on an event loop of its own thread; fail if it
    does not finish within the deadline (a hang), re-raise what it raised."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        async def main() -> None:
            reach = REACHES[reach_name]()
            try:
                await case(reach)
            finally:
                await reach.close()

        try:
            asyncio.run(main())
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, name=f"fault-case-{reach_name}", daemon=True)
    thread.start()
    thread.join(DEADLINE)
    assert outcome, f"the case did not finish within {DEADLINE} s: a request hung"
    if outcome[0] is not None:
        raise outcome[0]


async def still_serving(reach: Reach) -> None:
    """Other requests of every kind still work."""
    assert await reach.call("healthy", {}) == {"ok": True}
    assert await reach.call("ok", {}) == {"ok": True}
    await reach.define("faulty", "fine", {})
    assert await reach.call_method("fine", "poke", {}) == {"poked": True}
    items: list[Any] = []
    await reach.stream("count", {}, items)
    assert items == [{"i": 0}, {"i": 1}, {"i": 2}]
    await reach.delete("fine")


def assert_one_typed_error(exc: BaseException, fault: str, target: str) -> None:
    assert isinstance(exc, PluginError), f"{type(exc).__name__}: {exc}"
    assert target in exc.message
    assert exc.details["plugin"] == "faults"
    assert exc.details["exception_type"] == fault


@pytest.fixture(params=list(REACHES))
def reach_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(autouse=True)
def plan() -> Plan:
    PLAN.__init__()  # type: ignore[misc]
    return PLAN


# -- define, call, call_method, stream open, mid-stream, close --------------------------


@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("component_type", ["faulty", "faulty_async"])
def test_a_fault_at_define_ends_that_define(reach_name, fault, component_type) -> None:
    PLAN.fault = fault

    async def case(reach: Reach) -> None:
        with pytest.raises(PluginError) as info:
            await reach.define(component_type, "c", {"stage": "define"})
        assert_one_typed_error(info.value, fault, "define 'c'")
        await reach.define(component_type, "c", {})  # the name stayed free
        await still_serving(reach)

    off_main(case, reach_name)


@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("operator", ["boom", "boom_sync"])
def test_a_fault_in_a_call_ends_that_call(reach_name, fault, operator) -> None:
    PLAN.fault = fault

    async def case(reach: Reach) -> None:
        for _ in range(2):  # and again: nothing was left broken
            with pytest.raises(PluginError) as info:
                await reach.call(operator, {})
            assert_one_typed_error(info.value, fault, f"operator {operator!r}")
        await still_serving(reach)

    off_main(case, reach_name)


@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("component_type", ["faulty", "faulty_async"])
def test_a_fault_in_a_method_ends_that_call(reach_name, fault, component_type) -> None:
    PLAN.fault = fault

    async def case(reach: Reach) -> None:
        await reach.define(component_type, "c", {"stage": "call_method"})
        with pytest.raises(PluginError) as info:
            await reach.call_method("c", "poke", {})
        assert_one_typed_error(info.value, fault, "c.poke")
        await still_serving(reach)

    off_main(case, reach_name)


@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize(
    ("operator", "before"),
    [("boom_open", 0), ("boom_open_sync", 0), ("boom_midway", 2), ("boom_midway_sync", 2)],
)
def test_a_fault_in_a_stream_ends_it_after_the_items_sent(
    reach_name, fault, operator, before
) -> None:
    PLAN.fault = fault

    async def case(reach: Reach) -> None:
        items: list[Any] = []
        with pytest.raises(PluginError) as info:
            await reach.stream(operator, {}, items)
        assert items == [{"i": i} for i in range(before)]  # never "complete" early
        assert_one_typed_error(info.value, fault, f"operator {operator!r}")
        more: list[Any] = []
        with pytest.raises(PluginError):  # the stream pump and loop serve the next stream
            await reach.stream("boom_midway", {}, more)
        assert len(more) == 2
        await still_serving(reach)

    off_main(case, reach_name)


@pytest.mark.parametrize("fault", FAULT_PARAMS)
@pytest.mark.parametrize("component_type", ["faulty", "faulty_async"])
def test_a_fault_at_close_ends_that_delete_and_the_component_is_gone(
    reach_name, fault, component_type
) -> None:
    PLAN.fault = fault

    async def case(reach: Reach) -> None:
        await reach.define(component_type, "c", {"stage": "close"})
        with pytest.raises(PluginError) as info:
            await reach.delete("c")
        assert_one_typed_error(info.value, fault, "delete 'c'")
        await reach.define(component_type, "c", {})
        await still_serving(reach)

    off_main(case, reach_name)


# -- wrong outputs ---------------------------------------------------------------------


class Opaque:
    pass


@pytest.mark.parametrize(
    ("output", "path"),
    [
        ({"x": math.nan}, "$.x"),
        ({"x": [Opaque()]}, "$.x[0]"),
        ({3: "x"}, "$"),
        ("text", "$"),
        (None, "$"),
    ],
)
@pytest.mark.parametrize("operator", ["give", "give_stream"])
def test_output_that_is_not_json_is_one_typed_error(reach_name, output, path, operator) -> None:
    PLAN.output = output

    async def case(reach: Reach) -> None:
        items: list[Any] = []
        with pytest.raises(InvalidOutputError) as info:
            if operator == "give":
                await reach.call(operator, {})
            else:
                await reach.stream(operator, {}, items)
        assert info.value.errors[0]["path"] == path
        assert f"operator {operator!r} in plugin 'faults' produced invalid output" in (
            info.value.message
        )
        assert items == ([{"i": 0}] if operator == "give_stream" else [])
        await still_serving(reach)

    off_main(case, reach_name)


# -- never returns ---------------------------------------------------------------------


@pytest.mark.parametrize("reach_name", ["kernel", "async-runtime"])
@pytest.mark.parametrize("operator", ["hang", "hang_sync"])
def test_a_call_that_never_returns_ends_at_the_callers_deadline(reach_name, operator) -> None:
    async def case(reach: Reach) -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reach.call(operator, {}), 0.5)
        assert PLAN.hung.is_set()
        if operator == "hang":
            assert PLAN.cancelled.is_set()  # async code is cancelled with its request
        await still_serving(reach)
        PLAN.release.set()  # a sync call only ends when it returns: let its thread go

    off_main(case, reach_name)


def test_a_runtime_call_that_never_returns_leaves_the_runtime_serving() -> None:
    # The sync Runtime has no deadline of its own: its caller's thread waits (Ctrl-C ends
    # the wait, see below; so does stopping the Runtime), while every other caller is served.
    ended: list[BaseException] = []

    def call() -> None:
        try:
            rt.call("hang", {})
        except BaseException as exc:
            ended.append(exc)

    with Runtime(kernel=fault_kernel()) as rt:
        waiting = threading.Thread(target=call, daemon=True)
        waiting.start()
        assert PLAN.hung.wait(DEADLINE)
        assert rt.call("healthy", {}) == {"ok": True}
        assert list(rt.call_iter("count", {})) == [{"i": 0}, {"i": 1}, {"i": 2}]
        rt.define("faulty_async", "c", {})
        assert rt.call_method("c", "poke", {}) == {"poked": True}
        assert waiting.is_alive()
    waiting.join(DEADLINE)  # stopping the Runtime cancelled it
    assert not waiting.is_alive() and PLAN.cancelled.is_set()
    assert [type(e) for e in ended] == [RequestCancelledError]


# -- past the kernel: the Runtime's own loop ---------------------------------------------


@pytest.mark.parametrize("fault", ["SystemExit", "KeyboardInterrupt", "Custom"])
def test_a_callback_raising_on_the_runtimes_loop_does_not_stop_it(fault) -> None:
    PLAN.fault = fault
    with Runtime(kernel=fault_kernel()) as rt:
        assert rt.call("escape_the_task", {}) == {"scheduled": True}
        for _ in range(3):  # the loop thread is still there, serving
            assert list(rt.call_iter("count", {})) == [{"i": 0}, {"i": 1}, {"i": 2}]
        rt.define("faulty_async", "c", {})
        assert rt.call_method("c", "poke", {}) == {"poked": True}


# -- import and registration -------------------------------------------------------------


@pytest.mark.parametrize("fault", FAULT_PARAMS)
def test_a_fault_importing_or_registering_a_plugin_marks_it_broken(
    fault, tmp_path: Path, monkeypatch
) -> None:
    raised = {
        "SystemExit": "raise SystemExit(3)",
        "KeyboardInterrupt": "raise KeyboardInterrupt",
        "GeneratorExit": "raise GeneratorExit",
        "CancelledError": "import asyncio\nraise asyncio.CancelledError()",
        "Custom": "class Custom(BaseException): pass\nraise Custom('odd')",
        "RuntimeError": "raise RuntimeError('plain')",
    }[fault]
    module = f"ferrule_fault_import_{fault.lower()}"
    (tmp_path / f"{module}.py").write_text(raised + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    records = [discovery.EntryPointRecord("broken_import", module, "ferrule-broken", "1.0")]
    monkeypatch.setattr(discovery, "find_entry_points", lambda group: records)

    class BrokenHook:
        @hookimpl
        def ferrule_register_operators(self) -> list[OperatorSpec]:
            PLAN.raise_it()
            return []

    PLAN.fault = fault
    listed: list[Any] = []

    async def case(reach: Reach) -> None:
        listed.extend(kernel.plugins())
        assert await kernel.call("healthy", {}) == {"ok": True}

    kernel = Kernel()
    kernel.register(BrokenHook(), name="broken_hook")
    kernel.register(HealthyPlugin(), name="healthy")

    def discover() -> None:
        asyncio.run(case(KernelReach(kernel)))

    thread = threading.Thread(target=discover)
    thread.start()
    thread.join(DEADLINE)
    errors = {p["name"]: p["error"] for p in listed}
    assert errors["broken_import"].startswith(f"import failed: {fault}")
    assert errors["broken_hook"].startswith(f"ferrule_register_operators failed: {fault}")
    assert errors["healthy"] is None


@pytest.mark.parametrize("fault", FAULT_PARAMS)
def test_a_fault_importing_an_implementation_is_a_load_error(fault, tmp_path, monkeypatch):
    module = f"ferrule_fault_impl_{fault.lower()}"
    body = {
        "SystemExit": "raise SystemExit(3)",
        "KeyboardInterrupt": "raise KeyboardInterrupt",
        "GeneratorExit": "raise GeneratorExit",
        "CancelledError": "import asyncio\nraise asyncio.CancelledError()",
        "Custom": "class Custom(BaseException): pass\nraise Custom('odd')",
        "RuntimeError": "raise RuntimeError('plain')",
    }[fault]
    (tmp_path / f"{module}.py").write_text(body + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    class Lazy:
        @hookimpl
        def ferrule_register_operators(self) -> list[OperatorSpec]:
            return [OperatorSpec("lazy", f"{module}:function", Empty)]

    async def case(reach: Reach) -> None:
        assert isinstance(reach, KernelReach)
        reach.kernel.register(Lazy(), name="lazy")
        with pytest.raises(PluginLoadError, match=f"could not load '{module}:function'"):
            await reach.call("lazy", {})
        await still_serving(reach)

    off_main(case, "kernel")


# -- in the main thread: the user's Ctrl-C goes through --------------------------------


# (what these tests mean holds in the main thread with Python's default SIGINT handler:
# ctrl_c_raises installs it, also where the suite runs with SIGINT ignored)


def test_ctrl_c_in_the_users_thread_still_interrupts_a_sync_call(ctrl_c_raises) -> None:
    assert threading.current_thread() is threading.main_thread()
    PLAN.fault = "KeyboardInterrupt"
    with Runtime(kernel=fault_kernel()) as rt:
        # A sync plugin runs in the caller's thread: its KeyboardInterrupt cannot be told
        # from a Ctrl-C there, and a Ctrl-C must not be swallowed.
        with pytest.raises(KeyboardInterrupt):
            rt.call("boom_sync", {})
        # An async plugin runs on the Runtime's loop thread: there it is the plugin's.
        with pytest.raises(PluginError, match="KeyboardInterrupt"):
            rt.call("boom", {})
        assert rt.call("ok", {}) == {"ok": True}


def test_a_real_ctrl_c_ends_a_call_that_never_returns_and_cancels_it(ctrl_c_raises) -> None:
    main = threading.main_thread().ident
    assert main == threading.get_ident()

    def ctrl_c() -> None:
        if PLAN.hung.wait(DEADLINE):
            signal.pthread_kill(main, signal.SIGINT)

    with Runtime(kernel=fault_kernel()) as rt:
        timer = threading.Timer(0.1, ctrl_c)
        timer.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            rt.call("hang", {})
        assert time.monotonic() - started < DEADLINE
        assert PLAN.cancelled.wait(DEADLINE)  # the request was cancelled on the loop
        assert rt.call("ok", {}) == {"ok": True}
        timer.join()
