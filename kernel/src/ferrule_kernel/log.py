"""Logging through structlog, quiet by default, one switch for debug.

structlog (with rich behind it) costs tens of milliseconds to import, more than the
rest of a cold start, so it is imported only when something is actually logged:
warnings and errors always, debug events only after ``configure_logging(debug=True)``
or with ``FERRULE_DEBUG=1`` in the environment.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_state = {
    "debug": os.environ.get("FERRULE_DEBUG", "") not in ("", "0", "false", "no"),
    "configured": False,
}


def configure_logging(debug: bool = True) -> None:
    """Turn ferrule's debug logging on (or back off). Logs go to stderr."""
    _state["debug"] = debug
    _state["configured"] = False


def _structlog():
    import structlog

    if not _state["configured"]:
        import logging

        level = logging.DEBUG if _state["debug"] else logging.WARNING
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso"),
                structlog.dev.ConsoleRenderer(colors=False),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,
        )
        _state["configured"] = True
    return structlog


class Logger:
    """A structlog logger that costs nothing (not even the import) while it has nothing to say."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def debug(self, event: str, **kw: Any) -> None:
        if _state["debug"]:
            _structlog().get_logger(self._name).debug(event, **kw)

    def warning(self, event: str, **kw: Any) -> None:
        _structlog().get_logger(self._name).warning(event, **kw)

    def error(self, event: str, **kw: Any) -> None:
        _structlog().get_logger(self._name).error(event, **kw)

    def exception(self, event: str, **kw: Any) -> None:
        """An error with the traceback of the exception being handled."""
        _structlog().get_logger(self._name).exception(event, **kw)


def get_logger(name: str) -> Logger:
    return Logger(name)
