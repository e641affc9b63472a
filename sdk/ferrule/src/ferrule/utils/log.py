"""Agno's ``agno.utils.log``: ``logger`` and the ``log_*`` functions, for a program's own
messages. ``logger`` is the standard library's ``ferrule`` logger: it shows what the
application's logging configuration lets through (ferrule configures none)."""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["log_debug", "log_error", "log_exception", "log_info", "log_warning", "logger"]

logger = logging.getLogger("ferrule")


def log_debug(msg: object, *args: Any, **kwargs: Any) -> None:
    logger.debug(msg, *args, **kwargs)


def log_info(msg: object, *args: Any, **kwargs: Any) -> None:
    logger.info(msg, *args, **kwargs)


def log_warning(msg: object, *args: Any, **kwargs: Any) -> None:
    logger.warning(msg, *args, **kwargs)


def log_error(msg: object, *args: Any, **kwargs: Any) -> None:
    logger.error(msg, *args, **kwargs)


def log_exception(msg: object, *args: Any, **kwargs: Any) -> None:
    logger.exception(msg, *args, **kwargs)
