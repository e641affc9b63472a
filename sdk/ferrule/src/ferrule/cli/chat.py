"""``ferrule chat``: talk to any model in the terminal.

    ferrule chat                          # the default model (config.toml's, else offline)
    ferrule chat -m gpt-4o --reasoning    # an API model (its plugin and key needed)
    ferrule chat -m openai:my-model       # provider:model
    ferrule chat -m test                  # the echoing test model (ferrule-testmodel)
    ferrule chat -m MODEL "question"      # answer once and exit
    echo "question" | ferrule chat        # the same, from stdin
    cat notes.txt | ferrule chat "Summarise this"   # piped text, then the question
    ferrule chat --session work           # resume (or start) a stored session
    ferrule chat --web                    # in a browser (ferrule[web]; docs/webchat.md)

The reply streams as it comes: reasoning dimmed, tool calls and their results on lines
of their own. The conversation is kept until ``/clear`` or the end; with ``--session
NAME`` it is stored (in ``--db FILE``, else the host's default db: `ferrule.cli.sessions`)
and a later ``ferrule chat --session NAME`` goes on from it. ``/exit`` (or Ctrl-D)
quits; Ctrl-C stops a reply that is streaming, or quits at the prompt. In a terminal,
lines are edited and recalled with readline, and the history is kept in
``$XDG_STATE_HOME/ferrule/chat_history`` (``~/.local/state/...``).

``-m`` takes a model id or an alias of ``config.toml`` (`ferrule.config`), whose
``default_model`` is the model when ``-m`` is not given.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ferrule_kernel import FerruleError, InvalidInputError

from .sessions import add_db_argument, sqlite_db

HELP = "commands: /exit quits, /clear forgets the conversation, /help shows this"

#: How many of a stored session's latest runs a resumed chat sees.
SESSION_HISTORY_RUNS = 20


def _session_options(args: argparse.Namespace) -> dict[str, Any]:
    """The agent's settings for ``--session`` / ``--db``."""
    if args.session is None:
        if args.db is not None:
            raise InvalidInputError("--db keeps a session: give --session NAME", field="--db")
        return {}
    return {
        "db": sqlite_db(args.db),
        "session_id": args.session,
        "add_history_to_context": True,
        "num_history_runs": SESSION_HISTORY_RUNS,
    }


def _resumed(agent: Any) -> str:
    """What the chat says about its stored session as it starts."""
    session = agent.get_session()
    if session is None:
        return f"new session {agent.session_id}"
    return f"resuming session {agent.session_id} ({len(session.runs or [])} runs)"


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    parser = subparsers.add_parser("chat", help="chat with a model in the terminal")
    parser.add_argument(
        "question",
        nargs="?",
        help="ask this once, print the answer and exit (piped stdin comes before it)",
    )
    parser.add_argument(
        "-m",
        "--model",
        help="a local or API model id (provider:model too), an alias of config.toml, or "
        f"'test' (default: config.toml's default_model, else {DEFAULT_LOCAL_MODEL}, offline)",
    )
    parser.add_argument(
        "--provider", help="the API provider, for a model id without a known prefix"
    )
    parser.add_argument("--system", help="a system message")
    parser.add_argument("--reasoning", action="store_true", help="ask the model to reason first")
    parser.add_argument(
        "-o",
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an attribute of the model's component (VALUE is JSON, or else a string); repeatable",
    )
    parser.add_argument(
        "--tool",
        action="append",
        default=[],
        metavar="PRESET",
        help="give the model a preset tool (calculator, http_request); repeatable",
    )
    parser.add_argument(
        "--session",
        metavar="NAME",
        help="store the conversation as this session, and resume it if it exists "
        "(see `ferrule sessions`)",
    )
    from . import webchat

    webchat.add_arguments(parser)  # --web and its options
    add_db_argument(parser)
    parser.set_defaults(func=_chat)


def parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise FerruleError(f"--option takes KEY=VALUE, got {pair!r}")
        try:
            options[key] = json.loads(value)
        except ValueError:
            options[key] = value
    return options


class ModelId:
    """A model named on the command line; the agent routes it (`ferrule.models.route_model`:
    the named provider's API model, an API model known by its prefix, or a local model)."""

    def __init__(self, model_id: str, provider: str | None, options: dict[str, Any]) -> None:
        self.id, self.provider, self.options = model_id, provider, options

    def route(self, kernel: Any) -> Any:
        from ..models import route_model

        return route_model(kernel, self.id, self.provider, self.options)


class _Printer:
    """Writes an agent's responses to a rich console as they stream."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self.open_line = False  # the cursor is after streamed text

    def _newline(self) -> None:
        if self.open_line:
            self.console.print()
            self.open_line = False

    def show(self, response: Any) -> None:
        from rich.text import Text

        kind, content = response.type, response.content
        if kind in ("output_text", "reasoning"):
            if response.is_type_switched:
                self._newline()
            style = "dim italic" if kind == "reasoning" else None
            self.console.print(Text(content, style=style or ""), end="", soft_wrap=True)
            self.open_line = True
            return
        self._newline()
        if kind == "tool_call":
            function = content["function"]
            arguments = json.dumps(function["arguments"], ensure_ascii=False)
            self.console.print(Text(f"⚙ {function['name']}({arguments})", style="cyan"))
        elif kind == "tool_call_result":
            if "error" in content:
                self.console.print(Text(f"  ↳ error: {content['error']}", style="red"))
            else:
                shown = json.dumps(content["result"], ensure_ascii=False)
                shown = shown if len(shown) <= 500 else shown[:500] + "…"
                self.console.print(Text(f"  ↳ {shown}", style="green"))
        elif kind == "error":
            self.console.print(Text(f"error: {content}", style="bold red"))
        elif kind == "paused":
            pass  # the chat asks for confirmation itself

    def end(self) -> None:
        self._newline()


def _print_error(console: Any, exc: FerruleError) -> None:
    """One line, whatever the terminal's width, and the message as text (not markup)."""
    from rich.text import Text

    line = Text.assemble(("error", "bold red"), f" ({exc.kind}): {exc.message}")
    console.print(line, soft_wrap=True)


def _reply(agent: Any, stream: Any, printer: _Printer, console: Any) -> bool:
    """Stream one run (and its continuations); False if it ended in an error."""
    while True:
        for response in stream:
            printer.show(response)
        printer.end()
        output = stream.output
        if not output.is_paused:
            return output.error is None
        for requirement in output.requirements:
            call = requirement.tool_call
            answer = console.input(
                f"[yellow]run {call.name}({json.dumps(call.arguments)})? [y/N][/] "
            )
            if answer.strip().lower() in ("y", "yes"):
                requirement.confirm()
            else:
                requirement.reject("the user said no")
        stream = agent.continue_run(output.run_id, output.requirements)


#: Seconds a pipe has to deliver something (or end) when a question is given too.
PIPE_WAIT = 2.0


def _pipe_ready(timeout: float) -> bool:
    """True when stdin has something to read (or its end) within ``timeout`` seconds."""
    import select

    try:
        return bool(select.select([sys.stdin], [], [], timeout)[0])
    except (OSError, ValueError):  # no select on pipes here (Windows): read, as documented
        return True


def _question(args: argparse.Namespace) -> str | None:
    """The question to answer once: piped stdin, then the argument; None to chat.

    With a question given, an idle pipe (a parent that never writes or closes it) must not
    hang the command: it gets `PIPE_WAIT` seconds to start, else the question goes alone.
    """
    from .kernel import stdin_is_piped

    piped = ""
    if stdin_is_piped():
        if args.question is None or _pipe_ready(PIPE_WAIT):
            piped = sys.stdin.read().strip()
        else:
            print(
                f"ferrule chat: nothing came on stdin within {PIPE_WAIT:g} s; asking the "
                "question alone",
                file=sys.stderr,
            )
    parts = [part for part in (piped, args.question) if part]
    return "\n\n".join(parts) if parts else None


