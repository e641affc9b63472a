"""Agno's ``save_response_to_file``: each completed run's content written to a file whose
path is the agent's template, filled with ``{name}``, ``{session_id}``, ``{user_id}``,
``{message}`` (the input, when it is text) and ``{run_id}``. The template is the host's;
the values filled in lose their path separators and ``..`` (an input cannot name another
directory). Text content is written as is, anything else (an output schema's object
among them) as JSON; a file that cannot be
written is logged and the run goes on, as Agno's does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ferrule_kernel import get_logger

from .stored import content_json

log = get_logger("ferrule.agent")


def _path_safe(value: Any) -> str:
    text = "" if value is None else str(value)
    return text.replace("/", "_").replace("\\", "_").replace("..", "_")


def response_path(
    template: str,
    *,
    name: str | None,
    session_id: str | None,
    user_id: str | None,
    message: Any,
    run_id: str | None,
) -> Path:
    """The file ``template`` names for these values (each made path-safe)."""
    return Path(
        template.format(
            name=_path_safe(name),
            session_id=_path_safe(session_id),
            user_id=_path_safe(user_id),
            message=_path_safe(message if isinstance(message, str) else None),
            run_id=_path_safe(run_id),
        )
    )


def save_response(template: str | None, content: Any, path_values: dict[str, Any]) -> None:
    """Write ``content`` to the file ``template`` names (nothing without a template)."""
    if template is None:
        return
    try:
        path = response_path(template, **path_values)
        path.parent.mkdir(parents=True, exist_ok=True)
        plain = content_json(content)  # an output schema's object as JSON
        text = plain if isinstance(plain, str) else json.dumps(plain, indent=2, default=str)
        path.write_text(text, encoding="utf-8")
    except (OSError, KeyError, IndexError, ValueError, TypeError) as exc:
        log.warning("response_not_saved", error=repr(exc))
