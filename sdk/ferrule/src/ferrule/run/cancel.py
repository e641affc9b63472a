"""Agno's ``agno.run.cancel``: cancel a run by id from anywhere in the process
(``cancel_run(run_id)``), and the bookkeeping a custom runner uses to honour cancellation
(``register_run``, ``is_cancelled``, ``raise_if_cancelled``, ``cleanup_run``,
``get_active_runs``), each with its ``a``-prefixed async twin.

It is one `RunCancellationManager` over ferrule's own runs: ``cancel_run`` stops a running
agent run (whichever agent and thread runs it: its stream ends with `RunCancelledEvent`,
its output has status ``cancelled``), as `Agent.cancel_run` does, and returns True; for an
id no agent is running it records the intent (False, as Agno's in-memory manager answers
for a run it had not registered), which ``is_cancelled`` and ``raise_if_cancelled`` then
report to the runner that registers that id. ``get_cancellation_manager`` returns the
manager. Agno's ``set_cancellation_manager`` (a Redis-backed manager shared by processes)
is refused: ferrule cancels the runs of its own process.
"""

from __future__ import annotations

import threading

from ferrule_kernel import InvalidInputError

from ..agent.state import request_cancel
from ..agent.stream import running_runs, started_run
from ..exceptions import RunCancelledException

__all__ = [
    "RunCancellationManager",
    "acancel_run",
    "acleanup_run",
    "aget_active_runs",
    "ais_cancelled",
    "araise_if_cancelled",
    "aregister_run",
    "cancel_run",
    "cleanup_run",
    "get_active_runs",
    "get_cancellation_manager",
    "is_cancelled",
    "raise_if_cancelled",
    "register_run",
    "set_cancellation_manager",
]


class RunCancellationManager:
    """The runs registered for cancellation (id -> cancelled), beside the agents' running
    runs, which are always tracked; safe to call from any thread."""

    def __init__(self) -> None:
        self._cancelled: dict[str, bool] = {}
        self._lock = threading.Lock()

    def register_run(self, run_id: str) -> None:
        """Track ``run_id`` as not cancelled (an intent recorded before stays)."""
        with self._lock:
            self._cancelled.setdefault(run_id, False)

    def cancel_run(self, run_id: str) -> bool:
        """Cancel ``run_id``: a running agent run stops (True); otherwise the intent is
        kept for its runner (True when it had registered the id)."""
        run = running_runs().get(run_id)
        if run is not None:
            request_cancel(run)  # the run itself knows it is cancelled from now on
            return True
        with self._lock:
            known = run_id in self._cancelled
            self._cancelled[run_id] = True
        return known

    def is_cancelled(self, run_id: str) -> bool:
        run = started_run(run_id)
        if run is not None and (run.cancel_requested or run.status == "cancelled"):
            return True
        with self._lock:
            return self._cancelled.get(run_id, False)

    def cleanup_run(self, run_id: str) -> None:
        """Stop tracking ``run_id`` (its run ended)."""
        with self._lock:
            self._cancelled.pop(run_id, None)

    def raise_if_cancelled(self, run_id: str) -> None:
        """Raise `RunCancelledException` when ``run_id`` was cancelled."""
        if self.is_cancelled(run_id):
            raise RunCancelledException(f"Run {run_id} was cancelled")

    def get_active_runs(self) -> dict[str, bool]:
        """Every tracked run, and every running agent run, with whether it was cancelled."""
        running = {run_id: run.cancel_requested for run_id, run in running_runs().items()}
        with self._lock:
            return {**running, **self._cancelled}


_MANAGER = RunCancellationManager()


def get_cancellation_manager() -> RunCancellationManager:
    """The process's manager, which the functions below use."""
    return _MANAGER


def set_cancellation_manager(manager: object) -> None:
    """Refused: ferrule cancels its own process's runs, through its one manager."""
    raise InvalidInputError(
        "ferrule cancels the runs of its own process (cancel_run(run_id), Agent.cancel_run); "
        "a custom cancellation manager is not supported",
        field="manager",
    )


def register_run(run_id: str) -> None:
    _MANAGER.register_run(run_id)


async def aregister_run(run_id: str) -> None:
    _MANAGER.register_run(run_id)


def cancel_run(run_id: str) -> bool:
    return _MANAGER.cancel_run(run_id)


async def acancel_run(run_id: str) -> bool:
    return _MANAGER.cancel_run(run_id)


def is_cancelled(run_id: str) -> bool:
    return _MANAGER.is_cancelled(run_id)


async def ais_cancelled(run_id: str) -> bool:
    return _MANAGER.is_cancelled(run_id)


def cleanup_run(run_id: str) -> None:
    _MANAGER.cleanup_run(run_id)


async def acleanup_run(run_id: str) -> None:
    _MANAGER.cleanup_run(run_id)


def raise_if_cancelled(run_id: str) -> None:
    _MANAGER.raise_if_cancelled(run_id)


async def araise_if_cancelled(run_id: str) -> None:
    _MANAGER.raise_if_cancelled(run_id)


def get_active_runs() -> dict[str, bool]:
    return _MANAGER.get_active_runs()


async def aget_active_runs() -> dict[str, bool]:
    return _MANAGER.get_active_runs()
