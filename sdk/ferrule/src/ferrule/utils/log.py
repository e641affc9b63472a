"""Agno's ``agno.utils.log``: the loggers a program's own messages go to and the ``log_*``
functions writing to them.

As in Agno, the loggers are named ``agno``, ``agno-team`` and ``agno-workflow``
(`LOGGER_NAME`...), so a program's logging setup for those names keeps working; each has
a rich console handler of its own (the level's name coloured per `LOG_STYLES`), stops at
INFO and does not pass records up. ``logger`` is the one the ``log_*`` functions use (the
agent's; `use_team_logger` / `use_workflow_logger` switch it; `configure_agno_logging`
puts your loggers in their place). ``log_debug`` writes only after `set_log_level_to_debug`
(and up to its ``level``); ``center=True`` centres a message in a header of ``symbol``.
``log_warning`` / ``log_error`` inside an ``except`` add the traceback when tracebacks are
on (`set_log_tracebacks`, or ``$AGNO_LOG_TRACEBACKS``). ferrule's own modules log through
structlog to the ``ferrule`` logger, which this module leaves alone.
"""

from __future__ import annotations

import logging
import shutil
import sys
from os import getenv
from typing import Any, Literal

from rich.logging import RichHandler
from rich.text import Text

__all__ = [
    "LOGGER_NAME",
    "LOG_STYLES",
    "TEAM_LOGGER_NAME",
    "WORKFLOW_LOGGER_NAME",
    "AgnoLogger",
    "ColoredRichHandler",
    "agent_logger",
    "build_logger",
    "center_header",
    "configure_agno_logging",
    "debug_level",
    "debug_on",
    "log_debug",
    "log_error",
    "log_exception",
    "log_info",
    "log_tracebacks",
    "log_warning",
    "logger",
    "set_log_level_to_debug",
    "set_log_level_to_error",
    "set_log_level_to_info",
    "set_log_level_to_warning",
    "set_log_tracebacks",
    "team_logger",
    "use_agent_logger",
    "use_team_logger",
    "use_workflow_logger",
    "workflow_logger",
]

LOGGER_NAME = "agno"
TEAM_LOGGER_NAME = f"{LOGGER_NAME}-team"
WORKFLOW_LOGGER_NAME = f"{LOGGER_NAME}-workflow"
#: The colour of each level's name, per source.
LOG_STYLES = {
    "agent": {"debug": "green", "info": "blue"},
    "team": {"debug": "magenta", "info": "steel_blue1"},
    "workflow": {"debug": "sandy_brown", "info": "orange3"},
}


