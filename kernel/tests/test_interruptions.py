"""Telling a plugin's `KeyboardInterrupt` / `CancelledError` from the user's Ctrl-C and the
caller's cancellation: the first ends the request with a typed error, the others go on."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from typing import Any

import attrs
import pytest
from ferrule_kernel import Kernel, OperatorSpec, PluginError, hookimpl


@attrs.frozen
class Nothing:
    pass


def interrupt(inputs: Nothing) -> dict[str, Any]:
    raise KeyboardInterrupt


async def cancelled_inside(inputs: Nothing) -> dict[str, Any]:
    # A plugin that awaited something that was cancelled, and let the error out.
    inner = asyncio.ensure_future(asyncio.sleep(10))
    inner.cancel()
    await inner
    return {}


async def sleep_long(inputs: Nothing) -> dict[str, Any]:
    await asyncio.sleep(30)
    return {}


def leak_secret(inputs: Nothing) -> dict[str, Any]:
    token = os.environ["SOME_SERVICE_TOKEN"]
    raise ValueError(
        f"GET https://user:hunter2@internal/x?api_key=k3y-v4lue failed (token in use: {token})"
    )


class InterruptPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [
            OperatorSpec("interrupt", interrupt, Nothing),
            OperatorSpec("interrupt_inline", interrupt, Nothing, blocking=False),
            OperatorSpec("cancelled_inside", cancelled_inside, Nothing),
            OperatorSpec("sleep_long", sleep_long, Nothing),
            OperatorSpec("leak_secret", leak_secret, Nothing),
        ]


@pytest.fixture
def kernel() -> Kernel:
    return Kernel(plugins=[InterruptPlugin()], load_entry_points=False)


def test_keyboard_interrupt_in_the_main_thread_is_the_users_ctrl_c(kernel, ctrl_c_raises):
    # Python's default SIGINT handler raises KeyboardInterrupt in the main thread: there the
    # kernel cannot tell a Ctrl-C from the plugin's own, and must not swallow a Ctrl-C.
    # (ctrl_c_raises: that handler, also where the suite runs with SIGINT ignored)
    assert threading.current_thread() is threading.main_thread()
    with pytest.raises(KeyboardInterrupt):
        kernel.prepare("interrupt", {}).run_inline()


def test_keyboard_interrupt_where_no_ctrl_c_can_land_is_the_plugins_failure(kernel):
    # Off the main thread ...
    caught: list[BaseException] = []

    def other_thread() -> None:
        try:
            kernel.prepare("interrupt", {}).run_inline()
        except BaseException as exc:
            caught.append(exc)

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join(10)
    assert isinstance(caught[0], PluginError)
    assert caught[0].message.startswith("operator 'interrupt' failed in plugin ")
    assert caught[0].message.endswith(": KeyboardInterrupt")
    # ... and in the main thread while SIGINT is handled by someone else (a server,
    # asyncio.run), or ignored (a process started by nohup or as a script's background job)
    for handler in (lambda *_: None, signal.SIG_IGN):
        previous = signal.signal(signal.SIGINT, handler)
        try:
            with pytest.raises(PluginError, match="KeyboardInterrupt"):
                kernel.prepare("interrupt", {}).run_inline()
        finally:
            signal.signal(signal.SIGINT, previous)


async def test_keyboard_interrupt_in_a_worker_thread_is_the_plugins_failure(kernel):
    with pytest.raises(PluginError, match="KeyboardInterrupt"):
        await kernel.call("interrupt", {})


async def test_a_cancelled_error_the_plugin_raised_is_its_failure(kernel):
    if not hasattr(asyncio.Task, "cancelling"):
        pytest.skip("before Python 3.11 a task cannot tell whose cancellation it is")
    with pytest.raises(PluginError, match="CancelledError"):
        await kernel.call("cancelled_inside", {})


async def test_cancelling_the_request_still_cancels_it(kernel):
    task = asyncio.ensure_future(kernel.call("sleep_long", {}))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(kernel.call("sleep_long", {}), 0.01)


async def test_secrets_in_a_plugins_exception_text_are_scrubbed(kernel, monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789")
    with pytest.raises(PluginError) as info:
        await kernel.call("leak_secret", {})
    message = info.value.message
    assert message.endswith(
        "ValueError: GET https://***@internal/x?api_key=*** failed (token in use: ***)"
    )
    assert "hunter2" in str(info.value.__cause__)  # the cause stays whole, in this process
