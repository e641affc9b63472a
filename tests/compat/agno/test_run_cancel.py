"""Agno's ``agno.run.cancel`` over ferrule's runs with the default (in-memory) manager: a
running agent run cancelled by id from another thread (the scripted test model streams
slowly), and the register / cancel / check / clean-up bookkeeping a custom runner uses, sync
and async. Custom managers: test_run_cancellation_manager.py."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.exceptions import RunCancelledException
from ferrule.run import get_cancellation_manager
from ferrule.run.agent import RunCancelledEvent
from ferrule.run.cancel import (
    acancel_run,
    acleanup_run,
    aget_active_runs,
    ais_cancelled,
    araise_if_cancelled,
    aregister_run,
    cancel_run,
    cleanup_run,
    get_active_runs,
    is_cancelled,
    raise_if_cancelled,
    register_run,
)
from ferrule.run.cancellation_management import InMemoryRunCancellationManager
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def test_cancel_run_stops_a_running_agent_run_from_another_thread(rt):
    slow = TestModel([{"text": "one two three four five six", "delay": 0.2}])
    with Agent(rt, slow) as agent:
        stream = agent.run("go", stream=True, stream_events=True)
        seen: dict[str, Any] = {}

        def cancel() -> None:
            seen["active"] = get_active_runs()
            seen["cancelled"] = cancel_run(stream.run_id)

        timer = threading.Timer(0.5, cancel)
        timer.start()
        events = list(stream)
        timer.join()
    # the process's manager may hold other tests' runs: this one was running, not cancelled
    assert seen["active"][stream.run_id] is False and seen["cancelled"] is True
    assert isinstance(events[-1], RunCancelledEvent)
    streamed = "".join(getattr(e, "content", None) or "" for e in events[:-1])
    assert streamed != "one two three four five six"  # stopped before its last piece
    assert stream.output.status == "cancelled"
    # the ended run was cleaned up: no longer tracked, so no longer cancelled either
    assert stream.run_id not in get_active_runs() and not is_cancelled(stream.run_id)


def test_a_runner_registers_checks_and_cleans_up_its_runs():
    run_id = f"job-{uuid.uuid4().hex}"
    register_run(run_id)
    assert get_active_runs()[run_id] is False and not is_cancelled(run_id)
    raise_if_cancelled(run_id)  # not cancelled: nothing raised
    assert cancel_run(run_id) is True
    with pytest.raises(RunCancelledException, match=run_id):
        raise_if_cancelled(run_id)
    cleanup_run(run_id)
    assert run_id not in get_active_runs() and not is_cancelled(run_id)
    # an id nobody registered: the intent is kept, and False says it was unknown
    later = f"job-{uuid.uuid4().hex}"
    assert cancel_run(later) is False and is_cancelled(later)
    register_run(later)  # registering keeps the intent
    assert is_cancelled(later)
    cleanup_run(later)


def test_the_async_twins_share_the_same_manager():
    async def main() -> None:
        run_id = f"job-{uuid.uuid4().hex}"
        await aregister_run(run_id)
        assert (await aget_active_runs())[run_id] is False
        assert await acancel_run(run_id) is True and await ais_cancelled(run_id)
        with pytest.raises(RunCancelledException):
            await araise_if_cancelled(run_id)
        await acleanup_run(run_id)
        assert not is_cancelled(run_id)

    asyncio.run(main())
    manager = get_cancellation_manager()
    assert isinstance(manager, InMemoryRunCancellationManager)
    assert manager is get_cancellation_manager()
