"""Hooks and guardrails (ferrule-guardrails), each against a baseline in the same run.

- Run overhead: ``agent.run`` on the test model with no hooks (the baseline), with one
  sync and one async function pre-hook, and with ferrule-guardrails' two guardrails
  (injection check, PII masking) on a 1 KB input; interleaved rounds, best and median.
- Scanning: `PIIDetectionGuardrail.detect` and ``mask`` over a 1 MB text, against a scan
  with Agno's own four regular expressions (SSN, card, email, phone: ``search`` each),
  which checks no checksum.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import string
import time

from _common import best_of, write_section
from ferrule import Agent, Runtime
from ferrule_guardrails import PIIDetectionGuardrail, PromptInjectionGuardrail
from ferrule_testmodel import TestModel

ROUNDS = int(os.environ.get("BENCH_GUARDRAILS_ROUNDS", "15"))
RUNS = int(os.environ.get("BENCH_GUARDRAILS_RUNS", "20"))
SCAN_BYTES = int(os.environ.get("BENCH_GUARDRAILS_SCAN_BYTES", str(1 << 20)))

#: Agno's PIIDetectionGuardrail patterns, the baseline of the scan.
AGNO_PATTERNS = [
    re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),
    re.compile(r"\b\d{4}[\s-]?\d{4}[\s-]?\d{4}[\s-]?\d{4}\b"),
    re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Z|a-z]{2,}\b"),
    re.compile(r"\b\d{3}[\s.-]?\d{3}[\s.-]?\d{4}\b"),
]


def text_of(size: int, seed: int = 7) -> str:
    """Prose-like text with numbers (order ids, years, amounts) but no personal data: a
    number is always followed by a word (runs of numbers can look like a card number or
    a phone number, and one in ten passes the Luhn check)."""
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        roll = rng.random() if not words or words[-1].isalpha() else 1.0
        if roll < 0.05:
            word = str(rng.randint(1, 99999))
        elif roll < 0.07:
            word = "-".join(str(rng.randint(100, 999)) for _ in range(2))
        else:
            word = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9)))
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


def run_overhead(rt: Runtime) -> str:
    prompt = text_of(1000) + " Write to ada@example.com please."

    def sync_hook(run_input: object) -> None:
        pass

    async def async_hook(run_input: object) -> None:
        pass

    setups = {
        "no hooks": [],
        "one sync function hook": [sync_hook],
        "one async function hook": [async_hook],
        "both guardrails": [PromptInjectionGuardrail(), PIIDetectionGuardrail(mask_pii=True)],
    }
    agents = {name: Agent(rt, TestModel(), pre_hooks=hooks) for name, hooks in setups.items()}
    for agent in agents.values():
        agent.load()
        agent.run(prompt)  # warm up
    times: dict[str, list[float]] = {name: [] for name in setups}
    order = list(agents.items())
    rng = random.Random(1)
    for _ in range(ROUNDS):  # interleaved, in a new order each round: noise hits each alike
        rng.shuffle(order)
        for name, agent in order:
            start = time.perf_counter()
            for _ in range(RUNS):
                agent.run(prompt)
            times[name].append((time.perf_counter() - start) / RUNS * 1e6)
    for agent in agents.values():
        agent.delete()
    base = min(times["no hooks"])
    rows = [
        f"| {name} | {min(ts):.0f} | {statistics.median(ts):.0f} | "
        f"{min(ts) / base:.3f}x (+{min(ts) - base:.0f} µs) |"
        for name, ts in times.items()
    ]
    return (
        f"One `agent.run(...)` of a 1 KB input on the test model (echo), {ROUNDS} rounds of "
        f"{RUNS} runs each, the setups in a new random order each round.\n\n"
        "| pre_hooks | best µs/run | median µs/run | vs no hooks (best) |\n|---|---|---|---|\n"
        + "\n".join(rows)
    )


def scanning() -> tuple[str, float]:
    """The scan table, and `detect`'s microseconds per KB."""
    text = text_of(SCAN_BYTES)
    guard = PIIDetectionGuardrail()
    assert guard.detect(text) == [], "the corpus holds no personal data"
    assert not any(p.search(text) for p in AGNO_PATTERNS[:3])

    def agno() -> None:
        for pattern in AGNO_PATTERNS:
            pattern.search(text)

    baseline = best_of(agno, repeat=5)
    detect = best_of(lambda: guard.detect(text), repeat=5)
    mask = best_of(lambda: guard.mask(text), repeat=3)
    megabytes = SCAN_BYTES / (1 << 20)
    rows = [
        ("Agno's four patterns (`search`)", baseline),
        ("`detect` (5 kinds, Luhn and mod 97 checked)", detect),
        ("`mask`", mask),
    ]
    body = "\n".join(
        f"| {name} | {seconds * 1e3:.1f} | {megabytes / seconds:.0f} | {seconds / baseline:.2f}x |"
        for name, seconds in rows
    )
    table = (
        f"A {megabytes:.0f} MB text without personal data (words, numbers, order ids), best "
        "of 5 scans.\n\n"
        "| scan | ms | MB/s | vs Agno's patterns |\n|---|---|---|---|\n" + body
    )
    return table, detect / SCAN_BYTES * 1024 * 1e6


def main() -> None:
    with Runtime() as rt:
        overhead = run_overhead(rt)
    scan, per_kb = scanning()
    body = (
        f"{overhead}\n\n{scan}\n\n"
        "Hooks run before the model: sync ones in a worker thread (hence their cost over "
        "async ones), so that a slow hook never stalls other runs. A guardrail scans the "
        "input as text once per run, with Python's `re`: the PII guardrail's cost grows with "
        f"the input ({per_kb:.0f} µs per KB by the scan above: five kinds, one pass each), "
        "and the checksums add little, since they run only on what the patterns match.\n\n"
        "Reproduce: `nox -s bench -- guardrails`."
    )
    path = write_section("guardrails", "Hooks and guardrails (ferrule-guardrails)", body)
    print(path.read_text())


if __name__ == "__main__":
    main()
