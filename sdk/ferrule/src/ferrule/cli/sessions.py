"""``ferrule sessions list|show ID|delete ID``: the sessions an agent (or ``ferrule chat
--session``) stored in a SQLite db.

    ferrule sessions list                  # the host's default db (FERRULE_STORAGE_DIR)
    ferrule sessions list --db agent.db    # a db file of your own, as SqliteDb(db_file=...)
    ferrule sessions show work             # its runs' messages, oldest first
    ferrule sessions delete work           # the session and its runs

The db is ``--db FILE``, else the host's ``ferrule.db`` in ``$FERRULE_STORAGE_DIR`` (by
default ``$XDG_DATA_HOME/ferrule``, i.e. ``~/.local/share/ferrule``), which is also where
``ferrule chat --session`` keeps its sessions when not given ``--db``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ferrule_kernel import FerruleError


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """``--db FILE``, unless the parser has it already (``ferrule chat --web`` keeps its
    sessions in the same db)."""
    try:
        parser.add_argument(
            "--db",
            metavar="FILE",
            help="a SQLite db file (default: ferrule.db in the storage directory, "
            "$FERRULE_STORAGE_DIR or ~/.local/share/ferrule)",
        )
    except argparse.ArgumentError:
        pass


def sqlite_db(path: str | None) -> Any:
    """The `SqliteDb` of ``--db`` (the host's default db when None)."""
    from ..db import SqliteDb

    return SqliteDb(db_file=path) if path else SqliteDb()


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sessions = subparsers.add_parser(
        "sessions", help="list, show and delete stored agent sessions (SQLite)"
    )
    actions = sessions.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the sessions, most recently updated first")
    listing.add_argument("--user", help="only this user's sessions")
    listing.add_argument("--limit", type=int, default=100, help="at most this many (100)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(listing)
    listing.set_defaults(func=_list)
    show = actions.add_parser("show", help="a session and its messages")
    show.add_argument("session_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print JSON")
    add_db_argument(show)
    show.set_defaults(func=_show)
    delete = actions.add_parser("delete", help="delete a session and its runs")
    delete.add_argument("session_id", metavar="ID")
    add_db_argument(delete)
    delete.set_defaults(func=_delete)


def _fail(message: str) -> int:
    print(f"ferrule sessions: {message}", file=sys.stderr)
    return 1


def _call(args: argparse.Namespace, method: str, inputs: dict[str, Any]) -> Any:
    """Call ``method`` of the db's storage component, on a runtime of this command."""
    from ..runtime import Runtime

    db = sqlite_db(args.db)
    with Runtime() as rt:
        rt.define(db.component_type, "sessions_db", db.attributes(rt))
        return rt.call_method("sessions_db", method, inputs)


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "-"


def _list(args: argparse.Namespace) -> int:
    inputs: dict[str, Any] = {"limit": args.limit}
    if args.user:
        inputs["user_id"] = args.user
    try:
        sessions = _call(args, "list_sessions", inputs)["sessions"]
    except FerruleError as exc:
        return _fail(f"{exc.kind}: {exc.message}")
    if args.json:
        print(json.dumps(sessions, ensure_ascii=False, indent=2))
        return 0
    if not sessions:
        print("no sessions")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table("session", "name", "user", "runs", "updated", box=None, highlight=False)
    for session in sessions:
        table.add_row(
            session["session_id"],
            session.get("name") or "",
            session.get("user_id") or "",
            str(session.get("run_count", 0)),
            _when(session.get("updated_at", 0.0)),
        )
    Console(highlight=False).print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    try:
        session = _call(args, "get_session", {"session_id": args.session_id})["session"]
        if session is None:
            return _fail(f"no session {args.session_id!r}")
        messages = _call(args, "get_messages", {"session_id": args.session_id})["messages"]
    except FerruleError as exc:
        return _fail(f"{exc.kind}: {exc.message}")
    if args.json:
        print(json.dumps({**session, "messages": messages}, ensure_ascii=False, indent=2))
        return 0
    from ferrule_kit.content.messages import Message
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False)
    title = f"session {session['session_id']}"
    if session.get("name"):
        title += f" ({session['name']})"
    details = f"{session.get('run_count', 0)} runs, updated {_when(session.get('updated_at', 0))}"
    console.print(Text(title, style="bold"), Text(details, style="dim"))
    if session.get("session_state"):
        state = json.dumps(session["session_state"], ensure_ascii=False)
        console.print(Text(f"state: {state}", style="dim"))
    styles = {"user": "bold green", "assistant": "bold blue", "tool": "cyan", "system": "dim"}
    for data in messages:
        message = Message.from_dict(data)
        text = message.text
        if message.tool_calls:
            calls = ", ".join(
                f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)})"
                for c in message.tool_calls
            )
            text = f"{text}\n[tool calls] {calls}".strip()
        console.print(Text(f"{message.role}>", style=styles.get(message.role, "")), Text(text))
    return 0


def _delete(args: argparse.Namespace) -> int:
    try:
        deleted = _call(args, "delete_session", {"session_id": args.session_id})["deleted"]
    except FerruleError as exc:
        return _fail(f"{exc.kind}: {exc.message}")
    if not deleted:
        return _fail(f"no session {args.session_id!r}")
    print(f"deleted session {args.session_id}")
    return 0
