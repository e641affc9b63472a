"""`ferrule knowledge add docs/` before and after: ingest time side by side with a base
commit, and whether search finds the section that answers (the labelled set in
``bench/data/docs/``).

The base is ``BENCH_KNOWLEDGE_BASE`` (default ``bfca7dd``, the commit before ingest was
made faster and headings were kept with their text), taken out of git into a temporary
folder and run with ``PYTHONPATH`` naming its source folders, in the same virtualenv
(the same numpy, tokenizers and MiniLM weights). The current side is the working tree,
or the commit ``BENCH_KNOWLEDGE_CURRENT`` names, taken out the same way (so that work
under way in the checkout does not enter the figures). Both sides run the command a user
types, ``python -m ferrule.cli knowledge add DOCS --db FILE``, on one snapshot of this
repository's ``docs/``, into a fresh file each time; the runs alternate (base, current,
current, base, ...) so that load from elsewhere on the machine falls on both alike.
Seconds are wall-clock time of the whole command (start-up and model loading included).

Then each side's knowledge base is searched with the 58 questions (``vector``, the
default, and ``hybrid``), in a process of its own code, and each question scores by the
first found chunk that answers it (`_labelled.answers`: a chunk holding enough of a
labelled section's own lines): hit@1, hit@5, mean reciprocal rank.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import median, write_section
from _labelled import answers, docs_questions, docs_sections

ROOT = Path(__file__).resolve().parents[1]
BASE = os.environ.get("BENCH_KNOWLEDGE_BASE", "bfca7dd")
CURRENT = os.environ.get("BENCH_KNOWLEDGE_CURRENT", "")
ROUNDS = int(os.environ.get("BENCH_KNOWLEDGE_ROUNDS", "3"))
K = 5
MODES = ("vector", "hybrid")
_HEADING = re.compile(r"^#{1,6}\s")


def tree(commit: str, folder: Path) -> str:
    """``commit``'s sources in ``folder``; its ``PYTHONPATH``."""
    folder.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    weights = ROOT / "plugins" / "minilm" / "src" / "ferrule_minilm" / "weights"
    (folder / "plugins" / "minilm" / "src" / "ferrule_minilm" / "weights").symlink_to(weights)
    sources = [folder / "kernel" / "src", folder / "sdk" / "kit" / "src"]
    sources += [folder / "sdk" / "ferrule" / "src", *sorted(folder.glob("plugins/*/src"))]
    return os.pathsep.join(map(str, sources))


def add(pythonpath: str, docs: Path, db: Path) -> tuple[float, str, float]:
    """One ``ferrule knowledge add``: seconds, its summary line, the load average after."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    command = [sys.executable, "-m", "ferrule.cli", "knowledge", "add", str(docs)]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "--db", str(db)], env=env, capture_output=True, text=True, check=True
    )
    return time.perf_counter() - start, done.stdout.strip(), os.getloadavg()[0]


def found(pythonpath: str, db: Path) -> dict[str, list[list[list[str]]]]:
    """Per search mode, per question: the top ``K`` chunks' (name, text), by that side's
    code."""
    env = {**os.environ, "PYTHONPATH": pythonpath}
    out = subprocess.run(
        [sys.executable, __file__, "--search", str(db)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, list[list[list[str]]]] = json.loads(out)
    return result


def search_worker(db: str) -> None:
    """In the side's own process: every question searched in every mode, as JSON."""
    from ferrule import Runtime
    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb

    questions = docs_questions()
    out: dict[str, list[list[list[str]]]] = {}
    with Runtime() as rt:
        knowledge = Knowledge(vector_db=SqliteVecDb(db_file=db), runtime=rt)
        for mode in MODES:
            out[mode] = [
                [
                    [d.name or "", d.content]
                    for d in knowledge.search(q["question"], K, search_type=mode)
                ]
                for q in questions
            ]
        knowledge.close()
    print(json.dumps(out))


def chunk_counts(db: Path) -> tuple[int, int]:
    """Chunks stored, and how many of them are headings alone."""
    with sqlite3.connect(db) as connection:
        texts = [row[0] for row in connection.execute("SELECT text FROM knowledge__chunks")]
    bare = sum(
        all(not line.strip() or _HEADING.match(line) for line in text.splitlines())
        for text in texts
    )
    return len(texts), bare


