"""Agno's ``agno.utils.pprint``: `pprint_run_response` / `apprint_run_response` print a run's
reply in a panel (as Markdown when asked): a finished `RunOutput` at once, a stream of
events (sync or async) redrawn as its content comes. ``show_time`` adds the time taken to
a streamed reply's panel (a finished run took its time before it was given)."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

__all__ = ["apprint_run_response", "pprint_run_response"]


def _content(content: Any, markdown: bool) -> RenderableType:
    from rich.json import JSON
    from rich.markdown import Markdown

    if isinstance(content, str):
        return Markdown(content) if markdown else content
    if hasattr(content, "model_dump_json"):
        return JSON(content.model_dump_json(exclude_none=True), indent=2)
    from ferrule_kit.content.messages import converter

    return JSON(json.dumps(converter.unstructure(content), default=str), indent=4)


def _table(body: RenderableType, seconds: float | None) -> RenderableType:
    from rich.box import ROUNDED
    from rich.table import Table

    table = Table(box=ROUNDED, border_style="blue", show_header=False)
    if seconds is None:
        table.add_row(body)
    else:
        table.add_row(f"Response\n({seconds:.1f}s)", body)
    return table


class _Stream:
    """What a stream has shown so far."""

    def __init__(self, markdown: bool, show_time: bool) -> None:
        self.markdown, self.show_time = markdown, show_time
        self.text = ""
        self.structured: Any = None
        self.started = time.perf_counter()

    def add(self, event: Any) -> None:
        content = getattr(event, "content", None)
        if content is None or getattr(event, "event", "RunContent") != "RunContent":
            return
        if isinstance(content, str):
            self.text += content
        else:
            self.structured = content

    def renderable(self) -> RenderableType:
        body = (
            _content(self.structured, self.markdown)
            if self.structured is not None
            else _content(self.text, self.markdown)
        )
        return _table(body, time.perf_counter() - self.started if self.show_time else None)


def _console(console: Console | None) -> Console:
    from rich.console import Console

    return console if console is not None else Console()


def pprint_run_response(
    run_response: Any,
    markdown: bool = False,
    show_time: bool = False,
    console: Console | None = None,
) -> None:
    """Print ``run_response`` (a `RunOutput`, or the events of a streamed run)."""
    from rich.live import Live

    from ..agent.results import RunOutput

    out = _console(console)
    if isinstance(run_response, RunOutput):
        out.print(_table(_content(run_response.content, markdown), None))
        return
    if not isinstance(run_response, Iterable):
        from ferrule_kernel import InvalidInputError

        raise InvalidInputError(
            f"expected a RunOutput or a run's events, got {type(run_response).__name__}",
            field="run_response",
        )
    shown = _Stream(markdown, show_time)
    with Live(console=out) as live:
        for event in run_response:
            shown.add(event)
            live.update(shown.renderable())


async def apprint_run_response(
    run_response: Any,
    markdown: bool = False,
    show_time: bool = False,
    console: Console | None = None,
) -> None:
    """`pprint_run_response` of an async stream of events (or a `RunOutput`)."""
    from rich.live import Live

    if not isinstance(run_response, AsyncIterable):
        pprint_run_response(run_response, markdown, show_time, console)
        return
    shown = _Stream(markdown, show_time)
    with Live(console=_console(console)) as live:
        async for event in run_response:
            shown.add(event)
            live.update(shown.renderable())
