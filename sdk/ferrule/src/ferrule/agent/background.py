"""Agno's background runs: ``await agent.arun(input, background=True)`` stores the run as
``pending`` in the agent's db and returns its `RunOutput` at once, the run going on in a
task of the caller's loop (find it later with ``agent.aget_run_output(run_id)``, or
cancel it with ``Agent.acancel_run(run_id)``); with ``stream=True`` the events come
through a queue, and the run goes on when the reader stops reading. A background run
needs a db: it is refused without one, naming ``db``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from typing import Any

from ferrule_kernel import InvalidInputError

from .results import RunOutput, RunStatus
from .stream import AgentStream


def keep(tasks: set[asyncio.Task[Any]], task: asyncio.Task[Any]) -> None:
    """Hold ``task`` in ``tasks`` (the agent's: `runs.AgentRuns.background_tasks`) until it
    ends: a task only weakly referenced by its loop could be collected before it ends."""
    tasks.add(task)
    task.add_done_callback(tasks.discard)


def needs_db(db: Any) -> None:
    if db is None:
        raise InvalidInputError(
            "a background run is kept in the agent's db, where its caller finds it: give the "
            "agent one (Agent(..., db=SqliteDb(db_file=...))) or run it in the foreground",
            field="db",
        )


class BackgroundRun:
    """``await`` it: the run stored as pending, started in a task, its pending
    `RunOutput` returned."""

    def __init__(
        self,
        stream: AgentStream[Any, Any],
        store_pending: Callable[[RunOutput[Any]], Awaitable[None]],
        tasks: set[asyncio.Task[Any]],
    ) -> None:
        self.stream = stream
        self.store_pending = store_pending
        self.tasks = tasks

    def __await__(self) -> Generator[Any, None, RunOutput[Any]]:
        return self._start().__await__()

    async def _start(self) -> RunOutput[Any]:
        output = self.stream.output
        output.status = RunStatus.pending
        await self.store_pending(output)
        keep(self.tasks, asyncio.get_running_loop().create_task(self.stream.aresult()))
        return output


async def background_events(
    stream: AgentStream[Any, Any], tasks: set[asyncio.Task[Any]]
) -> AsyncIterator[Any]:
    """The events of ``stream``, read by a task of their own (held in ``tasks``): the run
    goes on to its end whether or not the caller reads them all."""
    queue: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for event in stream:
                queue.put_nowait((False, event))
        finally:
            queue.put_nowait((True, None))

    keep(tasks, asyncio.get_running_loop().create_task(pump()))
    while True:
        done, event = await queue.get()
        if done:
            return
        yield event