def score(
    results: list[list[list[str]]], questions: list[dict[str, Any]], docs: Path
) -> tuple[float, float, float, list[str]]:
    """hit@1, hit@K, MRR, and the questions with no answer in the top K."""
    sections: dict[str, dict[str, list[list[str]]]] = {}
    ranks: list[int | None] = []
    for question, chunks in zip(questions, results, strict=True):
        rank = None
        for position, (name, text) in enumerate(chunks):
            for label in question["sections"]:
                file, heading = label.split("#", 1)
                if Path(name).name != file:
                    continue
                if file not in sections:
                    sections[file] = docs_sections((docs / file).read_text(encoding="utf-8"))
                if answers(text, sections[file][heading][0]):
                    rank = position
                    break
            if rank is not None:
                break
        ranks.append(rank)
    n = len(questions)
    at1 = sum(r == 0 for r in ranks) / n
    at_k = sum(r is not None for r in ranks) / n
    rr = sum(1 / (r + 1) for r in ranks if r is not None) / n
    misses = [q["question"] for q, r in zip(questions, ranks, strict=True) if r is None]
    return at1, at_k, rr, misses


def main() -> None:
    questions = docs_questions()
    with tempfile.TemporaryDirectory(prefix="ferrule-bench-docs-") as tmp:
        folder = Path(tmp)
        sides = {"base": tree(BASE, folder / "base")}
        sides["current"] = tree(CURRENT, folder / "current") if CURRENT else ""
        docs = folder / "docs"  # the current side's docs/, the same for both
        shutil.copytree((folder / "current" if CURRENT else ROOT) / "docs", docs)
        markdown = len(list(docs.glob("*.md")))
        seconds: dict[str, list[float]] = {side: [] for side in sides}
        summaries: dict[str, str] = {}
        loads = [os.getloadavg()[0]]
        databases: dict[str, Path] = {}
        for round_ in range(ROUNDS):
            order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
            for side in order:
                db = folder / f"{side}-{round_}.db"
                s, summary, load = add(sides[side], docs, db)
                seconds[side].append(s)
                summaries[side], databases[side] = summary, db
                loads.append(load)
                print(
                    f"  round {round_} {side}: {s:.1f} s ({summary}), load {load:.1f}", flush=True
                )
        quality = {}
        for side, pythonpath in sides.items():
            results = found(pythonpath, databases[side])
            quality[side] = {mode: score(results[mode], questions, docs) for mode in MODES}
            quality[side]["chunks"] = chunk_counts(databases[side])

    speedup = median([b / c for b, c in zip(seconds["base"], seconds["current"], strict=True)])
    rows = []
    for side in sides:
        chunks, bare = quality[side]["chunks"]
        label = f"base (`{BASE}`)" if side == "base" else f"current (`{CURRENT or 'tree'}`)"
        middle = median(seconds[side])
        times = ", ".join(f"{s:.0f}" for s in seconds[side])
        rows.append(
            f"| {label} | {times} | {middle:.1f} | {chunks} | {bare} | {chunks / middle:.1f} |"
        )
    quality_rows = []
    for mode in MODES:
        for side in sides:
            at1, at_k, rr, _ = quality[side][mode]
            quality_rows.append(f"| {side} | {mode} | **{at1:.3f}** | {at_k:.3f} | {rr:.3f} |")
    misses = quality["current"]["vector"][3]
    body = f"""
`ferrule knowledge add docs/` on this repository's `docs/` ({markdown} Markdown files), the
offline embedder (all-MiniLM-L6-v2 on numpy), against the base commit `{BASE}` run from
its own sources in the same virtualenv. {ROUNDS} rounds, base and current alternating;
wall-clock seconds of the whole command. The machine's load average during the runs:
{min(loads):.1f} to {max(loads):.1f} on {os.cpu_count()} cores (other work shares it).

| code | seconds, each run | median | chunks | headings alone | chunks/s |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Current is **{speedup:.1f}x** as fast as the base (the median of the per-round ratios).

Search on the result, with the {len(questions)} questions of `bench/data/docs/` (each
labelled with the section(s) of `docs/` that answer it): hit@1 is the share of questions
whose first chunk found answers, hit@{K} whose top {K} hold an answer.

| code | search | hit@1 | hit@{K} | MRR |
|---|---|---|---|---|
{chr(10).join(quality_rows)}

Questions the current code's vector search did not answer in the top {K}:
{chr(10).join(f"- {q}" for q in misses) or "- none"}

Reproduce: `nox -s bench -- knowledge_docs` (`BENCH_KNOWLEDGE_ROUNDS`, default 3;
`BENCH_KNOWLEDGE_BASE`, default `bfca7dd`).
"""
    write_section(
        "knowledge_docs", "Knowledge: `ferrule knowledge add docs/`, before and after", body
    )
    print(body)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--search"]:
        search_worker(sys.argv[2])
    else:
        main()