class ColoredRichHandler(RichHandler):
    """A rich handler colouring the level's name as `LOG_STYLES` says for its source."""

    source_type: str | None

    def __init__(self, *args: Any, source_type: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.source_type = source_type

    def get_level_text(self, record: logging.LogRecord) -> Text:
        if not record.msg:
            return Text("")
        styles = LOG_STYLES.get(self.source_type or "agent", LOG_STYLES["agent"])
        style = styles.get(record.levelname.lower())
        if style is None:
            return super().get_level_text(record)
        return Text(record.levelname, style=style)


def center_header(message: str, symbol: str = "*") -> str:
    """``message`` centred in a line of ``symbol`` as wide as the terminal allows."""
    width = shutil.get_terminal_size(fallback=(80, 24)).columns
    return f" {message} ".center(max(width - 20, len(message) + 2), symbol)


class AgnoLogger(logging.Logger):
    """A logger whose ``debug`` and ``info`` can centre the message (`center_header`)."""

    def __init__(self, name: str, level: int = logging.NOTSET) -> None:
        super().__init__(name, level)

    def debug(  # type: ignore[override]
        self, msg: Any, center: bool = False, symbol: str = "*", *args: Any, **kwargs: Any
    ) -> None:
        super().debug(center_header(str(msg), symbol) if center else msg, *args, **kwargs)

    def info(  # type: ignore[override]
        self, msg: Any, center: bool = False, symbol: str = "*", *args: Any, **kwargs: Any
    ) -> None:
        super().info(center_header(str(msg), symbol) if center else msg, *args, **kwargs)


def build_logger(logger_name: str, source_type: str | None = None) -> Any:
    """The `AgnoLogger` named ``logger_name`` with its console handler (made once: a logger
    set up already, by this or by the program, is returned as it is)."""
    existing = logging.Logger.manager.loggerDict.get(logger_name)
    if isinstance(existing, logging.Logger) and (
        existing.handlers or existing.level != logging.NOTSET
    ):
        return existing
    previous = logging.getLoggerClass()
    logging.setLoggerClass(AgnoLogger)
    try:
        made = logging.getLogger(logger_name)
    finally:
        logging.setLoggerClass(previous)
    handler = ColoredRichHandler(
        show_time=False,
        rich_tracebacks=False,
        show_path=False,
        tracebacks_show_locals=False,
        source_type=source_type or "agent",
    )
    handler.setFormatter(logging.Formatter(fmt="%(message)s", datefmt="[%X]"))
    made.addHandler(handler)
    made.setLevel(logging.INFO)
    made.propagate = False
    return made


agent_logger: Any = build_logger(LOGGER_NAME, source_type="agent")
team_logger: Any = build_logger(TEAM_LOGGER_NAME, source_type="team")
workflow_logger: Any = build_logger(WORKFLOW_LOGGER_NAME, source_type="workflow")
logger: Any = agent_logger
debug_on: bool = False
debug_level: Literal[1, 2] = 1
log_tracebacks: bool = getenv("AGNO_LOG_TRACEBACKS", "false").lower() in ("true", "1", "yes")


def _named(source_type: str | None) -> logging.Logger:
    return logging.getLogger(LOGGER_NAME if source_type is None else f"{LOGGER_NAME}-{source_type}")


def set_log_level_to_debug(source_type: str | None = None, level: Literal[1, 2] = 1) -> None:
    """Show debug messages (``log_debug`` up to ``level``) of the source's logger."""
    global debug_on, debug_level
    if source_type is None:
        use_agent_logger()
    _named(source_type).setLevel(logging.DEBUG)
    debug_on, debug_level = True, level


def _set_level(source_type: str | None, level: int) -> None:
    global debug_on
    _named(source_type).setLevel(level)
    debug_on = False


def set_log_level_to_info(source_type: str | None = None) -> None:
    _set_level(source_type, logging.INFO)


def set_log_level_to_warning(source_type: str | None = None) -> None:
    _set_level(source_type, logging.WARNING)


def set_log_level_to_error(source_type: str | None = None) -> None:
    _set_level(source_type, logging.ERROR)


def use_agent_logger() -> None:
    global logger
    logger = agent_logger


def use_team_logger() -> None:
    global logger
    logger = team_logger


def use_workflow_logger() -> None:
    global logger
    logger = workflow_logger


def set_log_tracebacks(enabled: bool = True) -> None:
    """Whether ``log_warning`` / ``log_error`` inside an ``except`` add the traceback."""
    global log_tracebacks
    log_tracebacks = enabled


def configure_agno_logging(
    custom_default_logger: Any = None,
    custom_agent_logger: Any = None,
    custom_team_logger: Any = None,
    custom_workflow_logger: Any = None,
    enable_log_tracebacks: bool | None = None,
) -> None:
    """Put your loggers in place of this module's (``custom_default_logger``: the one the
    ``log_*`` functions use)."""
    global logger, agent_logger, team_logger, workflow_logger
    if enable_log_tracebacks is not None:
        set_log_tracebacks(enable_log_tracebacks)
    if custom_default_logger is not None:
        logger = custom_default_logger
    if custom_agent_logger is not None:
        agent_logger = custom_agent_logger
    if custom_team_logger is not None:
        team_logger = custom_team_logger
    if custom_workflow_logger is not None:
        workflow_logger = custom_workflow_logger


def log_debug(
    msg: Any,
    center: bool = False,
    symbol: str = "*",
    log_level: Literal[1, 2] = 1,
    *args: Any,
    **kwargs: Any,
) -> None:
    """A debug message, once debugging is on up to ``log_level``."""
    if not debug_on or debug_level < log_level:
        return
    _write(logging.DEBUG, "debug", center_header(str(msg), symbol) if center else msg, args, kwargs)


def log_info(msg: Any, center: bool = False, symbol: str = "*", *args: Any, **kwargs: Any) -> None:
    _write(logging.INFO, "info", center_header(str(msg), symbol) if center else msg, args, kwargs)


def _write(
    level: int, method: str, text: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    """``text`` (centred already) to the current logger. A `logging.Logger` gets it through
    ``log``, which no subclass's ``info(msg, center, symbol, ...)`` reshapes: the ``agno``
    logger may be Agno's own, made first when Agno is installed and imported too."""
    if isinstance(logger, logging.Logger):
        logger.log(level, text, *args, **kwargs)
    else:
        getattr(logger, method)(text, *args, **kwargs)


def _traceback(kwargs: dict[str, Any]) -> dict[str, Any]:
    if "exc_info" not in kwargs and log_tracebacks and sys.exc_info()[0] is not None:
        kwargs["exc_info"] = True
    return kwargs


def log_warning(msg: Any, *args: Any, **kwargs: Any) -> None:
    logger.warning(msg, *args, **_traceback(kwargs))


def log_error(msg: Any, *args: Any, **kwargs: Any) -> None:
    logger.error(msg, *args, **_traceback(kwargs))


def log_exception(msg: Any, *args: Any, **kwargs: Any) -> None:
    """An error with its traceback, always."""
    logger.exception(msg, *args, **kwargs)
