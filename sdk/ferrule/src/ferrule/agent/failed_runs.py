"""How a run that failed is reported, as Agno 2.9 reports it: Agno's ``run`` / ``arun`` /
``continue_run`` / ``acontinue_run`` do not raise when the run itself fails. After the
retries (`model_requests.RetryPolicy`), any error inside the run (a model or provider
error, a tool error that escapes, a guardrail's `InputCheckError` / `OutputCheckError`, a
failing hook) ends it with status ``error``; its ``content`` is the error's message when
it has none, it is stored in its session and logged, and its `RunOutput` comes back,
holding the typed error in ``error``; a streamed run ends with a `RunErrorEvent`. A run
cancelled, or stopped by Ctrl-C while a synchronous caller waits for it, ends
``cancelled``. What refuses the caller's arguments still raises, as Agno's bad arguments
do (`refused_call`: an `InvalidInputError` naming the argument, an unknown run); a
stream of events ends with its `RunErrorEvent`, as with any other error.

`failure_of` says how an exception ends a run; `run_output` waits for an Agno run's
`RunOutput`; `raise_failed` is for the callers inside ferrule that need the typed error (a helper
agent's run, a reasoning model's)."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, TypeVar

from ferrule_kernel import FerruleError, InvalidInputError, RequestCancelledError, get_logger

from .results import RunOutput, RunStatus, RunStatusName
from .run_errors import UnknownRunError

log = get_logger("ferrule.agent")

OutputT = TypeVar("OutputT", bound=RunOutput[Any])


class FinishingStream(Protocol):
    """What `run_output` needs of a run's stream (`stream.AgentStream`)."""

    @property
    def output(self) -> RunOutput[Any]: ...

    def result(self) -> RunOutput[Any]: ...


def failure_of(exc: BaseException, run_id: str) -> tuple[RunStatusName, FerruleError] | None:
    """The status and typed error ``exc`` ends run ``run_id`` with: ``cancelled`` for a
    cancellation, ``error`` with its own `FerruleError`, or (a bug) with any other
    exception wrapped in one, its traceback logged. None for what is not the run's to
    handle (``KeyboardInterrupt``, ``SystemExit`` inside the run: raised on)."""
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled", RequestCancelledError("the run was cancelled", run_id=run_id)
    if isinstance(exc, FerruleError):
        # Agno logs a failed run. At info level: the run reports it to its caller (a
        # terminal's chat shows it already). A typed error's message is safe to log (no
        # secret reaches one); its details may hold the caller's data: not logged
        log.info("agent_run_error", run_id=run_id, kind=exc.kind, error=exc.message)
        return "error", exc
    if isinstance(exc, Exception):
        log.exception("agent_run_failed", run_id=run_id)
        message = f"the agent run failed: {type(exc).__name__}: {exc}"
        return "error", FerruleError(message, run_id=run_id)
    return None


def run_output(stream: FinishingStream) -> RunOutput[Any]:
    """Agno's ``run`` / ``continue_run`` without a stream: wait for the run's end and
    return its `RunOutput`, a failed run's too (status ``error``, its typed error in
    ``error``). Ctrl-C while waiting stops the run, which ends ``cancelled`` and is
    stored so (the stream stops it as its reader leaves): its output comes back, as
    Agno's does."""
    try:
        return refused_call(stream.result())
    except KeyboardInterrupt:
        return stream.output


def refused_call(output: OutputT) -> OutputT:
    """``output``, unless its run refused what its caller gave: then that error is
    raised, as Agno raises its bad arguments. That is an `InvalidInputError` naming the
    bad argument or setting (some are checked only as the run starts: what a ``tools`` /
    ``knowledge`` function made, ``additional_input``, ``continue_from``, a request the
    model refuses as invalid), or a run ``continue_run`` cannot find (`UnknownRunError`,
    Agno's ``RunNotFoundError``)."""
    if isinstance(output.error, (InvalidInputError, UnknownRunError)):
        raise output.error
    return output


def raise_failed(output: OutputT) -> OutputT:
    """``output``, unless its run failed: then its typed error is raised (callers inside
    ferrule that need the exception, as `RunOutput.error` gives it to a host)."""
    if output.status == RunStatus.error and output.error is not None:
        raise output.error
    return output
