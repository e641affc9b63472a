"""The Agent reference's terminal conveniences: `print_response` runs the agent on one
input and prints it in panels (the message, the reasoning, the tool calls, the response,
as Markdown if asked), streaming as it comes; `cli_app` is a chat loop on stdin around it;
`AgentConsole` makes them `Agent`'s methods. Every agent prints through Agno's ``arun``
(with every event), whichever its `run` is.

rich (a dependency of ferrule's CLI already) draws them; it is imported only when one is
called. On a terminal a streamed response is redrawn as it grows; elsewhere (a pipe, a
file) each panel is printed once, complete.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.guardrails import RunInput

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from .events import RunOutputEvent

#: What ends `cli_app` (Agno's words), besides the end of input.
EXIT_WORDS = ("exit", "quit", "bye")


def _console(console: Any) -> Console:
    from rich.console import Console

    return console if console is not None else Console(highlight=False)


class _ResponseView:
    """What one run has shown so far, as rich panels."""

    def __init__(self, markdown: bool, show_reasoning: bool) -> None:
        self.markdown, self.show_reasoning = markdown, show_reasoning
        self.started = time.perf_counter()
        self.content: list[str] = []
        self.final: Any = None
        self.reasoning: list[str] = []
        self.tool_calls: list[str] = []
        self.error: str | None = None

    def add(self, event: RunOutputEvent) -> None:
        name = event.event
        if name == "RunContent":
            content = getattr(event, "content", None)
            reasoning = getattr(event, "reasoning_content", None)
            if content:
                self.content.append(str(content))
            if reasoning:
                self.reasoning.append(reasoning)
        elif name == "ToolCallCompleted":
            tool = event.tool  # type: ignore[union-attr]
            arguments = json.dumps(tool.arguments, ensure_ascii=False)
            outcome = f"error: {tool.error}" if tool.error else _short(tool.result)
            self.tool_calls.append(f"{tool.name}({arguments}) -> {outcome}")
        elif name == "RunCompleted":
            self.final = event.content  # type: ignore[union-attr]
        elif name == "RunPaused":
            waiting = ", ".join(r.tool_call.name for r in event.requirements)  # type: ignore[union-attr]
            self.error = f"paused: {waiting} wait(s) for confirmation (Agent.continue_run)"
        elif name == "RunError":
            self.error = event.content  # type: ignore[union-attr]

    def renderable(self) -> RenderableType:
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.panel import Panel
        from rich.text import Text

        panels: list[RenderableType] = []
        if self.show_reasoning and self.reasoning:
            panels.append(
                Panel(Text("".join(self.reasoning), style="dim"), title="Reasoning", **_LEFT)
            )
        if self.tool_calls:
            panels.append(Panel(Text("\n".join(self.tool_calls)), title="Tool Calls", **_LEFT))
        text = self._text()
        if text:
            seconds = time.perf_counter() - self.started
            body: RenderableType = Markdown(text) if self.markdown else Text(text)
            panels.append(
                Panel(body, title=f"Response ({seconds:.1f}s)", border_style="blue", **_LEFT)
            )
        if self.error is not None:
            panels.append(Panel(Text(self.error), title="Error", border_style="red", **_LEFT))
        return Group(*panels)

    def _text(self) -> str:
        final = self.final
        if final is None or isinstance(final, str):
            return "".join(self.content) if final is None else final
        if hasattr(final, "model_dump_json"):
            return str(final.model_dump_json(indent=2))
        from ferrule_kit.messages import converter

        return json.dumps(converter.unstructure(final), ensure_ascii=False, indent=2)


_LEFT: dict[str, Any] = {"title_align": "left", "expand": True}


def _short(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def _show_message(console: Console, input: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    text = RunInput(input).input_content_string()
    console.print(Panel(Text(text), title="Message", border_style="cyan", **_LEFT))


def print_events(
    console: Console, events: Iterable[RunOutputEvent], stream: bool, view: _ResponseView
) -> None:
    if not stream:
        for event in events:
            view.add(event)
        console.print(view.renderable())
        return
    from rich.live import Live

    with Live(view.renderable(), console=console, refresh_per_second=8) as live:
        for event in events:
            view.add(event)
            live.update(view.renderable())


async def aprint_events(
    console: Console, events: AsyncIterator[RunOutputEvent], stream: bool, view: _ResponseView
) -> None:
    if not stream:
        async for event in events:
            view.add(event)
        console.print(view.renderable())
        return
    from rich.live import Live

    with Live(view.renderable(), console=console, refresh_per_second=8) as live:
        async for event in events:
            view.add(event)
            live.update(view.renderable())


def print_run(run_response: Any, markdown: bool, console: Any) -> None:
    """Print a `RunOutput` in the response's panels, or a streamed run's events as they
    come (Agno's ``pprint_run_response``)."""
    from .results import RunOutput

    out = _console(console)
    view = _ResponseView(markdown, show_reasoning=False)
    if isinstance(run_response, RunOutput):
        view.final = run_response.content
        if run_response.status in ("error", "paused"):
            view.error = f"{run_response.status}: {run_response.error or 'waiting for a decision'}"
        out.print(view.renderable())
        return
    print_events(out, run_response, True, view)


@attrs.frozen(kw_only=True)
class Printing:
    """How `print_response` prints a run: redrawn as it ``stream``s (None: the agent's
    ``stream`` setting), ``markdown``, the message (``show_message``), the reasoning
    (``show_reasoning``), on ``console`` (a ``rich.console.Console``; None: stdout)."""

    stream: bool | None = None
    markdown: bool = False
    show_message: bool = True
    show_reasoning: bool = True
    console: Any = None


def _events(agent: Any, input: Any, options: dict[str, Any]) -> Any:
    """The run's events: Agno's ``arun`` with every event, on any agent (whichever its
    `run`); iterable with ``for`` and ``async for``, never run ahead."""
    return agent.arun(input, stream=True, stream_events=True, **options)


def print_response(agent: Any, input: Any, printing: Printing, options: dict[str, Any]) -> None:
    out = _console(printing.console)
    if printing.show_message:
        _show_message(out, input)
    view = _ResponseView(printing.markdown, printing.show_reasoning)
    try:
        events = _events(agent, input, options)
    except FerruleError as exc:  # refused before it started (bad input)
        view.error = f"{exc.kind}: {exc.message}"
        out.print(view.renderable())
        return
    stream = printing.stream if printing.stream is not None else agent.stream
    print_events(out, events, bool(stream), view)


async def aprint_response(
    agent: Any, input: Any, printing: Printing, options: dict[str, Any]
) -> None:
    out = _console(printing.console)
    if printing.show_message:
        _show_message(out, input)
    view = _ResponseView(printing.markdown, printing.show_reasoning)
    try:
        events = _events(agent, input, options).__aiter__()
    except FerruleError as exc:
        view.error = f"{exc.kind}: {exc.message}"
        out.print(view.renderable())
        return
    stream = printing.stream if printing.stream is not None else agent.stream
    await aprint_events(out, events, bool(stream), view)


def _is_exit(text: str, exit_on: Sequence[str] | None) -> bool:
    return text.strip().lower() in (exit_on if exit_on is not None else EXIT_WORDS)


def cli_app(
    agent: Any,  # an Agent (this module sits below it)
    input: str | None,
    exit_on: Sequence[str] | None,
    prompt: str,
    console: Any,
    options: dict[str, Any],
) -> None:
    out = _console(console)
    if input:
        agent.print_response(input, console=out, **options)
    while True:
        try:
            text = out.input(prompt)
        except (EOFError, KeyboardInterrupt):
            out.print()
            return
        if _is_exit(text, exit_on):
            return
        if text.strip():
            agent.print_response(text, console=out, **options)


async def acli_app(
    agent: Any,  # an Agent (this module sits below it)
    input: str | None,
    exit_on: Sequence[str] | None,
    prompt: str,
    console: Any,
    options: dict[str, Any],
) -> None:
    out = _console(console)
    if input:
        await agent.aprint_response(input, console=out, **options)
    while True:
        try:  # reading stdin blocks: off the loop
            text = await asyncio.to_thread(out.input, prompt)
        except (EOFError, KeyboardInterrupt):
            out.print()
            return
        if _is_exit(text, exit_on):
            return
        if text.strip():
            await agent.aprint_response(text, console=out, **options)


class AgentConsole:
    """An agent's terminal conveniences, as `Agent`'s methods (``agent.print_response``...):
    they call the agent's public `run` / `arun` only."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent  # an Agent (this module sits below it)

    def print_response(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        markdown: bool = False,
        show_message: bool = True,
        show_reasoning: bool = True,
        console: Any = None,
        **options: Any,
    ) -> None:
        """Run on ``input`` and print it in panels (Agno's ``print_response``): the
        message (``show_message``), the reasoning (``show_reasoning``), the tool calls, and
        the response, as Markdown with ``markdown=True``; with ``stream`` (default: the
        agent's) it is redrawn as it streams. A failed run is printed, not raised.
        ``options`` go to `run` (``session_id``, ``user_id``, ``files``, ...); ``console``
        is a ``rich.console.Console`` to print on (default: stdout)."""
        printing = Printing(
            stream=stream,
            markdown=markdown,
            show_message=show_message,
            show_reasoning=show_reasoning,
            console=console,
        )
        print_response(self.agent, input, printing, options)

    async def aprint_response(
        self,
        input: Any,
        *,
        stream: bool | None = None,
        markdown: bool = False,
        show_message: bool = True,
        show_reasoning: bool = True,
        console: Any = None,
        **options: Any,
    ) -> None:
        printing = Printing(
            stream=stream,
            markdown=markdown,
            show_message=show_message,
            show_reasoning=show_reasoning,
            console=console,
        )
        await aprint_response(self.agent, input, printing, options)

    def cli_app(
        self,
        input: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        markdown: bool = False,
        *,
        exit_on: Sequence[str] | None = None,
        prompt: str = "You: ",
        console: Any = None,
        **options: Any,
    ) -> None:
        """A chat on stdin (Agno's ``cli_app``): answers ``input`` first if given, then
        each line read, with `print_response`, until the end of input or a line of
        ``exit_on`` (default ``exit``, ``quit``, ``bye``). Give the agent a ``db`` and
        ``add_history_to_context=True`` for it to remember the conversation."""
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        cli_app(self.agent, input, exit_on, prompt, console, options)

    async def acli_app(
        self,
        input: str | None = None,
        session_id: str | None = None,
        user_id: str | None = None,
        stream: bool = False,
        markdown: bool = False,
        *,
        exit_on: Sequence[str] | None = None,
        prompt: str = "You: ",
        console: Any = None,
        **options: Any,
    ) -> None:
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        await acli_app(self.agent, input, exit_on, prompt, console, options)
