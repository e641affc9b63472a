"""Agno's custom cancellation managers on ferrule's runs (``set_cancellation_manager`` with a
`BaseRunCancellationManager` subclass): real agent runs on the scripted test model, streaming
slowly, cancelled through the installed manager from another thread, another event-loop task
and another process (a manager keeping cancellations in a JSON file); each run registers,
is asked at its checkpoints through the async twins, and is cleaned up; a failing manager
ends only its run, with a typed error; bad arguments are refused, naming them."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.exceptions import RunCancelledException
from ferrule.run.agent import RunCancelledEvent, RunContentEvent, RunErrorEvent
from ferrule.run.cancel import (
    CancellationManagerError,
    acancel_run,
    cancel_run,
    get_active_runs,
    get_cancellation_manager,
    set_cancellation_manager,
)
from ferrule.run.cancellation_management import (
    BaseRunCancellationManager,
    InMemoryRunCancellationManager,
    RedisRunCancellationManager,
)
from ferrule.tools import tool
from ferrule.tools.tool_context import RunContext
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError
from ferrule_testmodel import TestModel

HERE = Path(__file__).resolve().parent
#: A reply of 200 words, one every 0.1 s: a run that is still streaming when it is cancelled.
LONG = " ".join(f"word{i}" for i in range(200))


class FileCancellationManager(BaseRunCancellationManager):
    """Cancellations kept in a JSON file (id -> cancelled), shared by every process that
    opens it: a read-modify-write holds an exclusive lock on a lock file beside it, and each
    write replaces the file whole, so a reader never sees half of one."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_suffix(".lock")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, bool]]:
        with open(self.lock_path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._read()
            yield state
            scratch = self.path.with_suffix(f".{os.getpid()}.tmp")
            scratch.write_text(json.dumps(state))
            os.replace(scratch, self.path)

    def _read(self) -> dict[str, bool]:
        try:
            return dict(json.loads(self.path.read_text()))
        except FileNotFoundError:
            return {}

    def register_run(self, run_id: str) -> None:
        with self._locked() as state:
            state.setdefault(run_id, False)

    async def aregister_run(self, run_id: str) -> None:
        self.register_run(run_id)

    def cancel_run(self, run_id: str) -> bool:
        with self._locked() as state:
            known = run_id in state
            state[run_id] = True
        return known

    async def acancel_run(self, run_id: str) -> bool:
        return self.cancel_run(run_id)

    def is_cancelled(self, run_id: str) -> bool:
        return self._read().get(run_id, False)

    async def ais_cancelled(self, run_id: str) -> bool:
        return self.is_cancelled(run_id)

    def cleanup_run(self, run_id: str) -> None:
        with self._locked() as state:
            state.pop(run_id, None)

    async def acleanup_run(self, run_id: str) -> None:
        self.cleanup_run(run_id)

    def raise_if_cancelled(self, run_id: str) -> None:
        if self.is_cancelled(run_id):
            raise RunCancelledException(f"run {run_id} was cancelled (file)")

    async def araise_if_cancelled(self, run_id: str) -> None:
        self.raise_if_cancelled(run_id)

    def get_active_runs(self) -> dict[str, bool]:
        return self._read()

    async def aget_active_runs(self) -> dict[str, bool]:
        return self.get_active_runs()


class RecordingManager(BaseRunCancellationManager):
    """An in-memory manager recording which of its methods were called (each twin calls
    the inner manager's own, so a call is recorded once)."""

    def __init__(self) -> None:
        self.inner = InMemoryRunCancellationManager()
        self.calls: list[str] = []

    def register_run(self, run_id: str) -> None:
        self.calls.append("register_run")
        self.inner.register_run(run_id)

    async def aregister_run(self, run_id: str) -> None:
        self.calls.append("aregister_run")
        await self.inner.aregister_run(run_id)

    def cancel_run(self, run_id: str) -> bool:
        self.calls.append("cancel_run")
        return self.inner.cancel_run(run_id)

    async def acancel_run(self, run_id: str) -> bool:
        self.calls.append("acancel_run")
        return await self.inner.acancel_run(run_id)

    def is_cancelled(self, run_id: str) -> bool:
        self.calls.append("is_cancelled")
        return self.inner.is_cancelled(run_id)

    async def ais_cancelled(self, run_id: str) -> bool:
        self.calls.append("ais_cancelled")
        return await self.inner.ais_cancelled(run_id)

    def cleanup_run(self, run_id: str) -> None:
        self.calls.append("cleanup_run")
        self.inner.cleanup_run(run_id)

    async def acleanup_run(self, run_id: str) -> None:
        self.calls.append("acleanup_run")
        await self.inner.acleanup_run(run_id)

    def raise_if_cancelled(self, run_id: str) -> None:
        self.calls.append("raise_if_cancelled")
        self.inner.raise_if_cancelled(run_id)

    async def araise_if_cancelled(self, run_id: str) -> None:
        self.calls.append("araise_if_cancelled")
        await self.inner.araise_if_cancelled(run_id)

    def get_active_runs(self) -> dict[str, bool]:
        return self.inner.get_active_runs()

    async def aget_active_runs(self) -> dict[str, bool]:
        return await self.inner.aget_active_runs()


class FailingManager(InMemoryRunCancellationManager):
    """The in-memory manager whose ``failing`` method raises."""

    def __init__(self, failing: str) -> None:
        super().__init__()
        self.failing = failing

    def __getattribute__(self, name: str) -> Any:
        if name == object.__getattribute__(self, "failing"):
            raise ConnectionError("the cancellation store is down")
        return object.__getattribute__(self, name)


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def install() -> Iterator[Any]:
    """Install a manager for one test; the one before is put back after it."""
    before = get_cancellation_manager()
    yield set_cancellation_manager
    set_cancellation_manager(before)


def wait_until(condition: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def consume_in_thread(stream: Any) -> tuple[threading.Thread, list[Any]]:
    events: list[Any] = []
    thread = threading.Thread(target=lambda: events.extend(stream), daemon=True)
    thread.start()
    return thread, events


def streamed_text(events: list[Any]) -> str:
    return "".join(e.content for e in events if isinstance(e, RunContentEvent))


def test_a_run_cancelled_through_the_manager_from_another_thread_stops_there(rt, install):
    manager = RecordingManager()
    install(manager)
    assert get_cancellation_manager() is manager
    with Agent(rt, TestModel([{"text": LONG, "delay": 0.1}])) as agent:
        stream = agent.run("go", stream=True)
        thread, events = consume_in_thread(stream)
        wait_until(lambda: streamed_text(events))  # registered, and streaming
        assert manager.get_active_runs() == {stream.run_id: False}
        # straight to the manager, as another component sharing it would: not through
        # Agent.cancel_run, which also stops the run itself
        assert manager.cancel_run(stream.run_id) is True
        thread.join(30)
    assert not thread.is_alive()
    assert isinstance(events[-1], RunCancelledEvent)
    assert stream.output.status == "cancelled"
    assert len(streamed_text(events).split()) < 200  # it stopped mid-reply
    run_calls = [c for c in manager.calls if c != "cancel_run"]
    # the run used the async twins: registered, asked at its checkpoints, cleaned up
    assert run_calls[0] == "aregister_run" and run_calls[-1] == "acleanup_run"
    assert set(run_calls[1:-1]) == {"araise_if_cancelled"} and len(run_calls) > 3
    assert manager.get_active_runs() == {}


FILE_CANCEL = """
import sys
sys.path.insert(0, sys.argv[1])
from test_run_cancellation_manager import FileCancellationManager
from ferrule.run.cancel import cancel_run, set_cancellation_manager

set_cancellation_manager(FileCancellationManager(sys.argv[2]))
print(cancel_run(sys.argv[3]))
"""


def test_another_process_cancels_a_run_through_a_file_manager(rt, install, tmp_path):
    state = tmp_path / "runs.json"
    manager = FileCancellationManager(state)
    install(manager)
    with Agent(rt, TestModel([{"text": LONG, "delay": 0.1}])) as agent:
        stream = agent.run("go", stream=True, stream_events=True)
        thread, events = consume_in_thread(stream)
        wait_until(lambda: json.loads(state.read_text() if state.exists() else "{}"))
        assert manager.get_active_runs() == {stream.run_id: False}
        other = subprocess.run(
            [sys.executable, "-c", FILE_CANCEL, str(HERE), str(state), stream.run_id],
            capture_output=True,
            text=True,
            timeout=120,
        )
        thread.join(30)
    assert other.returncode == 0, other.stderr
    assert other.stdout.strip() == "True"  # the other process found the run registered
    assert not thread.is_alive()
    assert isinstance(events[-1], RunCancelledEvent)
    assert stream.output.status == "cancelled"
    assert len(streamed_text(events).split()) < 200
    assert json.loads(state.read_text()) == {}  # the run cleaned up after itself


def test_a_run_cancelled_before_it_starts_never_asks_the_model(rt, install):
    manager = InMemoryRunCancellationManager()
    install(manager)
    asked: list[Any] = []

    def model(request: Any) -> str:
        asked.append(request)
        return "hello"

    run_id = f"job-{uuid.uuid4().hex}"
    assert cancel_run(run_id) is False  # unknown yet: the intent is kept
    with Agent(rt, TestModel(function=model)) as agent:
        output = agent.run("go", run_id=run_id)
    assert output.status == "cancelled" and asked == []
    assert manager.get_active_runs() == {}


def test_a_tool_batch_is_followed_by_a_checkpoint(rt, install):
    manager = InMemoryRunCancellationManager()
    install(manager)
    asked: list[Any] = []

    def model(request: Any) -> Any:
        asked.append(request)
        return {"tool_calls": [{"name": "stop_me", "arguments": {}}]}

    def stop_me(run_context: RunContext) -> str:
        """Cancel the run making this call, through the manager."""
        assert run_context.run_id is not None
        manager.cancel_run(run_context.run_id)
        return "stopping"

    with Agent(rt, TestModel(function=model), tools=[stop_me]) as agent:
        output = agent.run("go")
    assert output.status == "cancelled"
    assert len(asked) == 1  # the model was not asked again after the tool ran
    assert output.tools is not None and output.tools[0].result == "stopping"


def test_a_paused_run_cancelled_while_it_waits_ends_cancelled_when_continued(rt, install):
    manager = RecordingManager()
    install(manager)
    shipped: list[str] = []

    @tool(requires_confirmation=True)
    def ship(box: str) -> str:
        """Ship a box."""
        shipped.append(box)
        return f"shipped {box}"

    script = [{"tool_calls": [{"name": "ship", "arguments": {"box": "b1"}}]}, "Done."]
    with Agent(rt, TestModel(script), tools=[ship]) as agent:
        paused = agent.run("ship b1")
        assert paused.status == "paused"
        assert manager.get_active_runs() == {}  # a pause leaves the manager
        assert cancel_run(paused.run_id) is False  # kept for when it resumes
        continued = agent.continue_run(run_id=paused.run_id, confirm=True)
    assert continued.status == "cancelled" and shipped == []
    assert manager.calls.count("aregister_run") == manager.calls.count("acleanup_run") == 2
    assert manager.get_active_runs() == {}


def test_async_runs_are_cancelled_through_the_async_twins(rt, install):
    manager = RecordingManager()
    install(manager)

    async def main() -> tuple[list[Any], Any]:
        with Agent(rt, TestModel([{"text": LONG, "delay": 0.1}])) as agent:
            stream = agent.arun("go", stream=True)
            events: list[Any] = []

            async def cancel_when_streaming() -> bool:
                while not streamed_text(events):
                    await asyncio.sleep(0.02)
                return await acancel_run(stream.run_id)

            canceller = asyncio.ensure_future(cancel_when_streaming())
            async for event in stream:
                events.append(event)
            assert await canceller is True
            return events, stream.output

    events, output = asyncio.run(main())
    assert isinstance(events[-1], RunCancelledEvent) and output.status == "cancelled"
    assert "acancel_run" in manager.calls and "cancel_run" not in manager.calls
    assert {"register_run", "raise_if_cancelled", "cleanup_run"}.isdisjoint(manager.calls)
    assert manager.get_active_runs() == {}


def test_every_run_is_cleaned_up_however_it_ends(rt, install):
    manager = RecordingManager()
    install(manager)
    active_during: list[dict[str, bool]] = []

    def model(request: Any) -> Any:
        active_during.append(get_active_runs())
        if len(active_during) == 1:
            return "done"
        return {"text": "", "error": "the provider broke"}

    failed = f"job-{uuid.uuid4().hex}"
    with Agent(rt, TestModel(function=model)) as agent:
        completed = agent.run("one")
        broken = agent.run("two", run_id=failed)
    assert broken.status == "error" and isinstance(broken.error, ModelError)
    assert broken.content == "the provider broke"
    assert completed.status == "completed"
    assert active_during == [{completed.run_id: False}, {failed: False}]
    assert manager.calls.count("aregister_run") == manager.calls.count("acleanup_run") == 2
    assert manager.get_active_runs() == {}


@pytest.mark.parametrize("failing", ["aregister_run", "araise_if_cancelled"])
def test_a_failing_manager_ends_its_run_with_a_typed_error(rt, install, failing):
    install(FailingManager(failing))
    with Agent(rt, TestModel(["never sent"])) as agent:
        stream = agent.run("go", stream=True)
        events = list(stream)
        output = stream.output
    assert isinstance(events[-1], RunErrorEvent)
    assert output.status == "error"
    error = output.error
    assert isinstance(error, CancellationManagerError)
    assert error.details["manager"] == "FailingManager" and error.details["method"] == failing
    assert "ConnectionError: the cancellation store is down" in error.message
    # the runtime goes on: the default manager back, a run completes
    set_cancellation_manager(InMemoryRunCancellationManager())
    with Agent(rt, TestModel(["fine"])) as agent:
        assert agent.run("again").content == "fine"


def test_a_manager_failing_to_clean_up_is_logged_and_the_run_stands(rt, install, caplog):
    caplog.set_level(logging.WARNING, logger="ferrule")
    install(FailingManager("acleanup_run"))
    with Agent(rt, TestModel(["fine"])) as agent:
        output = agent.run("go")
    assert output.status == "completed" and output.content == "fine"
    failed = [r for r in caplog.records if r.getMessage().startswith("cancellation_cleanup")]
    assert len(failed) == 1
    logged = failed[0].getMessage()
    assert "FailingManager" in logged and "ConnectionError" in logged
    assert "store is down" not in logged  # the error's text (a secret, maybe) is not


def test_cancel_run_stops_a_local_run_even_when_the_manager_fails(rt, install):
    install(FailingManager("cancel_run"))
    with Agent(rt, TestModel([{"text": LONG, "delay": 0.1}])) as agent:
        stream = agent.run("go", stream=True)
        thread, events = consume_in_thread(stream)
        wait_until(lambda: streamed_text(events))
        with pytest.raises(ConnectionError):  # the caller's own manager: its error
            Agent.cancel_run(stream.run_id)
        thread.join(30)
    assert stream.output.status == "cancelled" and isinstance(events[-1], RunCancelledEvent)


@pytest.mark.parametrize(
    "bad",
    [object(), None, InMemoryRunCancellationManager, "redis://localhost:6379"],
    ids=["object", "none", "a-class", "a-url"],
)
def test_set_cancellation_manager_refuses_anything_but_a_manager(install, bad):
    before = get_cancellation_manager()
    with pytest.raises(InvalidInputError, match="BaseRunCancellationManager") as raised:
        set_cancellation_manager(bad)
    assert raised.value.errors[0]["path"] == "manager"
    assert get_cancellation_manager() is before  # nothing changed


def test_a_manager_must_implement_every_method():
    class Partial(BaseRunCancellationManager):
        def register_run(self, run_id: str) -> None:
            pass

    with pytest.raises(TypeError, match="abstract"):
        Partial()  # type: ignore[abstract]


def test_the_redis_manager_is_refused_naming_the_way():
    with pytest.raises(InvalidInputError, match="subclass BaseRunCancellationManager"):
        RedisRunCancellationManager(redis_url="redis://localhost:6379")
