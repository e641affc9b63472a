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

    def __init__(self, printing: Printing) -> None:
        self.printing = printing
        self.markdown, self.show_reasoning = bool(printing.markdown), printing.show_reasoning
        self.started = time.perf_counter()
        self.content: list[str] = []
        self.final: Any = None
        self.reasoning: list[str] = []
        self.steps: list[Any] = []
        self.tool_calls: list[str] = []
        self.error: str | None = None

    def add(self, event: RunOutputEvent) -> None:
        name = event.event
        steps = getattr(event, "reasoning_steps", None)
        if steps:
            self.steps = list(steps)
        elif name == "ReasoningStep" and getattr(event, "content", None) is not None:
            self.steps.append(event.content)  # type: ignore[union-attr]
        if name == "RunContent":
            content = getattr(event, "content", None)
            reasoning = getattr(event, "reasoning_content", None)
            if content:
                self.content.append(str(content))
            if reasoning:
                self.reasoning.append(reasoning)
        elif name == "ToolCallCompleted" and event.tool is not None:  # type: ignore[union-attr]
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

    def _step_panels(self) -> list[RenderableType]:
        from rich.panel import Panel
        from rich.text import Text

        panels: list[RenderableType] = []
        for number, step in enumerate(self.steps, 1):
            lines = [getattr(step, "title", None) or ""]
            if getattr(step, "action", None):
                lines.append(f"Action: {step.action}")
            if getattr(step, "result", None):
                lines.append(str(step.result))
            if self.printing.show_full_reasoning:
                if getattr(step, "reasoning", None):
                    lines.append(f"Reasoning: {step.reasoning}")
                if getattr(step, "confidence", None) is not None:
                    lines.append(f"Confidence: {step.confidence}")
            text = Text("\n".join(line for line in lines if line), style="dim")
            panels.append(Panel(text, title=f"Reasoning step {number}", **_LEFT))
        return panels

    def renderable(self) -> RenderableType:
        from rich.console import Group
        from rich.markdown import Markdown
        from rich.panel import Panel
        from rich.text import Text

        panels: list[RenderableType] = []
        if self.show_reasoning:
            panels += self._step_panels()
        if self.show_reasoning and self.reasoning:
            panels.append(
                Panel(Text("".join(self.reasoning), style="dim"), title="Reasoning", **_LEFT)
            )
        if self.tool_calls:
            panels.append(Panel(Text("\n".join(self.tool_calls)), title="Tool Calls", **_LEFT))
        text = self._text()
        if text:
            seconds = time.perf_counter() - self.started
            body: RenderableType = (
                Markdown(_escaped(text, self.printing.tags)) if self.markdown else Text(text)
            )
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
        from ferrule_kit.content.messages import converter

        return json.dumps(converter.unstructure(final), ensure_ascii=False, indent=2)


