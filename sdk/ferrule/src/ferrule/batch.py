"""Batch agent runs: many prompts through one model, each result written as it completes.

``ferrule batch IN.jsonl -o OUT.jsonl`` (`ferrule.cli.batch`) and `amap` / `run_file` here.
Each input is its own `Agent` run on one shared `LangModel`; with the model placed on a
cluster (``placement={"kind": "ray", "replicas": 8, ...}``: docs/deployment.md) the model's
work spreads over its replicas, while the agents' own loops stay in this process.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import attrs
from ferrule_kernel import FerruleError, InvalidInputError

from .agent import Agent
from .agent.langmodel import LangModel

__all__ = ["BatchInput", "BatchResult", "amap", "finished_ids", "read_inputs", "run_file"]


@attrs.frozen
class BatchInput:
    """One line of a batch file: ``{"id": ..., "prompt": "..."}`` (``id`` defaults to the
    line number; a string or an integer, kept as a string). A line that is not one has an
    ``error`` (naming the line), which is its result, and runs nothing."""

    id: str
    prompt: str
    error: InvalidInputError | None = attrs.field(default=None, eq=False)


@attrs.frozen
class BatchResult:
    """One line of a batch's output: the run's text, or the typed error it ended with
    (``{"kind", "message", "details"}``)."""

    id: str
    output: str | None = None
    error: dict[str, Any] | None = None
    seconds: float = 0.0
    #: Tokens the model generated for this run (for the progress line; not written).
    output_tokens: int = 0

    def to_line(self) -> str:
        fields = {"id": self.id, "seconds": round(self.seconds, 3)}
        fields.update({"output": self.output} if self.error is None else {"error": self.error})
        line = json.dumps(fields, ensure_ascii=False)
        if not _encodes(line):  # a lone surrogate (sent in a prompt's \ud800 escape, echoed)
            line = json.dumps(fields)  # escaped: the same JSON, and it encodes
        return line + "\n"


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lines(data: bytes) -> Iterator[tuple[int, str | None]]:
    """Each line of a JSONL file with its number, None for one that is not UTF-8."""
    for number, raw in enumerate(data.splitlines(), 1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, None


def read_inputs(path: str | Path) -> list[BatchInput]:
    """The inputs of a JSONL batch file. A line that is not one (not UTF-8, not JSON, not an
    object with a string ``prompt``, an ``id`` that is not a string or integer or is used
    twice) is an input whose ``error`` names it: its id is its own when that is usable,
    else ``"line N"``."""
    inputs = []
    seen: set[str] = set()

    def bad(key: str, message: str, field: str) -> None:
        seen.add(key)
        inputs.append(BatchInput(key, "", InvalidInputError(message, field=field)))

    for number, line in _lines(Path(path).read_bytes()):
        where = f"line {number}"
        if line is None:
            bad(where, f"{where}: not UTF-8 text", where)
            continue
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            bad(where, f"{where}: not JSON ({exc})", where)
            continue
        if not isinstance(record, dict):
            bad(where, f'{where}: expected an object with a string "prompt"', where)
            continue
        key = record.get("id", number)
        if not isinstance(key, (str, int)) or isinstance(key, bool):
            bad(where, f"{where}.id: expected a string or an integer", f"{where}.id")
            continue
        if str(key) in seen:
            bad(where, f"{where}.id: {key!r} is used twice", f"{where}.id")
            continue
        if not isinstance(record.get("prompt"), str):
            bad(str(key), f"{where}.prompt: expected a string", f"{where}.prompt")
            continue
        seen.add(str(key))
        inputs.append(BatchInput(str(key), record["prompt"]))
    return inputs


def finished_ids(
    path: str | Path,
    *,
    with_errors: bool = True,
    on_bad_line: Callable[[int, str], None] | None = None,
) -> set[str]:
    """The ids an output file already has a result for (with an error too, unless
    ``with_errors`` is False). A last line cut short by a crash is dropped from the file,
    so appending continues from a whole line. Another line that is not a result (not
    UTF-8, not JSON, not an object with an ``id``: an edit, a disk that filled up) names
    no input: it is passed to ``on_bad_line`` (its number and what it is not) and skipped,
    so the input it answered, if any, runs again; without ``on_bad_line`` it is an
    `InvalidInputError` naming the line."""
    output = Path(path)
    if not output.exists():
        return set()
    data = output.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        output.write_bytes(data)
    done = set()
    for number, line in _lines(data):
        record, why = _result_record(line)
        if record is None:
            if on_bad_line is None:
                message = f"{output.name} line {number} is not a result ({why})"
                raise InvalidInputError(message, field=f"line {number}")
            on_bad_line(number, why)
        elif with_errors or "error" not in record:
            done.add(str(record["id"]))
    return done


def _result_record(line: str | None) -> tuple[dict[str, Any] | None, str]:
    """An output line's record, or None and what the line is not."""
    if line is None:
        return None, "not UTF-8"
    try:
        record = json.loads(line)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(record, dict) or not isinstance(record.get("id"), (str, int)):
        return None, 'not an object with an "id"'
    return record, ""


