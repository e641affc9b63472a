"""Agno's ``agno.run.cancel``: cancel a run by id from anywhere (``cancel_run(run_id)``),
the bookkeeping a custom runner uses to honour cancellation (``register_run``,
``is_cancelled``, ``raise_if_cancelled``, ``cleanup_run``, ``get_active_runs``), each with its
``a``-prefixed async twin, and the manager they all go to (``get_cancellation_manager``,
``set_cancellation_manager``).

The manager is the one process-wide setting of cancellation, as Agno's API has it: by
default an `InMemoryRunCancellationManager` (the runs of this process); install your own
`BaseRunCancellationManager` subclass (one that keeps cancellations in a file or a database,
so that another process can cancel a run) with ``set_cancellation_manager(manager)``. Every
agent run registers its id with the installed manager as it starts, asks it at each of its
checkpoints whether it was cancelled (each model request and each item the model streams,
each tool batch), and is removed from it when it ends; a cancelled run ends with status
``cancelled`` (a stream's last event `RunCancelledEvent`). ``cancel_run`` (as
``Agent.cancel_run``) records the cancellation with the manager and also stops a run of this
process at once. A manager that raises while a run asks it (to register, or at a checkpoint)
ends that run with `CancellationManagerError` (status ``error``); one that fails to clean up
is logged. The other functions here call the manager directly: its errors reach their caller.
"""

from __future__ import annotations

from ..agent.cancellation import (
    BaseRunCancellationManager,
    CancellationManagerError,
    install_manager,
    installed_manager,
)
from ..agent.stream import acancel_by_id, cancel_by_id

__all__ = [
    "CancellationManagerError",
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


def set_cancellation_manager(manager: BaseRunCancellationManager) -> None:
    """Make ``manager`` the process's cancellation manager: runs started from now register
    with it (a run already running keeps the one it registered with). Anything but a
    `BaseRunCancellationManager` is an `InvalidInputError` naming ``manager``."""
    install_manager(manager)


def get_cancellation_manager() -> BaseRunCancellationManager:
    """The process's cancellation manager, which the functions here use."""
    return installed_manager()


def register_run(run_id: str) -> None:
    installed_manager().register_run(run_id)


async def aregister_run(run_id: str) -> None:
    await installed_manager().aregister_run(run_id)


def cancel_run(run_id: str) -> bool:
    """Cancel ``run_id`` (`Agent.cancel_run`): True when the manager had it registered or a
    run of this process was stopped."""
    return cancel_by_id(run_id)


async def acancel_run(run_id: str) -> bool:
    return await acancel_by_id(run_id)


def is_cancelled(run_id: str) -> bool:
    return installed_manager().is_cancelled(run_id)


async def ais_cancelled(run_id: str) -> bool:
    return await installed_manager().ais_cancelled(run_id)


def cleanup_run(run_id: str) -> None:
    installed_manager().cleanup_run(run_id)


async def acleanup_run(run_id: str) -> None:
    await installed_manager().acleanup_run(run_id)


def raise_if_cancelled(run_id: str) -> None:
    """Raise `RunCancelledException` when ``run_id`` was cancelled."""
    installed_manager().raise_if_cancelled(run_id)


async def araise_if_cancelled(run_id: str) -> None:
    await installed_manager().araise_if_cancelled(run_id)


def get_active_runs() -> dict[str, bool]:
    """Every run id the manager tracks (each running agent run among them), with whether
    it was cancelled."""
    return installed_manager().get_active_runs()


async def aget_active_runs() -> dict[str, bool]:
    return await installed_manager().aget_active_runs()
