"""Run cancellation by id, through a replaceable manager (Agno's ``agno.run.cancel`` and
``agno.run.cancellation_management``): `BaseRunCancellationManager`, what a manager does;
`InMemoryRunCancellationManager`, the one ferrule installs; the process-wide setting of which
manager runs use (`installed_manager`, `install_manager`); and what an agent run asks of it
(`register`, `cancelled`, `release`), its failures contained.

A run registers its id with the installed manager when it starts, asks it whether the run was
cancelled at each of its checkpoints (the loop's), and is removed from it when it ends or
pauses; a manager that keeps its state elsewhere (a file, a database) lets another process
cancel a run. Which manager is installed is the one process-wide setting here (as Agno's
API has it): a run keeps the manager it registered with until it ends.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod

from ferrule_kernel import FerruleError, InvalidInputError, get_logger, register_error_kind

from ..exceptions import RunCancelledException

log = get_logger("ferrule.agent")


class BaseRunCancellationManager(ABC):
    """Where runs' cancellation is kept: subclass it (every method, each with its async
    twin) and install an instance with ``set_cancellation_manager`` for runs to use it.

    An agent run calls ``aregister_run`` as it starts, ``araise_if_cancelled`` at each
    checkpoint (a `RunCancelledException` from it cancels the run) and ``acleanup_run`` as
    it ends; ``cancel_run`` is what ``Agent.cancel_run`` and ``ferrule.run.cancel.cancel_run``
    call. The async twins are the ones a run calls, on the runtime's event loop: they should
    not block for long."""

    @abstractmethod
    def register_run(self, run_id: str) -> None:
        """Track ``run_id`` as not cancelled, keeping a cancellation recorded before it."""

    @abstractmethod
    async def aregister_run(self, run_id: str) -> None:
        """`register_run` for async callers (what a run calls)."""

    @abstractmethod
    def cancel_run(self, run_id: str) -> bool:
        """Record that ``run_id`` is cancelled, registered or not (a run not started yet
        ends at its first checkpoint); True when it was registered."""

    @abstractmethod
    async def acancel_run(self, run_id: str) -> bool:
        """`cancel_run` for async callers."""

    @abstractmethod
    def is_cancelled(self, run_id: str) -> bool:
        """Whether ``run_id`` was cancelled."""

    @abstractmethod
    async def ais_cancelled(self, run_id: str) -> bool:
        """`is_cancelled` for async callers."""

    @abstractmethod
    def cleanup_run(self, run_id: str) -> None:
        """Stop tracking ``run_id`` (its run ended)."""

    @abstractmethod
    async def acleanup_run(self, run_id: str) -> None:
        """`cleanup_run` for async callers (what a run calls)."""

    @abstractmethod
    def raise_if_cancelled(self, run_id: str) -> None:
        """Raise `RunCancelledException` when ``run_id`` was cancelled."""

    @abstractmethod
    async def araise_if_cancelled(self, run_id: str) -> None:
        """`raise_if_cancelled` for async callers (a run's checkpoint)."""

    @abstractmethod
    def get_active_runs(self) -> dict[str, bool]:
        """Every tracked run id, with whether it was cancelled."""

    @abstractmethod
    async def aget_active_runs(self) -> dict[str, bool]:
        """`get_active_runs` for async callers."""


class InMemoryRunCancellationManager(BaseRunCancellationManager):
    """The runs of this process (id -> cancelled), in a dict; safe to call from any thread
    and any event loop: a change takes a short lock (its async twins the same one), a read
    (each run's checkpoints) is one dict look-up."""

    def __init__(self) -> None:
        self._cancelled: dict[str, bool] = {}
        self._lock = threading.Lock()

    def register_run(self, run_id: str) -> None:
        with self._lock:
            self._cancelled.setdefault(run_id, False)

    async def aregister_run(self, run_id: str) -> None:
        self.register_run(run_id)

    def cancel_run(self, run_id: str) -> bool:
        with self._lock:
            known = run_id in self._cancelled
            self._cancelled[run_id] = True
        return known

    async def acancel_run(self, run_id: str) -> bool:
        return self.cancel_run(run_id)

    def is_cancelled(self, run_id: str) -> bool:
        return self._cancelled.get(run_id, False)

    async def ais_cancelled(self, run_id: str) -> bool:
        return self.is_cancelled(run_id)

    def cleanup_run(self, run_id: str) -> None:
        with self._lock:
            self._cancelled.pop(run_id, None)

    async def acleanup_run(self, run_id: str) -> None:
        self.cleanup_run(run_id)

    def raise_if_cancelled(self, run_id: str) -> None:
        if self.is_cancelled(run_id):
            raise RunCancelledException(f"Run {run_id} was cancelled")

    async def araise_if_cancelled(self, run_id: str) -> None:
        self.raise_if_cancelled(run_id)

    def get_active_runs(self) -> dict[str, bool]:
        with self._lock:
            return dict(self._cancelled)

    async def aget_active_runs(self) -> dict[str, bool]:
        return self.get_active_runs()


@register_error_kind
class CancellationManagerError(FerruleError):
    """The installed cancellation manager failed while a run asked it something (to
    register the run, or whether it was cancelled): the run ends with this error.
    ``details``: ``manager`` (its class's name) and ``method``."""

    kind = "cancellation_manager_failed"


#: The manager runs use: the one process-wide setting of cancellation (Agno's).
_installed: list[BaseRunCancellationManager] = [InMemoryRunCancellationManager()]


def installed_manager() -> BaseRunCancellationManager:
    """The manager runs started from now register with."""
    return _installed[0]


def install_manager(manager: BaseRunCancellationManager) -> None:
    """Make ``manager`` the one runs use from now on (runs already started keep theirs)."""
    if not isinstance(manager, BaseRunCancellationManager):
        raise InvalidInputError(
            "must be an instance of a BaseRunCancellationManager subclass "
            f"(ferrule.run.cancellation_management.base), not {type(manager).__name__}",
            field="manager",
        )
    _installed[0] = manager


def manager_failed(
    manager: BaseRunCancellationManager, method: str, run_id: str, exc: Exception
) -> CancellationManagerError:
    return CancellationManagerError(
        f"the cancellation manager {type(manager).__name__} failed in {method}: "
        f"{type(exc).__name__}: {exc}",
        manager=type(manager).__name__,
        method=method,
        run_id=run_id,
    )


def cancels_here(manager: BaseRunCancellationManager | None) -> bool:
    """Whether a run need not ask ``manager`` while its model streams: none, or ferrule's
    own in-memory manager, which only this process cancels through, and
    `ferrule.run.cancel.cancel_run` / `Agent.cancel_run` stop the run at once as they
    record the cancel (one recorded on the manager object itself is seen at the run's next
    step)."""
    return manager is None or type(manager) is InMemoryRunCancellationManager


async def register(manager: BaseRunCancellationManager, run_id: str) -> None:
    """Register a starting run with ``manager`` (`CancellationManagerError` if it fails)."""
    try:
        await manager.aregister_run(run_id)
    except Exception as exc:
        raise manager_failed(manager, "aregister_run", run_id, exc) from exc


async def cancelled(manager: BaseRunCancellationManager, run_id: str) -> bool:
    """A run's checkpoint: whether ``manager`` says it was cancelled (it raised
    `RunCancelledException`); `CancellationManagerError` if it fails otherwise."""
    try:
        await manager.araise_if_cancelled(run_id)
    except RunCancelledException:
        return True
    except Exception as exc:
        raise manager_failed(manager, "araise_if_cancelled", run_id, exc) from exc
    return False


async def release(manager: BaseRunCancellationManager, run_id: str) -> None:
    """Remove an ended run from ``manager``; a failure is logged (the run ended as it
    ended) and names the manager and the error's type only."""
    try:
        await manager.acleanup_run(run_id)
    except Exception as exc:
        log.warning(
            "cancellation_cleanup_failed",
            run_id=run_id,
            manager=type(manager).__name__,
            error=type(exc).__name__,
        )