async def _run_one(lm: LangModel, item: BatchInput, agent_options: dict[str, Any]) -> BatchResult:
    if item.error is not None:  # a line that is not an input: its error is its result
        return BatchResult(item.id, error=item.error.to_dict())
    start = time.perf_counter()
    texts = []
    try:
        agent = Agent(lm, **agent_options)
        stream = agent.aquery(item.prompt)
        async for response in stream:
            if response.type == "output_text":
                texts.append(response.content)
            elif response.type == "error":
                error = response.error or FerruleError(str(response.content))
                return BatchResult(item.id, error=error.to_dict(), seconds=_since(start))
    except FerruleError as exc:
        return BatchResult(item.id, error=exc.to_dict(), seconds=_since(start))
    tokens = stream.output.metrics.output_tokens
    return BatchResult(item.id, "".join(texts), seconds=_since(start), output_tokens=tokens)


def _since(start: float) -> float:
    return time.perf_counter() - start


async def amap(
    lm: LangModel,
    inputs: Iterable[BatchInput],
    *,
    concurrency: int = 16,
    **agent_options: Any,
) -> AsyncIterator[BatchResult]:
    """Run an agent (``Agent(lm, **agent_options)``) on each input, ``concurrency`` at a
    time; yield each `BatchResult` as its run completes (not in input order). A run that
    fails yields its error; the others go on."""
    if concurrency < 1:
        raise InvalidInputError("concurrency: must be at least 1", field="concurrency")
    pending: Iterator[BatchInput] = iter(inputs)
    results: asyncio.Queue[BatchResult | None] = asyncio.Queue()

    async def worker() -> None:
        try:
            for item in pending:  # shared: each worker takes the next input
                await results.put(await _run_one(lm, item, agent_options))
        finally:
            await results.put(None)

    workers = [asyncio.ensure_future(worker()) for _ in range(concurrency)]
    try:
        running = len(workers)
        while running:
            result = await results.get()
            if result is None:
                running -= 1
            else:
                yield result
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


async def run_file(
    lm: LangModel,
    input_path: str | Path,
    output_path: str | Path,
    *,
    concurrency: int = 16,
    retry_errors: bool = False,
    progress: TextIO | None = sys.stderr,
    **agent_options: Any,
) -> dict[str, int]:
    """Run every input of ``input_path`` that ``output_path`` has no result for yet
    (resuming after a crash; with ``retry_errors``, errors are run again), appending each
    result as one JSON line as soon as it completes. Progress goes to ``progress``, with
    each line of the output file that is not a result (`finished_ids`), which is skipped.
    Returns the counts: ``total``, ``skipped`` (already done), ``ok``, ``failed`` and
    ``ignored_lines`` (of the output file, not results)."""
    inputs = read_inputs(input_path)
    ignored: list[int] = []

    def bad_line(number: int, why: str) -> None:
        ignored.append(number)
        if progress is not None:
            progress.write(
                f"batch: {Path(output_path).name} line {number} is not a result ({why}); "
                "skipped: the input it answered, if any, runs again\n"
            )

    done = finished_ids(output_path, with_errors=not retry_errors, on_bad_line=bad_line)
    todo = [item for item in inputs if item.id not in done]
    counts = {
        "total": len(inputs),
        "skipped": len(inputs) - len(todo),
        "ok": 0,
        "failed": 0,
        "ignored_lines": len(ignored),
    }
    line = _ProgressLine(progress, counts)
    with open(output_path, "a", encoding="utf-8") as output:
        async for result in amap(lm, todo, concurrency=concurrency, **agent_options):
            output.write(result.to_line())
            output.flush()
            counts["ok" if result.error is None else "failed"] += 1
            line.update(result.output_tokens)
    line.close()
    return counts


class _ProgressLine:
    """`run_file`'s progress: on a terminal one line, rewritten in place after each run;
    elsewhere (a log file, a pipe) a line of its own per run, so a log reads in order.
    Rates are over the runs since the start, to three significant digits (a slow model's
    0.0123 runs/s is not 0.0)."""

    def __init__(self, stream: TextIO | None, counts: dict[str, int]) -> None:
        self.stream, self.counts = stream, counts
        self.in_place = stream is not None and _is_terminal(stream)
        self.start = time.perf_counter()
        self.tokens = 0
        self.written = False

    def update(self, tokens: int) -> None:
        self.tokens += tokens
        if self.stream is None:
            return
        counts = self.counts
        finished = counts["ok"] + counts["failed"]
        elapsed = max(_since(self.start), 1e-9)
        text = (
            f"batch: {finished + counts['skipped']}/{counts['total']} done "
            f"({counts['skipped']} before), {counts['failed']} failed, "
            f"{_rate(finished / elapsed)} runs/s, {_rate(self.tokens / elapsed)} tokens/s"
        )
        self.stream.write(f"\r{text}" if self.in_place else f"{text}\n")
        self.stream.flush()
        self.written = True

    def close(self) -> None:
        if self.stream is not None and self.in_place and self.written:
            self.stream.write("\n")  # the in-place line ends before what comes next


def _rate(value: float) -> str:
    """At least three significant digits, never in exponent form: 0.0123, 4.56, 789, 1500."""
    if value <= 0:
        return "0"
    return f"{value:.{max(0, 2 - math.floor(math.log10(value)))}f}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or a stand-in without isatty
        return False
