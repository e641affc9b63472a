"""Batch agent runs: many prompts through one model, each result written as it completes.

``ferrule batch IN.jsonl -o OUT.jsonl`` (`ferrule.cli.batch`) and `amap` / `run_file` here.
Each input is its own `Agent` run on one shared `LangModel`; with the model placed on a
cluster (``placement={"kind": "ray", "replicas": 8, ...}``: docs/deployment.md) the model's
work spreads over its replicas, while the agents' own loops stay in this process.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Iterable, Iterator
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
    line number; a string or an integer, kept as a string)."""

    id: str
    prompt: str


@attrs.frozen
class BatchResult:
    """One line of a batch's output: the run's text, or the typed error it ended with
    (``{"kind", "message", "details"}``)."""

    id: str
    output: str | None = None
    error: dict[str, Any] | None = None
    seconds: float = 0.0

    def to_line(self) -> str:
        fields = {"id": self.id, "seconds": round(self.seconds, 3)}
        fields.update({"output": self.output} if self.error is None else {"error": self.error})
        return json.dumps(fields, ensure_ascii=False) + "\n"


def read_inputs(path: str | Path) -> list[BatchInput]:
    """The inputs of a JSONL batch file; a bad line is an `InvalidInputError` naming it."""
    inputs = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"line {number}"
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise InvalidInputError(f"{where}: not JSON ({exc})", field=where) from None
            if not isinstance(record, dict) or not isinstance(record.get("prompt"), str):
                raise InvalidInputError(
                    f'{where}: expected an object with a string "prompt"', field=f"{where}.prompt"
                )
            key = record.get("id", number)
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise InvalidInputError(
                    f"{where}.id: expected a string or an integer", field=f"{where}.id"
                )
            if str(key) in seen:
                raise InvalidInputError(f"{where}.id: {key!r} is used twice", field=f"{where}.id")
            seen.add(str(key))
            inputs.append(BatchInput(str(key), record["prompt"]))
    return inputs


def finished_ids(path: str | Path, *, with_errors: bool = True) -> set[str]:
    """The ids an output file already has a result for (with an error too, unless
    ``with_errors`` is False). A last line cut short by a crash is dropped from the file,
    so appending continues from a whole line."""
    output = Path(path)
    if not output.exists():
        return set()
    data = output.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        output.write_bytes(data)
    done = set()
    for line in data.decode("utf-8").splitlines():
        record = json.loads(line)
        if with_errors or "error" not in record:
            done.add(str(record["id"]))
    return done


async def _run_one(lm: LangModel, item: BatchInput, agent_options: dict[str, Any]) -> BatchResult:
    start = time.perf_counter()
    texts = []
    try:
        agent = Agent(lm, **agent_options)
        async for response in agent.aquery(item.prompt):
            if response.type == "output_text":
                texts.append(response.content)
            elif response.type == "error":
                error = response.error or FerruleError(str(response.content))
                return BatchResult(item.id, error=error.to_dict(), seconds=_since(start))
    except FerruleError as exc:
        return BatchResult(item.id, error=exc.to_dict(), seconds=_since(start))
    return BatchResult(item.id, output="".join(texts), seconds=_since(start))


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
    result as one JSON line as soon as it completes. Progress goes to ``progress``.
    Returns the counts: ``total``, ``skipped`` (already done), ``ok``, ``failed``."""
    inputs = read_inputs(input_path)
    done = finished_ids(output_path, with_errors=not retry_errors)
    todo = [item for item in inputs if item.id not in done]
    counts = {"total": len(inputs), "skipped": len(inputs) - len(todo), "ok": 0, "failed": 0}
    start = time.perf_counter()
    with open(output_path, "a", encoding="utf-8") as output:
        async for result in amap(lm, todo, concurrency=concurrency, **agent_options):
            output.write(result.to_line())
            output.flush()
            counts["ok" if result.error is None else "failed"] += 1
            if progress is not None:
                finished = counts["ok"] + counts["failed"]
                rate = finished / max(_since(start), 1e-9)
                progress.write(
                    f"\rbatch: {finished + counts['skipped']}/{counts['total']} done "
                    f"({counts['skipped']} before), {counts['failed']} failed, {rate:.1f} runs/s"
                )
                progress.flush()
    if progress is not None:
        progress.write("\n")
    return counts
