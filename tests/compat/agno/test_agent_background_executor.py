"""Agno's ``Agent.background_executor``: the agent's own thread pool (three workers named
``ferrule-bg-<agent>_N``), made on first use, shut down by ``delete`` / ``adelete`` / leaving
``with agent:`` (waiting for the work already submitted), never shared with a
``deep_copy``. Runs real agents on the scripted `TestModel`, from the pool's threads too."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from ferrule.agent import Agent
from ferrule_testmodel import TestModel


def test_made_on_first_use_once_with_three_named_workers():
    agent = Agent(model=TestModel())
    assert vars(agent).get("_background_pool") is None
    pool = agent.background_executor
    assert isinstance(pool, ThreadPoolExecutor)
    assert agent.background_executor is pool
    # three jobs that each wait for the other two: they need three workers at once
    together = threading.Barrier(3, timeout=10)

    def meet() -> str:
        together.wait()
        return threading.current_thread().name

    names = [f.result(timeout=10) for f in [pool.submit(meet) for _ in range(3)]]
    assert len(set(names)) == 3 and all(n.startswith("ferrule-bg") for n in names)
    # never a fourth: thirty more jobs find the same three threads
    more = {f.result(timeout=10) for f in [pool.submit(meet_alone) for _ in range(30)]}
    assert more <= set(names)
    agent.delete()


def meet_alone() -> str:
    return threading.current_thread().name


def test_made_once_when_threads_ask_at_once():
    agent = Agent(model=TestModel())
    start = threading.Barrier(8, timeout=10)
    seen: list[ThreadPoolExecutor] = []

    def ask() -> None:
        start.wait()
        seen.append(agent.background_executor)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(seen) == 8 and all(pool is seen[0] for pool in seen)
    agent.delete()


def test_delete_waits_for_submitted_work_then_shuts_it_down():
    agent = Agent(model=TestModel(["Hello from the pool."]))
    pool = agent.background_executor
    run = pool.submit(agent.run, "hi")  # Agno's use: a run off the caller's thread
    slow = pool.submit(lambda: threading.Event().wait(0.2) or "slept")
    agent.delete()
    assert run.done() and slow.done()
    assert run.result().content == "Hello from the pool."
    assert slow.result() == "slept"
    with pytest.raises(RuntimeError):
        pool.submit(meet_alone)
    fresh = agent.background_executor  # a later use makes a new one
    assert fresh is not pool
    assert fresh.submit(meet_alone).result(timeout=10).startswith("ferrule-bg")
    agent.delete()
    with pytest.raises(RuntimeError):
        fresh.submit(meet_alone)


def test_leaving_with_and_adelete_shut_it_down():
    with Agent(model=TestModel()) as agent:
        pool = agent.background_executor
    with pytest.raises(RuntimeError):
        pool.submit(meet_alone)

    async def main() -> None:
        async with Agent(model=TestModel(["a"])) as agent:
            pool = agent.background_executor
            done = pool.submit(lambda: threading.Event().wait(0.1) or "done")
        assert done.result(timeout=0) == "done"  # adelete waited for it
        with pytest.raises(RuntimeError):
            pool.submit(meet_alone)

    asyncio.run(main())


def test_an_agent_deleted_from_its_own_pool_does_not_wait_for_itself():
    agent = Agent(model=TestModel(["a"]))
    agent.run("hi")
    pool = agent.background_executor
    pool.submit(agent.delete).result(timeout=30)
    with pytest.raises(RuntimeError):
        pool.submit(meet_alone)


def test_a_deep_copy_has_its_own():
    agent = Agent(model=TestModel())
    pool = agent.background_executor
    copy = agent.deep_copy()
    assert copy.background_executor is not pool
    copy.delete()
    assert pool.submit(meet_alone).result(timeout=10).startswith("ferrule-bg")
    agent.delete()


def test_runs_and_delete_make_none():
    agent = Agent(model=TestModel(["a"]))
    agent.run("hi")
    agent.delete()  # nothing made, nothing to wait for
    assert vars(agent).get("_background_pool") is None  # lazily made: never, here
