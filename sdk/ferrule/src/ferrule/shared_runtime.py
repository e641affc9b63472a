"""The process's shared `Runtime`, for the objects given none (agents, `LangModel`s,
knowledge bases): made on first use, stopped at interpreter exit.

It lives outside the agent package so that `ferrule.knowledge` reaches it without
importing the agent (which imports knowledge)."""

from __future__ import annotations

import atexit
import threading

from .runtime import Runtime

__all__ = ["default_runtime"]

_default: Runtime | None = None
_default_lock = threading.Lock()


def default_runtime() -> Runtime:
    """The process's shared `Runtime`: made on first use, stopped at interpreter exit (its
    components deleted, its loop ended)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Runtime()
            atexit.register(_stop_default_runtime)
        return _default


def _stop_default_runtime() -> None:
    global _default
    with _default_lock:
        runtime, _default = _default, None
    if runtime is not None:
        runtime.stop()
