"""Storage benchmarks, SQLite (ferrule-sqlite) and PostgreSQL (ferrule-postgres), each
against a baseline measured in the same run.

- History load: the messages of the last 3 runs (``get_messages(last_n_runs=3)``, what
  ``add_history_to_context`` asks for) of sessions of 10, 100 and 1,000 runs, through the
  kernel (``Runtime.call_method``). Baseline: the same load on the 10-run session; target:
  flat (the 1,000-run session within 1.5x of it). For scale, the whole history's load too.
- 256 concurrent sessions, each appending its runs one after another, all sessions at once
  from one asyncio loop. Baseline: the same appends one at a time. Targets: 0 errors, 0 lost
  runs (every run read back, each session's run count right).

SQLite runs with its defaults (WAL, ``synchronous=full``: a commit is on disk before it
returns); PostgreSQL is the throwaway server of `ferrule_kit.testing.postgres` (embedded-
postgres, on loopback, ``fsync=off``), so its figures leave out the disk.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
import uuid
from typing import Any

from _common import write_section
from ferrule import Runtime

SIZES = (10, 100, 1000)
WINDOW = 3
ROUNDS = int(os.environ.get("BENCH_STORAGE_ROUNDS", "200"))
SESSIONS = int(os.environ.get("BENCH_STORAGE_SESSIONS", "256"))
RUNS_PER_SESSION = int(os.environ.get("BENCH_STORAGE_RUNS", "4"))

ANSWER = "A sentence of an answer, long enough to look like one. " * 6


def run(session_id: str, index: int) -> dict[str, Any]:
    """A run as an agent stores it: a question, a tool call and its result, an answer."""
    call = {
        "id": f"call_{index}",
        "type": "function",
        "function": {"name": "lookup", "arguments": {"q": index}},
    }
    return {
        "run_id": f"{session_id}-{index}",
        "session_id": session_id,
        "status": "completed",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": f"Question {index}?"}]},
            {"role": "assistant", "content": [{"type": "text", "text": ""}], "tool_calls": [call]},
            {
                "role": "tool",
                "content": [{"type": "text", "text": '{"found": true}'}],
                "tool_call_id": call["id"],
            },
            {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]},
        ],
        "tool_calls": [
            {
                "tool_call_id": call["id"],
                "name": "lookup",
                "arguments": {"q": index},
                "result": {"found": True},
                "duration": 0.01,
            }
        ],
        "metrics": {"input_tokens": 120, "output_tokens": 60, "duration": 1.25},
        "content": ANSWER,
    }


def history(rt: Runtime) -> dict[int, dict[str, float]]:
    sessions = {}
    for size in SIZES:
        sid = f"h{size}-{uuid.uuid4().hex[:8]}"
        for index in range(size):
            rt.call_method("db", "append_run", {"run": run(sid, index)})
        sessions[size] = sid
    windowed = {"last_n_runs": WINDOW}
    for size, sid in sessions.items():  # checked before timing
        got = rt.call_method("db", "get_messages", {"session_id": sid, **windowed})["messages"]
        assert len(got) == 4 * WINDOW, (size, len(got))
    times: dict[tuple[int, str], list[float]] = {}
    for _ in range(ROUNDS):  # interleaved, so machine noise hits every size alike
        for size, sid in sessions.items():
            for kind, window in (("window", windowed), ("full", {})):
                if kind == "full" and len(times.get((size, kind), ())) >= ROUNDS // 10:
                    continue
                start = time.perf_counter()
                rt.call_method("db", "get_messages", {"session_id": sid, **window})
                times.setdefault((size, kind), []).append(time.perf_counter() - start)
    return {
        size: {kind: statistics.median(times[(size, kind)]) * 1e3 for kind in ("window", "full")}
        for size in SIZES
    }


def concurrent(rt: Runtime) -> dict[str, float]:
    async def session(sid: str, errors: list[BaseException]) -> None:
        for index in range(RUNS_PER_SESSION):
            try:
                await rt.acall_method("db", "append_run", {"run": run(sid, index)})
            except Exception as exc:
                errors.append(exc)

    async def all_at_once(prefix: str, errors: list[BaseException]) -> None:
        await asyncio.gather(*(session(f"{prefix}-{i}", errors) for i in range(SESSIONS)))

    async def one_at_a_time(prefix: str, errors: list[BaseException]) -> None:
        for i in range(SESSIONS):
            await session(f"{prefix}-{i}", errors)

    figures: dict[str, float] = {}
    for name, scenario in (("sequential", one_at_a_time), ("concurrent", all_at_once)):
        prefix = f"{name}-{uuid.uuid4().hex[:8]}"
        errors: list[BaseException] = []
        start = time.perf_counter()
        asyncio.run(scenario(prefix, errors))
        seconds = time.perf_counter() - start
        lost = 0
        for i in range(SESSIONS):
            sid = f"{prefix}-{i}"
            stored = rt.call_method("db", "get_runs", {"session_id": sid})["runs"]
            count = rt.call_method("db", "get_session", {"session_id": sid})["session"]["run_count"]
            lost += RUNS_PER_SESSION - len(stored) + abs(count - len(stored))
        figures[f"{name}_runs_s"] = SESSIONS * RUNS_PER_SESSION / seconds
        figures[f"{name}_errors"] = len(errors)
        figures[f"{name}_lost"] = lost
    return figures


def measure(
    component_type: str, attributes: dict[str, Any]
) -> tuple[dict[int, dict[str, float]], dict[str, float]]:
    with Runtime() as rt:
        rt.define(component_type, "db", attributes)
        return history(rt), concurrent(rt)


def main() -> None:
    from ferrule_kit.testing.postgres import start_postgres

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        os.environ["FERRULE_STORAGE_DIR"] = folder
        results["SQLite"] = measure("sqlite_storage", {"db_file": "bench.db"})
    server = start_postgres()
    try:
        os.environ["FERRULE_POSTGRES_DSN"] = server.create_database("bench")
        results["PostgreSQL"] = measure("postgres_storage", {"max_size": 20})
    finally:
        server.stop()

    history_rows = [
        "| backend | session length | last 3 runs | vs. 10 runs | whole history |",
        "|---|---|---|---|---|",
    ]
    concurrency_rows = [
        "| backend | one at a time | 256 sessions at once | errors | lost runs |",
        "|---|---|---|---|---|",
    ]
    for backend, (loads, conc) in results.items():
        base = loads[SIZES[0]]["window"]
        for size in SIZES:
            load = loads[size]
            history_rows.append(
                f"| {backend} | {size:,} runs | {load['window']:.2f} ms "
                f"| **{load['window'] / base:.2f}x** | {load['full']:.1f} ms |"
            )
        concurrency_rows.append(
            f"| {backend} | {conc['sequential_runs_s']:,.0f} runs/s "
            f"| {conc['concurrent_runs_s']:,.0f} runs/s | **{conc['concurrent_errors']:.0f}** "
            f"| **{conc['concurrent_lost']:.0f}** |"
        )
        assert conc["concurrent_errors"] == conc["concurrent_lost"] == 0, (backend, conc)
    body = f"""
