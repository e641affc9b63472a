"""Agno's ``agno.utils.pprint``: `pprint_run_response` prints a run's reply in panels (as
Markdown when asked), a finished `RunOutput` at once or a stream of events as they come."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from ..agent.events import RunOutputEvent
    from ..agent.results import RunOutput

__all__ = ["pprint_run_response"]


def pprint_run_response(
    run_response: RunOutput[Any] | Iterable[RunOutputEvent],
    markdown: bool = False,
    show_time: bool = False,
    console: Console | None = None,
) -> None:
    """Print ``run_response``: its content, its tool calls and any error, in panels. The
    response panel always shows the time taken, so ``show_time`` changes nothing."""
    from ..agent.console import print_run

    print_run(run_response, markdown, console)
