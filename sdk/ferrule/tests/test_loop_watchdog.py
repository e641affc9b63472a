"""The Runtime's loop thread reports an async plugin that blocks it, naming the plugin, and
blames no one when the loop was only waiting in its selector."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from typing import Any

import attrs
import pytest
from ferrule import Runtime
from ferrule._bridge import Watchdog
from ferrule_kernel import ComponentTypeSpec, Kernel, MethodSpec, OperatorSpec, hookimpl

REPORTED = threading.Event()


@attrs.frozen
class Empty:
    pass


async def blocks_the_loop(inputs: Empty) -> dict[str, Any]:
    # Blocking code in an async plugin: nothing else on the loop runs until it returns.
    # It returns once the stall was reported (the deadline only bounds a hang).
    REPORTED.wait(30)
    return {"done": True}


WAIT_LINES = {"operator": blocks_the_loop.__code__.co_firstlineno + 3}


class Sluggish:
    def __init__(self, attributes: Empty) -> None:
        pass

    async def think(self, inputs: Empty) -> dict[str, Any]:
        REPORTED.wait(30)
        return {"done": True}


WAIT_LINES["method"] = Sluggish.think.__code__.co_firstlineno + 1


class BlockingPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("blocks_the_loop", blocks_the_loop, Empty)]

    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        return [ComponentTypeSpec("sluggish", Sluggish, Empty, [MethodSpec("think", Empty)])]


class Catch(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "ferrule_event", None) == "loop_stalled":
            self.records.append(record)
            REPORTED.set()


@pytest.fixture
def caught(monkeypatch) -> Any:
    monkeypatch.setenv("FERRULE_LOOP_STALL_SECONDS", "0.2")
    REPORTED.clear()
    handler = Catch()
    logger = logging.getLogger("ferrule.runtime")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def runtime() -> Runtime:
    kernel = Kernel(load_entry_points=False)
    kernel.register(BlockingPlugin(), name="ferrule-blocking")
    return Runtime(kernel=kernel)


@pytest.mark.parametrize("target", ["operator", "method"])
def test_a_plugin_blocking_the_loop_is_reported_by_name(caught, target) -> None:
    started = time.monotonic()
    with runtime() as rt:
        if target == "operator":
            assert rt.call("blocks_the_loop", {}) == {"done": True}
            label = "operator 'blocks_the_loop'"
        else:
            rt.define("sluggish", "s", {})
            assert rt.call_method("s", "think", {}) == {"done": True}
            label = "s.think"
    assert time.monotonic() - started < 30, "the stall was never reported"
    fields = caught.records[0].ferrule_fields
    assert fields["target"] == label
    assert fields["plugin"] == "ferrule-blocking"
    assert fields["where"] == f"{__file__}:{WAIT_LINES[target]}"  # the plugin's own line


def test_the_watchdog_is_off_at_zero(monkeypatch) -> None:
    monkeypatch.setenv("FERRULE_LOOP_STALL_SECONDS", "0")
    REPORTED.set()  # the plugin does not block

    def watchdogs() -> int:  # (other tests' Runtimes may still run theirs)
        return sum(t.name == "ferrule-runtime-watchdog" for t in threading.enumerate())

    before = watchdogs()
    with runtime() as rt:
        assert rt.call("blocks_the_loop", {}) == {"done": True}  # the loop is started
        assert watchdogs() == before


def idle_loop() -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
    """A loop in a thread of its own, returned once that thread waits in the selector."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while True:
        frame = sys._current_frames().get(thread.ident or 0)
        if frame is not None and frame.f_code.co_name in ("select", "poll"):
            return loop, thread
        assert time.monotonic() < deadline, "the loop never waited in its selector"
        time.sleep(0.01)


def test_a_loop_waiting_in_its_selector_is_not_a_stall_and_blames_no_plugin(caught) -> None:
    # What a starved loop looks like to the watchdog (a busy machine, or another thread
    # holding the GIL): its stamp is overdue while its thread sits in the selector's wait.
    loop, thread = idle_loop()
    watchdog = Watchdog(loop, thread, after=0.2)  # not started: nothing renews its stamp
    watchdog.beat -= 5
    holding, gate = threading.Event(), threading.Lock()
    gate.acquire()

    def blocks() -> None:
        holding.set()
        gate.acquire(timeout=30)  # (a C call: the innermost Python line is this one)

    try:
        watchdog.check()
        assert caught.records == []
        # The same overdue stamp with a callback holding the loop is a stall, named there.
        loop.call_soon_threadsafe(blocks)
        assert holding.wait(30)
        watchdog.check()
    finally:
        gate.release()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
    fields = caught.records[0].ferrule_fields
    assert fields["where"] == f"{__file__}:{blocks.__code__.co_firstlineno + 2}"
    assert fields["plugin"] is None
    assert "plugin" not in fields["hint"]