Each run is what an agent stores: a question, a tool call and its result, an answer
(4 messages), with tool-call records and metrics (`bench/bench_storage.py`). Calls go
through the kernel (`Runtime.call_method`), validation and JSON included.

**History load.** `get_messages(last_n_runs={WINDOW})` on sessions of growing length, the
median of {ROUNDS} interleaved rounds; the baseline is the 10-run session. The window is
read through an index on (session, run order, status), so its cost does not grow with the
session; the whole history's load is shown for scale.

{chr(10).join(history_rows)}

Target: flat, the 1,000-run session within 1.5x of the 10-run one.

**256 concurrent sessions.** {SESSIONS} sessions, each appending {RUNS_PER_SESSION} runs in
turn, all sessions at once from one asyncio loop (SQLite: the kernel's worker threads;
PostgreSQL: a pool of 20 connections); the baseline is the same {SESSIONS * RUNS_PER_SESSION:,}
appends one at a time. Every run is read back afterwards and each session's run count
checked.

{chr(10).join(concurrency_rows)}

Targets: 0 errors, 0 lost runs. SQLite takes writers one at a time (one file lock), each
commit synced to disk (`synchronous=full`); PostgreSQL writes sessions in parallel, and
here has `fsync=off` (a throwaway test server).

Reproduce: `nox -s bench -- storage`.
"""
    write_section("storage", "Storage: history window and concurrent sessions", body)
    print(body)


if __name__ == "__main__":
    main()
