"""Agno's ``Agent.background_executor``: the agent's own thread pool for work that should
not hold up its caller (three workers, their threads named ``ferrule-bg-<agent>_N``), made on first
use. An agent's memory and summary updates are coroutines on its loop, not threads, so they
do not use it: it is there for what the caller submits (``agent.background_executor.submit(
fn, ...)``), as Agno's users do. `Agent.delete` / `adelete` (and leaving ``with agent:``)
shut it down, waiting for what was submitted and letting nothing new in; a later use makes
a new one. `Agent.deep_copy` gives the copy none: it makes its own when it needs one.

`BackgroundExecutor` is a descriptor on `Agent` (a collaborator's state kept on the agent,
not a base class): each agent's pool and the lock that makes its first use one pool live
in that agent."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, overload

WORKERS = 3
THREAD_NAME_PREFIX = "ferrule-bg"
#: Where an agent keeps its pool and the lock guarding it.
_POOL, _LOCK = "_background_pool", "_background_lock"


def _prefix(agent: Any) -> str:
    """Its pool's thread names' start: ``ferrule-bg`` and the agent's own mark."""
    return f"{THREAD_NAME_PREFIX}-{id(agent):x}"


def _lock(agent: Any) -> threading.Lock:
    lock: threading.Lock | None = vars(agent).get(_LOCK)
    if lock is None:  # the first use: setdefault keeps one lock if two threads get here
        lock = vars(agent).setdefault(_LOCK, threading.Lock())
    return lock


class BackgroundExecutor:
    """``agent.background_executor`` (see the module docstring)."""

    @overload
    def __get__(self, agent: None, owner: type[Any] | None = None) -> BackgroundExecutor: ...
    @overload
    def __get__(self, agent: object, owner: type[Any] | None = None) -> ThreadPoolExecutor: ...
    def __get__(
        self, agent: object | None, owner: type[Any] | None = None
    ) -> BackgroundExecutor | ThreadPoolExecutor:
        """The agent's thread pool for background work (made on first use; shut down by
        `Agent.delete`)."""
        if agent is None:
            return self
        with _lock(agent):
            pool: ThreadPoolExecutor | None = vars(agent).get(_POOL)
            if pool is None:
                pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix=_prefix(agent))
                vars(agent)[_POOL] = pool
            return pool


def close_background_executor(agent: Any) -> None:
    """Shut ``agent``'s pool down (if it made one), waiting for the work already submitted
    to end (not when called from one of that pool's threads, which cannot wait for itself)."""
    with _lock(agent):
        pool: ThreadPoolExecutor | None = vars(agent).pop(_POOL, None)
    if pool is not None:
        own_thread = threading.current_thread().name.startswith(_prefix(agent) + "_")
        pool.shutdown(wait=not own_thread)