def chosen_model(args: argparse.Namespace) -> str:
    """``-m`` (through config.toml's aliases), else config.toml's default, else the
    offline default."""
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    from ..config import load_config

    return load_config().model(args.model) or DEFAULT_LOCAL_MODEL


class _History:
    """readline line editing and a history file, for a chat in a terminal."""

    LENGTH = 1000

    def __init__(self, console: Any) -> None:
        import os

        try:
            import readline
        except ImportError:  # no readline here (Windows): plain input
            self.readline = None
        else:
            self.readline = readline
        state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
        self.path = os.path.join(state, "ferrule", "chat_history")
        color = console.color_system is not None and not console.no_color
        # readline must know which characters of the prompt take no room (\001 ... \002),
        # or editing a recalled line redraws it in the wrong place.
        bold_green = "\001\x1b[1;32m\002you>\001\x1b[0m\002 "
        self.prompt = bold_green if color and self.readline else "you> "
        if self.readline is not None:
            self.readline.set_history_length(self.LENGTH)
            try:
                self.readline.read_history_file(self.path)
            except OSError:  # none yet
                pass

    def input(self) -> str:
        return input(self.prompt)

    def save(self) -> None:
        import os

        if self.readline is None:
            return
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            self.readline.write_history_file(self.path)
        except OSError:  # a read-only home: the chat still worked
            pass


def _chat(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ..agent import Agent
    from ..runtime import Runtime

    console = Console(highlight=False)
    errors = Console(stderr=True, highlight=False)
    try:
        model_id = chosen_model(args)
    except FerruleError as exc:
        _print_error(errors, exc)
        return 2
    if args.web:
        from . import webchat

        return webchat.run(args, model_id)
    question = _question(args)
    interactive = question is None
    with Runtime() as rt:
        try:
            model = ModelId(model_id, args.provider, parse_options(args.option))
            agent = Agent(
                rt,
                model,
                system_message=args.system,
                tools=args.tool,
                reasoning=args.reasoning,
                **_session_options(args),
            )
            if interactive:
                with console.status(f"loading {model_id}…"):
                    agent.load()
            else:
                agent.load()
        except FerruleError as exc:
            _print_error(errors, exc)
            return 1
        printer = _Printer(console)
        with agent:
            if question is not None:
                return 0 if _reply(agent, agent.query(question), printer, console) else 1
            console.print(f"[bold]ferrule chat[/] with {model_id} — {HELP}")
            if agent.db is not None:
                try:
                    console.print(f"[dim]({_resumed(agent)})[/]")
                except FerruleError as exc:
                    _print_error(errors, exc)
                    return 1
            history = _History(console) if sys.stdin.isatty() else None
            try:
                return _converse(agent, printer, console, history)
            finally:
                if history is not None:
                    history.save()


def _converse(agent: Any, printer: _Printer, console: Any, history: _History | None) -> int:
    while True:
        try:
            text = history.input() if history else console.input("[bold green]you>[/] ")
        except (EOFError, KeyboardInterrupt):
            console.print()
            return 0
        command = text.strip()
        if not command:
            continue
        if command in ("/exit", "/quit"):
            return 0
        if command == "/clear":
            if agent.db is not None:
                console.print(
                    "[dim](a stored session keeps its history: `ferrule sessions delete "
                    f"{agent.session_id}` forgets it)[/]"
                )
                continue
            agent.clear_messages()
            console.print("[dim](conversation cleared)[/]")
            continue
        if command == "/help":
            console.print(HELP)
            continue
        try:
            _reply(agent, agent.query(text), printer, console)
        except KeyboardInterrupt:
            printer.end()
            console.print("[dim](stopped)[/]")
        except FerruleError as exc:  # refused before the run started (e.g. bad input)
            printer.end()
            _print_error(console, exc)
