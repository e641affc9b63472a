"""Shared by the benchmark scripts: machine facts and where each writes its section.

Each ``bench/bench_*.py`` measures ratios against a baseline run in the same process,
then calls `write_section`; ``nox -s bench`` runs them all and assembles
``docs/benchmarks.md`` from ``bench/results/*.md``.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def today() -> str:
    return datetime.date.today().isoformat()


def best_of(fn: Callable[[], object], *, repeat: int = 5, number: int = 1) -> float:
    """Seconds per call of ``fn``: the best of ``repeat`` rounds of ``number`` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def median(values: list[float]) -> float:
    return statistics.median(values)


def write_section(name: str, title: str, body: str) -> Path:
    """Write one benchmark's markdown section (machine and date included)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.md"
    path.write_text(f"## {title}\n\n_Measured {today()} on {machine()}._\n\n{body.strip()}\n")
    return path