def _escaped(text: str, tags: frozenset[str]) -> str:
    """``text`` with each of ``tags`` written out (``&lt;think&gt;``), for Markdown to show
    rather than read as HTML."""
    for tag in tags:
        text = text.replace(f"<{tag}>", f"&lt;{tag}&gt;").replace(f"</{tag}>", f"&lt;/{tag}&gt;")
    return text


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
    view = _ResponseView(Printing(markdown=markdown, show_reasoning=False))
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
    ``stream`` setting), ``markdown`` (None: the agent's; never for structured output),
    the message (``show_message``), the reasoning (``show_reasoning``; each step's own
    reasoning and confidence too with ``show_full_reasoning``), on ``console`` (a
    ``rich.console.Console``; None: stdout); ``tags`` are shown as written in Markdown
    (default ``<think>`` and ``<thinking>``), not read as HTML."""

    stream: bool | None = None
    markdown: bool | None = None
    show_message: bool = True
    show_reasoning: bool = True
    show_full_reasoning: bool = False
    console: Any = None
    tags: frozenset[str] = frozenset({"think", "thinking"})


def _events(agent: Any, input: Any, options: dict[str, Any]) -> Any:
    """The run's events: Agno's ``arun`` with every event, on any agent (whichever its
    `run`); iterable with ``for`` and ``async for``, never run ahead. A ``stream`` or
    ``stream_events`` among the options is the printing's, not the run's (Agno's)."""
    options = {k: v for k, v in options.items() if k not in ("stream", "stream_events")}
    return agent.arun(input, stream=True, stream_events=True, **options)


def _resolved(agent: Any, printing: Printing) -> Printing:
    """``printing`` with the agent's defaults: its ``stream``, its ``markdown`` (never for
    structured output)."""
    markdown = agent.markdown if printing.markdown is None else printing.markdown
    if agent.output_schema is not None:
        markdown = False
    stream = printing.stream if printing.stream is not None else bool(agent.stream)
    return attrs.evolve(printing, markdown=markdown, stream=stream)


def print_response(agent: Any, input: Any, printing: Printing, options: dict[str, Any]) -> None:
    printing = _resolved(agent, printing)
    out = _console(printing.console)
    if printing.show_message:
        _show_message(out, input)
    view = _ResponseView(printing)
    try:
        events = _events(agent, input, options)
    except FerruleError as exc:  # refused before it started (bad input)
        view.error = f"{exc.kind}: {exc.message}"
        out.print(view.renderable())
        return
    print_events(out, events, bool(printing.stream), view)


async def aprint_response(
    agent: Any, input: Any, printing: Printing, options: dict[str, Any]
) -> None:
    printing = _resolved(agent, printing)
    out = _console(printing.console)
    if printing.show_message:
        _show_message(out, input)
    view = _ResponseView(printing)
    try:
        events = _events(agent, input, options).__aiter__()
    except FerruleError as exc:
        view.error = f"{exc.kind}: {exc.message}"
        out.print(view.renderable())
        return
    await aprint_events(out, events, bool(printing.stream), view)


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


#: `print_response`'s arguments that go to the run (`run`'s).
RUN_OPTIONS = (
    "session_id",
    "session_state",
    "user_id",
    "run_id",
    "audio",
    "images",
    "videos",
    "files",
    "knowledge_filters",
    "add_history_to_context",
    "add_dependencies_to_context",
    "dependencies",
    "add_session_state_to_context",
    "metadata",
    "debug_mode",
)


def _printing(
    stream: bool | None,
    markdown: bool | None,
    show_message: bool,
    show_reasoning: bool,
    show_full_reasoning: bool,
    console: Any,
) -> Printing:
    return Printing(
        stream=stream,
        markdown=markdown,
        show_message=show_message,
        show_reasoning=show_reasoning,
        show_full_reasoning=show_full_reasoning,
        console=console,
    )


def _run_options(given: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The run's arguments among `print_response`'s (those given), and its other keywords."""
    options = {name: given[name] for name in RUN_OPTIONS if given[name] is not None}
    return {**kwargs, **options}


class AgentConsole:
    """An agent's terminal conveniences, as `Agent`'s methods (``agent.print_response``...):
    they call the agent's public `run` / `arun` only."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent  # an Agent (this module sits below it)

    def print_response(
        self,
        input: Any,
        *,
        session_id: str | None = None,
        session_state: dict[str, Any] | None = None,
        user_id: str | None = None,
        run_id: str | None = None,
        audio: Sequence[Any] | None = None,
        images: Sequence[Any] | None = None,
        videos: Sequence[Any] | None = None,
        files: Sequence[Any] | None = None,
        stream: bool | None = None,
        markdown: bool | None = None,
        knowledge_filters: Any = None,
        add_history_to_context: bool | None = None,
        add_dependencies_to_context: bool | None = None,
        dependencies: dict[str, Any] | None = None,
        add_session_state_to_context: bool | None = None,
        metadata: dict[str, Any] | None = None,
        debug_mode: bool | None = None,
        show_message: bool = True,
        show_reasoning: bool = True,
        show_full_reasoning: bool = False,
        console: Any = None,
        tags_to_include_in_markdown: set[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """Run on ``input`` and print it in panels (Agno's ``print_response``): the
        message (``show_message``), the reasoning (``show_reasoning``; each step's
        reasoning and confidence with ``show_full_reasoning``), the tool calls, and the
        response, as Markdown with ``markdown`` (default: the agent's; ``<think>`` tags,
        or ``tags_to_include_in_markdown``, shown as written); with ``stream`` (default:
        the agent's) it is redrawn as it streams. A failed run is printed, not raised.
        The run's own arguments are `run`'s (``session_id``, ``user_id``, ``files``,
        ``dependencies``, ...; other keywords reach the hooks); ``console`` is a
        ``rich.console.Console`` to print on (default: stdout)."""
        printing = _printing(
            stream, markdown, show_message, show_reasoning, show_full_reasoning, console
        )
        if tags_to_include_in_markdown:
            printing = attrs.evolve(printing, tags=frozenset(tags_to_include_in_markdown))
        options = _run_options(locals(), kwargs)
        print_response(self.agent, input, printing, options)

    async def aprint_response(
        self,
        input: Any,
        *,
        session_id: str | None = None,
        session_state: dict[str, Any] | None = None,
        user_id: str | None = None,
        run_id: str | None = None,
        audio: Sequence[Any] | None = None,
        images: Sequence[Any] | None = None,
        videos: Sequence[Any] | None = None,
        files: Sequence[Any] | None = None,
        stream: bool | None = None,
        markdown: bool | None = None,
        knowledge_filters: Any = None,
        add_history_to_context: bool | None = None,
        add_dependencies_to_context: bool | None = None,
        dependencies: dict[str, Any] | None = None,
        add_session_state_to_context: bool | None = None,
        metadata: dict[str, Any] | None = None,
        debug_mode: bool | None = None,
        show_message: bool = True,
        show_reasoning: bool = True,
        show_full_reasoning: bool = False,
        console: Any = None,
        tags_to_include_in_markdown: set[str] | None = None,
        **kwargs: Any,
    ) -> None:
        """`print_response` for async callers."""
        printing = _printing(
            stream, markdown, show_message, show_reasoning, show_full_reasoning, console
        )
        if tags_to_include_in_markdown:
            printing = attrs.evolve(printing, tags=frozenset(tags_to_include_in_markdown))
        options = _run_options(locals(), kwargs)
        await aprint_response(self.agent, input, printing, options)

    def cli_app(
        self,
        input: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        user: str = "User",
        emoji: str = ":sunglasses:",
        stream: bool = False,
        markdown: bool = False,
        exit_on: Sequence[str] | None = None,
        prompt: str | None = None,
        console: Any = None,
        **options: Any,
    ) -> None:
        """A chat on stdin (Agno's ``cli_app``): answers ``input`` first if given, then
        each line read (after the prompt, ``emoji`` and ``user``'s name unless ``prompt``
        says otherwise), with `print_response`, until the end of input or a line of
        ``exit_on`` (default ``exit``, ``quit``, ``bye``). Give the agent a ``db`` and
        ``add_history_to_context=True`` for it to remember the conversation."""
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        shown = prompt if prompt is not None else _prompt(user, emoji)
        cli_app(self.agent, input, exit_on, shown, console, options)

    async def acli_app(
        self,
        input: str | None = None,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        user: str = "User",
        emoji: str = ":sunglasses:",
        stream: bool = False,
        markdown: bool = False,
        exit_on: Sequence[str] | None = None,
        prompt: str | None = None,
        console: Any = None,
        **options: Any,
    ) -> None:
        """`cli_app` for async callers (reading stdin off the loop)."""
        options.update(session_id=session_id, user_id=user_id, stream=stream, markdown=markdown)
        shown = prompt if prompt is not None else _prompt(user, emoji)
        await acli_app(self.agent, input, exit_on, shown, console, options)


def _prompt(user: str, emoji: str) -> str:
    """What the chat asks each line with (rich markup: ``:sunglasses:`` is an emoji)."""
    return f"[bold] {emoji} {user} [/bold]: "
