"""Tracing cost (ferrule-otel): one agent run on the test model (a tool call, then the
answer: two model calls and one tool call) timed three ways in the same process, rounds
interleaved (and the first way twice, to show the size of the noise):

- not installed: the agent's instrumentation is None, which is what its run, model-call
  and tool-call sites see when no plugin answers ``ferrule_instrumentation`` (they test
  that one value and do nothing else);
- installed, off: ferrule-otel as its hook answers in a process that imported
  OpenTelemetry (this script does) but set no tracer provider: no span is started (in a
  process that never imports OpenTelemetry it is less still, a dictionary lookup);
- on: ferrule-otel with the OpenTelemetry SDK's ``TracerProvider`` and a
  ``SimpleSpanProcessor`` into an ``InMemorySpanExporter`` (4 spans a run), content
  capture off.

Target: off adds nothing measurable (within noise of not installed).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from _common import write_section
from ferrule import Agent, Runtime
from ferrule_kit.instrumentation import _Guarded
from ferrule_otel.spans import GenAIInstrumentation
from ferrule_testmodel import TestModel
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ROUNDS = int(os.environ.get("BENCH_OTEL_ROUNDS", "15"))
RUNS = int(os.environ.get("BENCH_OTEL_RUNS", "100"))  # runs per round


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def answer(request: Any) -> Any:
    """Call ``add`` first, then answer from its result: the same run every time."""
    if request.messages[-1].role == "tool":
        return "The sum is 3."
    return {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}


def main() -> None:
    assert not isinstance(trace.get_tracer_provider(), TracerProvider), "no provider yet"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with Runtime() as rt:
        agents = {
            name: Agent(rt, TestModel(function=answer), tools=[add])
            for name in ("not installed", "installed, off", "on", "not installed, again")
        }
        off = agents["installed, off"]._instrumentation
        assert off is not None, "ferrule-otel must be installed"
        agents["not installed"]._instrumentation = None
        agents["not installed, again"]._instrumentation = None  # the noise, measured
        agents["on"]._instrumentation = _Guarded(
            [("otel", GenAIInstrumentation(tracer_provider=provider))]
        )
        for agent in agents.values():
            assert agent.run("What is 1 + 2?").content == "The sum is 3."
        assert len(exporter.get_finished_spans()) == 4, "one run: 4 spans"
        exporter.clear()
        times: dict[str, list[float]] = {name: [] for name in agents}
        cpu: dict[str, list[float]] = {name: [] for name in agents}
        for _ in range(ROUNDS):  # interleaved, so machine noise hits all alike
            for name, agent in agents.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                for _ in range(RUNS):
                    agent.run("What is 1 + 2?")
                cpu[name].append((time.process_time() - start_cpu) / RUNS)
                times[name].append((time.perf_counter() - start) / RUNS)
                exporter.clear()
        for agent in agents.values():
            agent.delete()
    best = {name: min(ts) * 1e6 for name, ts in times.items()}
    med = {name: statistics.median(ts) * 1e6 for name, ts in times.items()}
    cpu_med = {name: statistics.median(ts) * 1e6 for name, ts in cpu.items()}
    base, cpu_base = best["not installed"], cpu_med["not installed"]
    rows = [
        "| tracing | best µs/run | median µs/run | median CPU µs/run | vs not installed: best, CPU |",
        "|---|---|---|---|---|",
        *(
            f"| {name} | {best[name]:.0f} | {med[name]:.0f} | {cpu_med[name]:.0f} | "
            f"{best[name] / base:.3f}x ({best[name] - base:+.0f} µs), "
            f"{cpu_med[name] / cpu_base:.3f}x ({cpu_med[name] - cpu_base:+.0f} µs) |"
            for name in agents
        ),
    ]
    body = "\n".join(
        [
            "One `agent.run(...)` on the test model: a tool call, then the answer (two model "
            f"calls, one tool call; 4 spans when traced). Best and median of {ROUNDS} "
            f"interleaved rounds of {RUNS} runs each, on one Runtime.",
            "",
            *rows,
            "",
            "*Not installed* is what the agent's sites see without a tracing plugin (its "
            "instrumentation is None); *installed, off* is ferrule-otel in a process that "
            "imported OpenTelemetry but set no tracer provider; *on* records every span with the "
            "OpenTelemetry SDK (`SimpleSpanProcessor` into an `InMemorySpanExporter`); "
            "*not installed, again* is the first row measured twice, the size of the noise. CPU "
            "time is the process's (every thread), which a loaded machine disturbs less than "
            f"the wall clock; load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}.",
            "",
            "Reproduce: `nox -s bench -- otel`.",
        ]
    )
    print(body)
    write_section("otel", "Tracing (ferrule-otel)", body)


if __name__ == "__main__":
    main()
