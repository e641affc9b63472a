"""Assemble docs/benchmarks.md from the sections the bench scripts wrote (bench/results)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEADER = """# Benchmarks

Every figure is a ratio against a baseline measured in the same run, on the machine and
date given in its section: these machines are shared and noisy, so absolute numbers
move; ratios move much less. Regenerate everything with `nox -s bench`, or one section
with `nox -s bench -- <name>` (the name of `bench/bench_<name>.py`).
"""


def main() -> None:
    sections = sorted((ROOT / "bench" / "results").glob("*.md"))
    body = "\n\n".join(p.read_text().strip() for p in sections)
    (ROOT / "docs" / "benchmarks.md").write_text(f"{HEADER}\n{body}\n")
    print(f"docs/benchmarks.md: {len(sections)} sections")


if __name__ == "__main__":
    main()
