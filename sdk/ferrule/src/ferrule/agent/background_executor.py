"""Agno's ``Agent.background_executor``: the agent's own thread pool for work that should
not hold up its caller (three workers, their threads named ``ferrule-bg-N``), made on first
use. An agent's memory and summary updates are coroutines on its loop, not threads, so they
do not use it: it is there for what the caller submits (``agent.background_executor.submit(
fn, ...)``), as Agno's users do. `Agent.delete` / `adelete` (and leaving ``with agent:``)
shut it down, waiting for what was submitted and letting nothing new in; a later use makes
a new one. `Agent.deep_copy` gives the copy none: it makes its own when it needs one."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

#: Makes the first use of each agent's pool one pool, whichever threads ask at once.
_making = threading.Lock()

WORKERS = 3
THREAD_NAME_PREFIX = "ferrule-bg"


class BackgroundExecutor:
    """`Agent`'s ``background_executor`` (see the module docstring)."""

    _background_pool: ThreadPoolExecutor | None = None

    @property
    def background_executor(self) -> ThreadPoolExecutor:
        """The agent's thread pool for background work (made on first use; shut down by
        `Agent.delete`)."""
        with _making:
            if self._background_pool is None:
                self._background_pool = ThreadPoolExecutor(
                    max_workers=WORKERS, thread_name_prefix=THREAD_NAME_PREFIX
                )
            return self._background_pool


def close_background_executor(owner: BackgroundExecutor) -> None:
    """Shut ``owner``'s pool down (if it made one), waiting for the work already submitted
    to end (not when called from a pool's own thread, which cannot wait for itself)."""
    with _making:
        pool, owner._background_pool = owner._background_pool, None
    if pool is not None:
        own_thread = threading.current_thread().name.startswith(THREAD_NAME_PREFIX)
        pool.shutdown(wait=not own_thread)
