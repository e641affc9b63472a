"""Kernel benchmarks: cold start and request dispatch, each as a ratio to a baseline
measured in the same run.

- Cold start: ``import ferrule; Runtime(); call echo; stop()`` (every plugin of the repo
  installed)
  against bare ``python -c pass`` and ``python -c "import llm"``, runs interleaved.
  Targets: within bare python + 120 ms, and under 0.2x ``import llm``.
- Dispatch: ``call echo`` (async, and sync through Runtime) and ``iter spell`` against
  calling the plugin's own function directly. Targets: async call within 10x, sync call
  within 40x a direct call.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

from _common import best_of, write_section

COLD_RUNS = int(os.environ.get("BENCH_COLD_RUNS", "25"))
FERRULE_COLD = "import ferrule; rt = ferrule.Runtime(); rt.call('echo', {'text': 'x'}); rt.stop()"


# Let every program keep its compiled bytecode, as on a user's machine (CI machines set
# PYTHONDONTWRITEBYTECODE, which would recompile editable sources on every start).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run_seconds(code: str) -> float:
    return _run(code)[0]


def _run(code: str) -> tuple[float, float]:
    """Wall-clock seconds of ``python -c code``, and the CPU seconds (user + system) the
    child used: on a shared, loaded machine the CPU time is what the program itself costs,
    the wall clock adds the time it waited for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def cold_start() -> tuple[str, dict[str, float]]:
    has_llm = shutil.which("llm") is not None or _importable("llm")
    programs = {
        "bare python": "pass",
        "ferrule": FERRULE_COLD,
        # The floor under any design that keeps attrs and pluggy at its core (cattrs is
        # not on the cold path: the kernel checks flat inputs such as echo's itself).
        "dependencies only": "import attrs, pluggy",
    }
    if has_llm:
        programs["import llm"] = "import llm"
    for code in programs.values():  # warm the OS file cache and ferrule's discovery cache
        _run_seconds(code)
    load_before = _load()
    times: dict[str, list[float]] = {name: [] for name in programs}
    cpu: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(COLD_RUNS):  # interleaved, so machine noise hits all alike
        for name, code in programs.items():
            wall, used = _run(code)
            times[name].append(wall)
            cpu[name].append(used)
    med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    low = {name: min(ts) * 1e3 for name, ts in times.items()}
    cpu_med = {name: statistics.median(ts) * 1e3 for name, ts in cpu.items()}
    rows = [
        "| program | median | best | median CPU (user + sys) |",
        "|---|---|---|---|",
        *(
            f"| `{programs[n]}` | {med[n]:.1f} ms | {low[n]:.1f} ms | {cpu_med[n]:.1f} ms |"
            for n in programs
        ),
    ]
    over_bare = med["ferrule"] - med["bare python"]
    cpu_over_bare = cpu_med["ferrule"] - cpu_med["bare python"]
    lines = [
        *rows,
        "",
        f"- ferrule over bare python: **{over_bare:.1f} ms** wall clock, "
        f"**{cpu_over_bare:.1f} ms** CPU (target: at most 120 ms)",
    ]
    figures = {"over_bare_ms": over_bare, "cpu_over_bare_ms": cpu_over_bare}
    if has_llm:
        ratio = med["ferrule"] / med["import llm"]
        cpu_ratio = cpu_med["ferrule"] / cpu_med["import llm"]
        floor = med["dependencies only"] / med["import llm"]
        lines.append(
            f"- ferrule / `import llm`: **{ratio:.2f}x** wall clock, **{cpu_ratio:.2f}x** CPU "
            "(target: under 0.2x)"
        )
        lines.append(
            f"- importing the cold path's dependencies alone (attrs, pluggy) is "
            f"{floor:.2f}x `import llm` on this machine"
        )
        figures["vs_llm"] = ratio
        figures["cpu_vs_llm"] = cpu_ratio
    installed = _installed()
    lines.append(
        f"- installed plugins ({len(installed)}, ferrule-otel among them): {', '.join(installed)}"
    )
    lines.append(
        f"- load average before / after the runs: {load_before} / {_load()} "
        f"(the machine is shared: absolute times vary, the interleaved ratios less)"
    )
    return "\n".join(lines), figures


