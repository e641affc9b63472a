"""Typed errors of the request protocol.

Every error a request can end with is a `FerruleError` subclass with a stable `kind`
string, so it survives a trip over the network (`to_dict` / `error_from_dict`) as the
same type with the same message.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

# The scrubber lives in `ferrule_kernel.scrubbing`; importers of it from here keep working.
from .scrubbing import scrub_secrets as scrub_secrets


class FerruleError(Exception):
    """Base of every error the kernel (or a plugin, through the kernel) reports."""

    kind: ClassVar[str] = "ferrule_error"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "details": self.details}

    def __reduce__(self):  # keep details when pickled (e.g. across processes)
        return (_rebuild, (type(self), self.message, self.details))


def _rebuild(cls: type[FerruleError], message: str, details: dict[str, Any]) -> FerruleError:
    return cls(message, **details)


class UnknownOperatorError(FerruleError):
    kind = "unknown_operator"


class UnknownComponentTypeError(FerruleError):
    kind = "unknown_component_type"


class UnknownComponentError(FerruleError):
    kind = "unknown_component"


class UnknownMethodError(FerruleError):
    kind = "unknown_method"


class DuplicateComponentError(FerruleError):
    kind = "duplicate_component"


class InvalidInputError(FerruleError):
    """Input that does not match the declared input class.

    `details["errors"]` is a list of `{"path": "$.field[0]", "message": "..."}`.
    Plugins may raise it themselves (e.g. from an attrs validator) with `field=`.
    """

    kind = "invalid_input"

    def __init__(self, message: str, *, field: str | None = None, **details: Any) -> None:
        if field is not None:
            details.setdefault("errors", [{"path": field, "message": message}])
        super().__init__(message, **details)

    @property
    def errors(self) -> list[dict[str, str]]:
        return list(self.details.get("errors", []))


class PluginLoadError(FerruleError):
    """A plugin that could not be imported or whose registration hook failed."""

    kind = "plugin_load_error"


class PluginError(FerruleError):
    """A plugin raised while serving a request. The request ends; the kernel keeps serving."""

    kind = "plugin_error"


class InvalidOutputError(PluginError):
    """A plugin's output that cannot leave the kernel: not JSON (NaN, an arbitrary object,
    a key that is not a string) or not what its declared output class says.

    `details["errors"]` is a list of `{"path": "$.field[0]", "message": "..."}`, as for input.
    """

    kind = "invalid_output"

    @property
    def errors(self) -> list[dict[str, str]]:
        return list(self.details.get("errors", []))


class RequestCancelledError(FerruleError):
    kind = "cancelled"


_KINDS: dict[str, type[FerruleError]] = {}


def register_error_kind(cls: type[FerruleError]) -> type[FerruleError]:
    """Make `error_from_dict` rebuild `cls` from its `kind` (plugins may add their own)."""
    _KINDS[cls.kind] = cls
    return cls


for _cls in (
    FerruleError,
    UnknownOperatorError,
    UnknownComponentTypeError,
    UnknownComponentError,
    UnknownMethodError,
    DuplicateComponentError,
    InvalidInputError,
    PluginLoadError,
    PluginError,
    InvalidOutputError,
    RequestCancelledError,
):
    register_error_kind(_cls)


def interrupts_request(exc: BaseException) -> bool:
    """Whether ``exc``, raised while plugin code ran in this thread, interrupts the request
    (and must propagate as it is) rather than being the plugin's failure (which ends the
    request with a typed error): the request's own task being cancelled (by its caller, a
    deadline, a client that went away), or the user's Ctrl-C.

    Python delivers Ctrl-C as `KeyboardInterrupt` to the main thread only, and only while
    its SIGINT handler is Python's default: anywhere else (a worker thread, the Runtime's
    loop thread, a server that handles SIGINT itself) only the plugin can have raised one.
    A `CancelledError` is ours when the running task is being cancelled; one a plugin
    raises on its own (it awaited something cancelled) is its failure. Before Python 3.11
    a task cannot tell, so every `CancelledError` is taken as ours.
    """
    if isinstance(exc, KeyboardInterrupt):
        import signal
        import threading

        return (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        )
    asyncio = sys.modules.get("asyncio")  # not imported: no task to cancel
    if asyncio is None or not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no loop runs in this thread: a sync plugin raised it
        return False
    if task is None:
        return False
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0


def error_from_dict(data: dict[str, Any]) -> FerruleError:
    cls = _KINDS.get(str(data.get("kind")), FerruleError)
    details = dict(data.get("details") or {})
    err = cls.__new__(cls)
    FerruleError.__init__(err, str(data.get("message", "")), **details)
    return err
