"""``ferrule knowledge add|search``: a knowledge base from the terminal (`ferrule.knowledge`).

    ferrule knowledge add docs/ --include '*.md' --metadata '{"source": "docs"}'
    ferrule knowledge add https://example.com/guide.md
    ferrule knowledge search "how do I resume a session?" --top-k 3 --filter '{"source": "docs"}'

The knowledge base is a sqlite-vec file (``--db FILE``; default: ``ferrule-vectors.db``
in the storage directory) or PostgreSQL with pgvector (``--db-url postgresql://...``),
embedded by the offline MiniLM model unless ``--embedder`` names another. With ``--url``
(or ``$FERRULE_URL``) the embedder and the store run on that ``ferrule serve``: files are
read here, and ``--db`` names a file in the server's storage directory. Adding shows its
progress on stderr from the start (`IngestDisplay`): a bar on a terminal, moving after
each call of the embedder; elsewhere (a log, a pipe) plain lines, every
``--progress-every`` seconds. A folder's file
that cannot be read (a broken or oversized PDF, a link out of the folder) is reported on
stderr, one ``failed: PATH: why`` line each, and counted in the summary; the rest is
added. A URL is fetched under ``http_request``'s address policy (public addresses only
unless ``FERRULE_HTTP_REQUEST_ALLOW`` allows more).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from ferrule_kernel import FerruleError

from .kernel import fail, runtime_for, server_address, server_arguments

#: Seconds between progress lines when stderr is not a terminal.
PLAIN_EVERY = 5.0


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    knowledge = subparsers.add_parser(
        "knowledge", help="add documents to a knowledge base and search it"
    )
    actions = knowledge.add_subparsers(dest="knowledge_command", metavar="ACTION", required=True)

    add = actions.add_parser("add", help="add a file, folder or URL (text, Markdown, PDF)")
    add.add_argument("path", help="a file, a folder read recursively, or an http(s) URL")
    add.add_argument(
        "--include",
        action="append",
        default=[],
        metavar="GLOB",
        help="only files matching this glob (repeatable), e.g. '*.md'",
    )
    add.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="leave out files matching this glob (repeatable)",
    )
    add.add_argument(
        "--metadata",
        type=_json_object,
        default=None,
        metavar="JSON",
        help='metadata for every chunk, e.g. \'{"source": "docs"}\'',
    )
    add.add_argument("--name", help="the document's name (a single file)")
    add.add_argument(
        "--chunk-size", type=int, default=1000, help="chunk size in UTF-8 bytes (default 1000)"
    )
    add.add_argument(
        "--chunk-overlap",
        type=int,
        default=None,
        help="bytes consecutive chunks share (default: a tenth of the size, at most 100)",
    )
    add.add_argument(
        "--force", action="store_true", help="re-embed documents that are stored unchanged"
    )
    add.add_argument(
        "--progress-every",
        type=float,
        default=PLAIN_EVERY,
        metavar="SECONDS",
        help=f"off a terminal, a progress line at most this often (default {PLAIN_EVERY:g})",
    )
    add.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="read a folder's links to files outside it (by default they are refused)",
    )
    add.set_defaults(func=_add)

    search = actions.add_parser("search", help="the chunks most relevant to a query")
    search.add_argument("query")
    search.add_argument("--top-k", type=int, default=5, help="how many chunks (default 5)")
    search.add_argument(
        "--filter",
        type=_json_object,
        default=None,
        metavar="JSON",
        help='metadata filter, e.g. \'{"year": {"$gte": 2020}}\'',
    )
    search.add_argument(
        "--keyword", action="store_true", help="full-text search instead of search by meaning"
    )
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(func=_search)

    for parser in (add, search):
        parser.add_argument(
            "--db",
            metavar="FILE",
            help="the sqlite-vec file (default: ferrule-vectors.db in the storage directory; "
            "with --url, a file in the server's storage directory)",
        )
        parser.add_argument(
            "--db-url", metavar="URL", help="PostgreSQL with pgvector instead (postgresql://...)"
        )
        parser.add_argument(
            "--table", default="knowledge", help="the collection (default: knowledge)"
        )
        server_arguments(parser, required=False)
        parser.add_argument(
            "--embedder",
            default="minilm",
            help="minilm (offline, default), openai[:MODEL] or gemini[:MODEL]",
        )


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def _knowledge(args: argparse.Namespace, runtime: Any, **options: Any) -> Any:
    from ..knowledge import Knowledge
    from ..knowledge.embedder import GeminiEmbedder, MiniLMEmbedder, OpenAIEmbedder
    from ..knowledge.vectordb import PgVector, SearchTypeName, SqliteVecDb

    search_type: SearchTypeName = "keyword" if getattr(args, "keyword", False) else "vector"
    if args.db_url is not None:
        if args.db is not None:
            raise SystemExit("error: give --db or --db-url, not both")
        vector_db: Any = PgVector(
            table_name=args.table, db_url=args.db_url, search_type=search_type
        )
    elif server_address(args)[0] is not None:  # the store lives on the server: a file of its own
        vector_db = SqliteVecDb(table_name=args.table, store=args.db, search_type=search_type)
    else:
        vector_db = SqliteVecDb(table_name=args.table, db_file=args.db, search_type=search_type)
    provider, _, model = args.embedder.partition(":")
    if provider == "minilm":
        embedder: Any = MiniLMEmbedder()
    elif provider == "openai":
        embedder = OpenAIEmbedder(id=model) if model else OpenAIEmbedder()
    elif provider == "gemini":
        embedder = GeminiEmbedder(id=model) if model else GeminiEmbedder()
    else:
        raise SystemExit(f"error: unknown embedder {args.embedder!r}: minilm, openai or gemini")
    return Knowledge(vector_db=vector_db, embedder=embedder, runtime=runtime, **options)


def _add(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True)  # stdout carries the result alone
    display = IngestDisplay(console, args.path, args.progress_every)
    try:
        with runtime_for(args) as rt:
            overlap = args.chunk_overlap
            if overlap is None:
                overlap = min(100, max(args.chunk_size, 0) // 10)
            knowledge = _knowledge(args, rt, chunk_size=args.chunk_size, chunk_overlap=overlap)
            is_url = args.path.startswith(("http://", "https://"))
            result = knowledge.add_content(
                name=args.name,
                path=None if is_url else args.path,
                url=args.path if is_url else None,
                metadata=args.metadata,
                include=args.include,
                exclude=args.exclude,
                reembed=args.force,
                progress=display.update,
                follow_symlinks=args.follow_symlinks,
            )
    except FerruleError as exc:
        display.close(finished=False)
        return fail(exc)
    except BaseException:
        display.close(finished=False)
        raise
    display.close(finished=True)
    for failure in result.failed:
        console.print(f"failed: {failure.message}", markup=False, highlight=False, soft_wrap=True)
    failed = f"; {len(result.failed)} failed" if result.failed else ""
    print(
        f"added {len(result.added)}, replaced {len(result.replaced)}, skipped "
        f"{len(result.skipped)} document(s); {result.chunks} chunk(s) written{failed}"
    )
    return 0


class IngestDisplay:
    """``knowledge add``'s progress on stderr, shown from the start. On a terminal, a bar
    (rich): reading, then chunks embedded of all, chunks per second, time spent and
    left, moved after each embedder call. Elsewhere a line when reading starts, one when
    the chunks are counted, then at most every ``every`` seconds (chunks, documents
    stored, chunks per second, time left), and one at the end: a log reads in order."""

    def __init__(self, console: Any, what: str, every: float) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console, self.every = console, every
        self.status: Any = None  # the last IngestProgress
        self.since = 0.0  # when embedding started
        self.told = 0.0  # when the last plain line was written
        self.bar: Any = None
        if console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("chunks {task.fields[rate]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self.task = self.bar.add_task(f"reading {what}", total=None, rate="")
            self.bar.start()
        else:
            self._line(f"reading {what}")

    def update(self, status: Any) -> None:
        """`ferrule.knowledge.IngestProgress` after each step (on the runtime's loop)."""
        now = time.monotonic()
        if self.status is None:
            self.since = now
        self.status = status
        rate = status.embedded / (now - self.since) if now > self.since else 0.0
        if self.bar is not None:
            self.bar.update(
                self.task,
                description=f"embedding {status.documents} document(s)",
                completed=status.embedded,
                total=status.chunks,
                rate=f"{_per_second(rate)}/s" if status.embedded else "",
            )
            return
        unchanged = f" ({status.skipped} unchanged, skipped)" if status.skipped else ""
        if status.chunks == 0:
            self._line(f"nothing to embed{unchanged}")
        elif status.embedded == 0:
            self._line(
                f"embedding {status.chunks} chunk(s) of {status.documents} document(s){unchanged}"
            )
        elif now - self.told >= self.every and status.embedded < status.chunks:
            left = (status.chunks - status.embedded) / rate if rate else 0.0
            self._line(
                f"{status.embedded}/{status.chunks} chunks embedded "
                f"({100 * status.embedded // max(status.chunks, 1)}%), "
                f"{status.stored}/{status.documents} documents stored, "
                f"{_per_second(rate)} chunks/s, about {_duration(left)} left"
            )

    def close(self, *, finished: bool) -> None:
        if self.bar is not None:
            self.bar.stop()
            return
        status = self.status
        if finished and status is not None and status.chunks:
            spent = time.monotonic() - self.since
            self._line(
                f"{status.embedded} chunk(s) embedded in {_duration(spent)} "
                f"({_per_second(status.embedded / max(spent, 1e-9))} chunks/s)"
            )

    def _line(self, text: str) -> None:
        self.told = time.monotonic()
        self.console.file.write(f"knowledge add: {text}\n")
        self.console.file.flush()


def _per_second(rate: float) -> str:
    """A rate to three significant figures below 100 (0.0214, 3.51, 42.7), whole above."""
    return f"{rate:.3g}" if rate < 100 else f"{rate:.0f}"


def _duration(seconds: float) -> str:
    minutes, second = divmod(round(seconds), 60)
    return f"{minutes}:{second:02d}"


def _search(args: argparse.Namespace) -> int:
    try:
        with runtime_for(args) as rt:
            knowledge = _knowledge(args, rt)
            found = knowledge.search(args.query, max_results=args.top_k, filters=args.filter)
    except FerruleError as exc:
        return fail(exc)
    if args.json:
        rows = [{**d.to_dict(), "score": d.score, "content_id": d.content_id} for d in found]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not found:
        print("nothing found")
    for rank, document in enumerate(found, 1):
        score = f"{document.score:.3f}" if document.score is not None else "-"
        print(f"{rank}. {document.name} (score {score})")
        text = " ".join(document.content.split())
        print(f"   {text[:300]}{'...' if len(text) > 300 else ''}")
    return 0