def _installed() -> list[str]:
    from ferrule import Runtime

    with Runtime() as rt:
        # entry-point plugins (the kit's own in-process plugin has a module name)
        return sorted(p["name"] for p in rt.kernel.plugins() if "." not in p["name"])


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def dispatch() -> tuple[str, dict[str, float]]:
    from ferrule import AsyncRuntime, Runtime
    from ferrule_echo.plugin import EchoInput, echo
    from ferrule_spell.plugin import SpellInput, spell

    number = 20000
    direct = best_of(lambda: echo(EchoInput(text="hello")), number=number)

    rt = Runtime()
    sync_call = best_of(lambda: rt.call("echo", {"text": "hello"}), number=number)

    async def async_calls() -> float:
        art = AsyncRuntime()
        await art.call("echo", {"text": "warm"})
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(number):
                await art.call("echo", {"text": "hello"})
            best = min(best, (time.perf_counter() - start) / number)
        return best

    async_call = asyncio.run(async_calls())

    text = "x" * 20000
    direct_iter = best_of(lambda: sum(1 for _ in spell(SpellInput(text=text)))) / len(text)
    sync_iter = best_of(lambda: sum(1 for _ in rt.call_iter("spell", {"text": text}))) / len(text)

    async def async_iter() -> float:
        art = AsyncRuntime()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            async for _ in art.call_iter("spell", {"text": text}):
                pass
            best = min(best, (time.perf_counter() - start) / len(text))
        return best

    async_iter_item = asyncio.run(async_iter())
    rt.stop()

    def row(name: str, seconds: float, base: float, target: str) -> str:
        return f"| {name} | {seconds * 1e6:.2f} µs | {seconds / base:.1f}x | {target} |"

    lines = [
        "| request | per call / item | vs direct | target |",
        "|---|---|---|---|",
        row("direct `echo(EchoInput(...))`", direct, direct, "baseline"),
        row("`await AsyncRuntime.call('echo', ...)`", async_call, direct, "within 10x"),
        row("`Runtime.call('echo', ...)` (sync)", sync_call, direct, "within 40x"),
        row("direct `spell(...)`, per item", direct_iter, direct_iter, "baseline"),
        row("`AsyncRuntime.call_iter('spell', ...)`, per item", async_iter_item, direct_iter, "-"),
        row("`Runtime.call_iter('spell', ...)` (sync), per item", sync_iter, direct_iter, "-"),
    ]
    return "\n".join(lines), {
        "async_call": async_call / direct,
        "sync_call": sync_call / direct,
        "async_iter": async_iter_item / direct_iter,
        "sync_iter": sync_iter / direct_iter,
    }


def main() -> None:
    cold_text, cold = cold_start()
    dispatch_text, ratios = dispatch()
    body = f"""
### Cold start

`python -c "{FERRULE_COLD}"` with every plugin of the repository installed, against bare
`python -c pass` and `python -c "import llm"` in the same environment; {COLD_RUNS} runs of each,
interleaved, after one warm-up run (which also fills ferrule's discovery cache and its
provider index, so the first call imports only ferrule-echo's plugin module).

{cold_text}

### Dispatch

Each request validates its input (strict structuring into the operator's attrs class: the
kernel's own check for a flat class such as echo's, cattrs for the others) and routes to
the plugin; the baseline builds the same input object and calls the plugin's
function directly. Best of 5 rounds of 20,000 calls; streams of 20,000 items.

{dispatch_text}

Reproduce: `nox -s bench -- kernel`.
"""
    write_section("kernel", "Kernel: cold start and dispatch", body)
    print(body)
    print(cold, ratios)


if __name__ == "__main__":
    main()
