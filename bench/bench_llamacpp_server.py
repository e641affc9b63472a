"""ferrule against llama.cpp's own server, side by side, quiet and under competing load.

The same GGUF served by ``ferrule serve`` (a subprocess, the OpenAI-compatible route, the
component the route defines by default: 4 sequences, every core) and by ``llama-server``
built from the llama.cpp that llama-cpp-python vendors (``bench/_llama_server.py``; the
same 4 slots, threads and context, its own defaults otherwise), and a third way in: the
Agent (``Agent.arun(..., stream=True)``, one agent per client on one shared model, in a
process of its own). Clients in this process (aiohttp over loopback, the same code for
both servers); 1, 4 and 8 streams, each sending requests one after another (its own
prompt, greedy, a fixed ``max_tokens``); the servers get the same repeat penalty (the
model's default in ferrule), so both do the same work per token.

Loads: quiet; two busy processes at the servers' priority; two busy processes at a higher
priority than the servers (the servers and clients niced 5 above them). Rounds interleave
servers, stream counts and loads; each figure is the median over rounds:

- aggregate tokens/s: completion tokens of all streams (each reply's usage) / wall time;
- time to first token (request sent -> first non-empty content), p50 and p99 over the
  round's requests; inter-token latency: each reply's first-to-last content time over its
  tokens after the first, median over the round's replies;
- CPU per token: the serving process's CPU time (all its threads) over the round / tokens.

Then the threads and wait-policy matrix behind ferrule's defaults (`ferrule_llamacpp.openmp`):
``ferrule serve`` at 4 streams with every core and GNU OpenMP's own spin, with ferrule's
default middle spin, with a short spin, with ``OMP_WAIT_POLICY=passive``, and with one
thread fewer, in each load.

Models: the shipped SmolLM2-135M-Instruct Q4_1 and the random 0.5B llama of
``bench_batching.py``.

    python bench/bench_llamacpp_server.py       # nox -s bench -- llamacpp_server
    BENCH_SERVER_ROUNDS=3 BENCH_SERVER_LOADS=quiet,same,higher
    BENCH_SERVER_PARTS=shipped,large,threads (what to measure: each part writes a section
    of its own in bench/results, so one can be measured again alone)
    BENCH_SERVER_NICE=-10 (as root: every process of the bench that much above the rest
    of the machine, so other jobs disturb it less)
    FERRULE_LLAMA_SERVER=/path/to/llama-server (use that binary)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_section
from _llama_server import find_or_build
from bench_batching import LARGE_TITLE, MODEL_CACHE, p99, prompt, random_llama
from ferrule_llamacpp.backend import available_cores
from ferrule_llamacpp.openmp import SPIN_COUNT

ROUNDS = int(os.environ.get("BENCH_SERVER_ROUNDS", "3"))
STREAMS = (1, 4, 8)
SLOTS = 4  # ferrule's default parallel; llama-server --parallel
LOADS = tuple(os.environ.get("BENCH_SERVER_LOADS", "quiet,same,higher").split(","))
#: Seconds after which a measurement is cut short (a server that crawls under load).
DEADLINE = float(os.environ.get("BENCH_SERVER_DEADLINE", "240"))
BASE_NICE = int(os.environ.get("BENCH_SERVER_NICE", "0"))
#: (requests per stream, max_tokens): on the shipped model, and on the slower 0.5B one.
WORKLOADS = {"shipped": (3, 32), "large": (2, 24)}
LOAD_NAMES = {
    "quiet": "quiet",
    "same": "2 busy processes, same priority",
    "higher": "2 busy processes, higher priority",
}
OPENMP = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
CLOCK = os.sysconf("SC_CLK_TCK")
NAN = float("nan")


# -- processes ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK


def renice(pid: int, niceness: int) -> None:
    """Set the niceness of every thread of a process (Linux nice is per thread)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, int(task.name), niceness)


def plain_env(**extra: str) -> dict[str, str]:
    """This environment without OpenMP settings (each process gets only its own)."""
    return {**{k: v for k, v in os.environ.items() if k not in OPENMP}, **extra}


class Server:
    """A serving process and how to reach its OpenAI route."""

    def __init__(
        self,
        name: str,
        process: subprocess.Popen[Any],
        url: str,
        model: str,
        repeat_penalty: float | None = None,
    ) -> None:
        self.name, self.process, self.url, self.model = name, process, url, model
        #: Sent with each request (llama-server's default is none; ferrule's model has one).
        self.repeat_penalty = repeat_penalty

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def wait_ready(url: str, process: subprocess.Popen[Any], path: str) -> None:
    import urllib.request

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{url}: the server exited ({process.returncode})")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url + path, timeout=5) as answer:
                if answer.status == 200:
                    return
        time.sleep(0.5)
    raise SystemExit(f"{url}: not ready after 300 s")


def start_ferrule(model: str, **env: str) -> Server:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=plain_env(FERRULE_REMOTE_PATHS=str(MODEL_CACHE), **env),
        preexec_fn=lambda: os.nice(BASE_NICE) if BASE_NICE else None,
    )
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, process, "/v1/models")
    return Server("ferrule serve", process, url, model)


#: llama-server's second run: with the spin ferrule gives llama.cpp's threads.
SPIN_NAME = f"llama-server, GOMP_SPINCOUNT={SPIN_COUNT}"


def start_llama_server(
    binary: Path, path: str, threads: int, n_ctx: int, repeat_penalty: float, spin: bool = False
) -> Server:
    port = free_port()
    command = [
        *(str(binary), "-m", path, "--host", "127.0.0.1", "--port", str(port)),
        *("--parallel", str(SLOTS), "-c", str(n_ctx * SLOTS), "-t", str(threads)),
        *("-tb", str(threads), "--no-kv-unified", "--no-webui"),
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # As its users run it (GNU OpenMP's own wait), or with ferrule's spin.
        env=plain_env(**({"GOMP_SPINCOUNT": SPIN_COUNT} if spin else {})),
        preexec_fn=lambda: os.nice(BASE_NICE) if BASE_NICE else None,
    )
    url = f"http://127.0.0.1:{port}"
    wait_ready(url, process, "/health")
    return Server(SPIN_NAME if spin else "llama-server", process, url, path, repeat_penalty)


@contextlib.contextmanager
def load(kind: str, servers: list[Server], agent: subprocess.Popen[Any] | None) -> Iterator[None]:
    """Busy processes for the load ``kind``; the bench's processes niced as it says."""
    busy: list[subprocess.Popen[Any]] = []
    ours = [s.process.pid for s in servers] + ([agent.pid] if agent else []) + [os.getpid()]
    if kind != "quiet":
        for _ in range(2):
            busy.append(
                subprocess.Popen(
                    [sys.executable, "-c", "while True: pass"],
                    preexec_fn=lambda: os.nice(BASE_NICE) if BASE_NICE else None,
                )
            )
    if kind == "higher":
        for pid in ours:
            renice(pid, BASE_NICE + 5)
    try:
        time.sleep(0.5 if busy else 0)
        yield
    finally:
        for process in busy:
            process.kill()
            process.wait()
        for pid in ours:
            renice(pid, BASE_NICE)


# -- one measurement ---------------------------------------------------------------------


async def one_request(
    session: Any, server: Server, text: str, tokens: int, progress: list[int]
) -> dict[str, float]:
    """One streamed chat completion; ``progress[0]`` counts its content chunks as they come
    (what a measurement cut short by the deadline reports)."""
    body: dict[str, Any] = {
        "model": server.model,
        "messages": [{"role": "user", "content": text}],
        "temperature": 0.0,
        "max_tokens": tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if server.repeat_penalty is not None:  # the one ferrule's model defaults to
        body.update(repeat_penalty=server.repeat_penalty, repeat_last_n=64)
    sent = time.perf_counter()
    first = last = None
    usage = 0
    async with session.post(server.url + "/v1/chat/completions", json=body) as answer:
        answer.raise_for_status()
        async for raw in answer.content:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                usage = chunk["usage"]["completion_tokens"]
            for choice in chunk.get("choices") or []:
                if (choice.get("delta") or {}).get("content"):
                    last = time.perf_counter()
                    first = first or last
                    progress[0] += 1
    assert first is not None and last is not None, f"{server.name}: no content"
    itl = (last - first) / (usage - 1) if usage > 1 else float("nan")
    return {"ttft": first - sent, "itl": itl, "tokens": usage}


async def measure_server(
    server: Server, streams: int, workload: tuple[int, int], round_id: int
) -> dict[str, float]:
    """One measurement; past DEADLINE seconds it is cut short and reports what streamed
    (marked ``cut``: its tokens/s an upper bound, its latencies those of finished replies)."""
    import aiohttp

    requests, tokens = workload
    progress = [0]
    replies: list[dict[str, float]] = []

    async def stream(index: int) -> None:
        for r in range(requests):
            reply = await one_request(session, server, prompt(index, r, round_id), tokens, progress)
            replies.append(reply)

    timeout = aiohttp.ClientTimeout(total=3600)
    # A new connection per request, for both servers alike (no keep-alive races).
    connector = aiohttp.TCPConnector(force_close=True)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        cpu, started = cpu_seconds(server.process.pid), time.perf_counter()
        tasks = [asyncio.ensure_future(stream(s)) for s in range(streams)]
        done, pending = await asyncio.wait(tasks, timeout=DEADLINE)
        for task in pending:
            task.cancel()
        for task in done:
            task.result()  # a failed request fails the bench, loudly
        wall = time.perf_counter() - started
        cpu = cpu_seconds(server.process.pid) - cpu
    if not pending:
        return summary(replies, wall, cpu)
    await asyncio.sleep(0)
    cut = summary(replies, wall, cpu) if replies else {"p50": wall, "p99": wall, "itl": NAN}
    cut.update(tps=progress[0] / wall, cpu=cpu / max(progress[0], 1), cut=1.0)
    return cut


def summary(replies: list[dict[str, float]], wall: float, cpu: float) -> dict[str, float]:
    ttfts = [r["ttft"] for r in replies]
    itls = [r["itl"] for r in replies if r["itl"] == r["itl"]]
    tokens = sum(r["tokens"] for r in replies)
    return {
        "tps": tokens / wall,
        "p50": statistics.median(ttfts),
        "p99": p99(ttfts),
        "itl": statistics.median(itls) if itls else float("nan"),
        "cpu": cpu / max(tokens, 1),
        "cut": 0.0,
    }


# -- the Agent, in a process of its own --------------------------------------------------


def agent_child(model: str) -> None:
    """Serve measurements on stdin: ``streams requests tokens round`` -> one JSON line."""
    from ferrule import Agent, AsyncRuntime, LangModel, LocalModel

    async def client(lm: Any, index: int, requests: int, tokens: int, round_id: int) -> list:
        agent = Agent(lm, options={"max_tokens": tokens, "temperature": 0.0})
        out = []
        for r in range(requests):
            sent, times = time.perf_counter(), []
            async for event in agent.arun(prompt(index, r, round_id), stream=True):
                if getattr(event, "content", None):
                    times.append(time.perf_counter())
            agent.clear_messages()
            itl = (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else float("nan")
            out.append({"ttft": times[0] - sent, "itl": itl, "tokens": 0})
        return out

    async def main() -> None:
        async with AsyncRuntime() as rt:
            lm = await LangModel.new(LocalModel(model), runtime=rt)
            component = rt.kernel.component(lm.name)
            print("ready", flush=True)
            loop = asyncio.get_running_loop()
            while line := await loop.run_in_executor(None, sys.stdin.readline):
                streams, requests, tokens, round_id = map(int, line.split())
                before, cpu = component.generated_tokens, time.process_time()
                started = time.perf_counter()
                results = await asyncio.gather(
                    *(client(lm, s, requests, tokens, round_id) for s in range(streams))
                )
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
                replies = [r for rs in results for r in rs]
                # Tokens from the model's own count (the Agent's events are text deltas).
                replies[0]["tokens"] = component.generated_tokens - before
                print(json.dumps(summary(replies, wall, cpu)), flush=True)

    asyncio.run(main())


def start_agent(model: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "agent", model],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=plain_env(HF_HUB_OFFLINE="1"),
        preexec_fn=lambda: os.nice(BASE_NICE) if BASE_NICE else None,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise SystemExit("the agent process did not start")
    return process


def measure_agent(
    process: subprocess.Popen[str], streams: int, workload: tuple[int, int], round_id: int
) -> dict[str, float]:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{streams} {workload[0]} {workload[1]} {round_id}\n")
    process.stdin.flush()
    return dict(json.loads(process.stdout.readline()))


# -- the runs ----------------------------------------------------------------------------

Table = dict[tuple[str, str, int], dict[str, float]]


def medians(runs: dict[tuple[str, str, int], list[dict[str, float]]]) -> Table:
    out: Table = {}
    for key, rs in runs.items():
        out[key] = {name: statistics.median(r[name] for r in rs) for name in rs[0]}
        out[key]["cut"] = max(r["cut"] for r in rs)  # any round cut short marks the figure
    return out


def side_by_side(
    model_id: str, path: str, workload: tuple[int, int], penalty: float, binary: Path | None
) -> Table:
    """Every way in, every load and stream count, ROUNDS interleaved rounds."""
    threads = available_cores()
    servers = [start_ferrule(model_id)]
    if binary is not None:
        for spin in (False, True):
            servers.append(start_llama_server(binary, path, threads, 8192, penalty, spin))
    agent = start_agent(model_id)
    runs: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    round_ids = iter(range(10**6))
    try:
        for server in servers:  # warm-up: page the weights in
            asyncio.run(measure_server(server, 2, (1, 8), next(round_ids)))
        measure_agent(agent, 2, (1, 8), next(round_ids))
        ways: list[Server | str] = [*servers, "Agent.arun"]
        for round_index in range(ROUNDS):
            for kind in LOADS:
                with load(kind, servers, agent):
                    for streams in STREAMS:
                        shift = round_index % len(ways)  # each way goes first in turn
                        for way in ways[shift:] + ways[:shift]:
                            round_id = next(round_ids)
                            if isinstance(way, Server):
                                name = way.name
                                result = asyncio.run(
                                    measure_server(way, streams, workload, round_id)
                                )
                            else:
                                name, result = (
                                    way,
                                    measure_agent(agent, streams, workload, round_id),
                                )
                            runs.setdefault((name, kind, streams), []).append(result)
                            print(
                                f"round {round_index + 1} {kind} x{streams} {name}: "
                                f"{result['tps']:.1f} tok/s, TTFT p50 {result['p50'] * 1e3:.0f} "
                                f"p99 {result['p99'] * 1e3:.0f} ms, ITL {result['itl'] * 1e3:.1f} "
                                f"ms, CPU {result['cpu'] * 1e3:.1f} ms/token "
                                f"(load {os.getloadavg()[0]:.1f})",
                                flush=True,
                            )
    finally:
        for server in servers:
            server.stop()
        agent.kill()
        agent.wait()
    return medians(runs)


#: The matrix: (name, environment, n_threads) of ferrule serve's llama.cpp component.
def variants() -> list[tuple[str, dict[str, str], int]]:
    cores = available_cores()
    out = [
        (f"{cores} threads, default (GOMP_SPINCOUNT={SPIN_COUNT})", {}, cores),
        (f"{cores} threads, GOMP_SPINCOUNT=1000", {"GOMP_SPINCOUNT": "1000"}, cores),
        (f"{cores} threads, GNU OpenMP's own spin", {"GOMP_SPINCOUNT": "300000"}, cores),
        (f"{cores} threads, OMP_WAIT_POLICY=passive", {"OMP_WAIT_POLICY": "passive"}, cores),
    ]
    if cores > 1:
        out.append((f"{cores - 1} thread(s), default", {}, cores - 1))
    return out


async def measure_native(url: str, component: str, workload: tuple[int, int], round_id: int):
    """4 streams through ferrule serve's own API (``infer``), as bench_batching does."""
    from ferrule import AsyncRuntime

    requests, tokens = workload
    async with AsyncRuntime(url=url) as rt:

        async def stream(index: int) -> list[dict[str, float]]:
            out = []
            for r in range(requests):
                inputs = {
                    "messages": [{"role": "user", "content": prompt(index, r, round_id)}],
                    "temperature": 0.0,
                    "max_tokens": tokens,
                }
                sent, times, used = time.perf_counter(), [], 0
                async for item in rt.call_iter_method(component, "infer", inputs):
                    if item["message"]["content"][0]["text"]:
                        times.append(time.perf_counter())
                    if item.get("usage"):
                        used = item["usage"]["output_tokens"]
                itl = (times[-1] - times[0]) / (used - 1) if used > 1 else float("nan")
                out.append({"ttft": times[0] - sent, "itl": itl, "tokens": used})
            return out

        started = time.perf_counter()
        results = await asyncio.gather(*(stream(s) for s in range(SLOTS)))
        return [r for rs in results for r in rs], time.perf_counter() - started


def matrix(model_id: str, workload: tuple[int, int]) -> Table:
    from ferrule import AsyncRuntime

    servers = []
    for name, env, threads in variants():
        server = start_ferrule(model_id, **env)
        server.name = name

        async def define(url: str = server.url, threads: int = threads) -> None:
            async with AsyncRuntime(url=url) as rt:
                # the model's id, as a network client names it (a path is refused outside
                # the server's FERRULE_REMOTE_PATHS)
                attributes = {"model": model_id, "n_threads": threads}
                await rt.define("llamacpp_language_model", "lm", attributes)

        asyncio.run(define())
        asyncio.run(measure_native(server.url, "lm", (1, 8), 0))  # warm-up
        servers.append(server)
    runs: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    try:
        for round_index in range(ROUNDS):
            for kind in LOADS:
                with load(kind, servers, None):
                    shift = round_index % len(servers)
                    for server in servers[shift:] + servers[:shift]:
                        cpu = cpu_seconds(server.process.pid)
                        replies, wall = asyncio.run(
                            measure_native(server.url, "lm", workload, 1000 + round_index)
                        )
                        result = summary(replies, wall, cpu_seconds(server.process.pid) - cpu)
                        runs.setdefault((server.name, kind, SLOTS), []).append(result)
                        print(
                            f"matrix round {round_index + 1} {kind} {server.name}: "
                            f"{result['tps']:.1f} tok/s, TTFT p99 {result['p99'] * 1e3:.0f} ms, "
                            f"CPU {result['cpu'] * 1e3:.1f} ms/token "
                            f"(load {os.getloadavg()[0]:.1f})",
                            flush=True,
                        )
    finally:
        for server in servers:
            server.stop()
    return medians(runs)


# -- the report --------------------------------------------------------------------------


def ratio(value: float, base: dict[str, float] | None, key: str, way: str) -> str:
    if base is None or way.startswith("llama-server"):
        return "—"
    return f"**{value / base[key]:.2f}x**"


def table(results: Table, ways: list[str]) -> str:
    rows = [
        "| load | streams | | tokens/s | vs llama-server | vs llama-server, same spin "
        "| TTFT p50 | TTFT p99 | p99 vs llama-server | p99 vs same spin | inter-token "
        "| CPU per token |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for kind in LOADS:
        for streams in STREAMS:
            base = results.get(("llama-server", kind, streams))
            spin = results.get((SPIN_NAME, kind, streams))
            for way in ways:
                r = results.get((way, kind, streams))
                if r is None:
                    continue
                bound = "≥ " if r["cut"] else ""  # cut short: latencies of finished replies
                rows.append(
                    f"| {LOAD_NAMES[kind]} | {streams} | {way} | {'≤ ' if r['cut'] else ''}"
                    f"{r['tps']:.1f} | {ratio(r['tps'], base, 'tps', way)} | "
                    f"{ratio(r['tps'], spin, 'tps', way)} | {bound}{r['p50'] * 1e3:.0f} ms | "
                    f"{bound}{r['p99'] * 1e3:.0f} ms | {ratio(r['p99'], base, 'p99', way)} | "
                    f"{ratio(r['p99'], spin, 'p99', way)} | {r['itl'] * 1e3:.1f} ms | "
                    f"{r['cpu'] * 1e3:.1f} ms |"
                )
    return "\n".join(rows)


def matrix_table(results: Table) -> str:
    names = [name for name, _, _ in variants()]
    rows = [
        "| load | ferrule serve's llama.cpp | tokens/s | vs default | TTFT p99 | CPU per token |",
        "|---|---|---|---|---|---|",
    ]
    for kind in LOADS:
        base = results.get((names[0], kind, SLOTS))
        for name in names:
            r = results.get((name, kind, SLOTS))
            if r is None or base is None:
                continue
            rows.append(
                f"| {LOAD_NAMES[kind]} | {name} | {r['tps']:.1f} | {r['tps'] / base['tps']:.2f}x | "
                f"{r['p99'] * 1e3:.0f} ms | {r['cpu'] * 1e3:.1f} ms |"
            )
    return "\n".join(rows)


#: What a run measures (BENCH_SERVER_PARTS), each written to a section of its own, so that
#: one part can be measured again without the others: (section, title).
PARTS = {
    "shipped": ("llamacpp_server", "ferrule serve and llama-server side by side"),
    "large": ("llamacpp_server_large", "ferrule serve and llama-server side by side: a 0.5B model"),
    "threads": ("llamacpp_server_threads", "llama.cpp's threads and waiting under load"),
}


def main() -> None:
    import ferrule_smollm2
    from ferrule_llamacpp.formats import CHAT_SAMPLING
    from ferrule_llamacpp.weights import SMOLLM2_GENERATION

    parts = os.environ.get("BENCH_SERVER_PARTS", ",".join(PARTS)).split(",")
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit(f"BENCH_SERVER_PARTS: unknown {unknown}; known: {', '.join(PARTS)}")
    shipped = str(ferrule_smollm2.gguf_path())
    binary = None
    if {"shipped", "large"} & set(parts):
        binary = find_or_build()
        if binary is None:
            print("llama-server is not available: measuring ferrule alone", file=sys.stderr)
    for part in parts:
        load_before = os.getloadavg()
        title = ""
        if part == "shipped":
            penalty = float(SMOLLM2_GENERATION["repeat_penalty"])
            model = "SmolLM2-135M-Instruct"
            results = side_by_side(model, shipped, WORKLOADS["shipped"], penalty, binary)
            title = "SmolLM2-135M-Instruct Q4_1 (shipped)"
        elif part == "large":
            large = random_llama(shipped)
            penalty = float(CHAT_SAMPLING["repeat_penalty"])
            results = side_by_side(large, large, WORKLOADS["large"], penalty, binary)
            title = LARGE_TITLE
        else:
            results = matrix("SmolLM2-135M-Instruct", WORKLOADS["shipped"])
        body = report(part, title, results, binary, (load_before, os.getloadavg()))
        path = write_section(*PARTS[part], body)
        print(body)
        print(f"wrote {path}")


def report(
    part: str,
    title: str,
    results: Table,
    binary: Path | None,
    loads: tuple[tuple[float, float, float], tuple[float, float, float]],
) -> str:
    import importlib.metadata

    before, after = (" / ".join(f"{x:.1f}" for x in times) for times in loads)
    load_line = (
        f"Bench processes' base niceness {BASE_NICE}. Load average (1, 5, 15 min) before "
        f"{before}, after {after}."
    )
    command = (
        "`python bench/bench_llamacpp_server.py` (or `nox -s bench -- llamacpp_server`; "
        f"BENCH_SERVER_PARTS={part} measures this section alone; BENCH_SERVER_ROUNDS, "
        "BENCH_SERVER_LOADS, BENCH_SERVER_NICE, FERRULE_LLAMA_SERVER)."
    )
    if part == "threads":
        return (
            f"`ferrule serve`'s own API, {SLOTS} streams, the shipped model: what "
            "`ferrule_llamacpp.openmp` chooses from, in the loads of the side-by-side "
            f"section. Medians of {ROUNDS} interleaved rounds. {load_line}\n\n"
            f"{matrix_table(results)}\n\n{command}"
        )
    ways = ["ferrule serve", "llama-server", SPIN_NAME, "Agent.arun"]
    if part == "large":
        return (
            "As in the side-by-side section above (the same servers, settings and "
            f"clients), on {title}: {WORKLOADS['large'][0]} requests of `max_tokens` "
            f"{WORKLOADS['large'][1]} per stream. Medians of {ROUNDS} interleaved rounds. "
            f"{load_line}\n\n**{title}**\n\n{table(results, ways)}\n\n{command}"
        )
    version = importlib.metadata.version("llama-cpp-python")
    server = (
        f"`llama-server` built from the llama.cpp that llama-cpp-python {version} vendors "
        # the home folder as ``~``: the report goes into the repository
        f"(`{str(binary).replace(str(Path.home()), '~', 1)}`)"
        if binary
        else "no `llama-server` (it could not be built here: ferrule alone)"
    )
    intro = f"""`ferrule serve` (its OpenAI route, the component it defines by default: 4
sequences, {available_cores()} threads) against {server}: `--parallel {SLOTS}`, the same threads and
context, the model's repeat penalty sent with each request, each keeping prompts between
requests by its defaults (llama-server's `--cache-ram` 8192 MiB, ferrule's `cache_ram`
1024); once as its users run it
(GNU OpenMP's own wait at llama.cpp's barriers) and once with `GOMP_SPINCOUNT={SPIN_COUNT}`, the
spin ferrule gives llama.cpp (`ferrule_llamacpp.openmp`), so that the engines are
also compared waiting alike. A measurement still running after {DEADLINE:.0f} s is cut
short: its tokens/s is then an upper bound (streamed chunks over the time, "≤") and its
latencies those of the replies that finished (a lower bound, "≥"). `Agent.arun`: one agent per
client, streamed, on one model shared by all (`LangModel`), in a process of its own.
Clients over loopback; each stream sends requests one after another (greedy,
{WORKLOADS["shipped"][0]} of `max_tokens` {WORKLOADS["shipped"][1]} on the shipped model).
Medians of {ROUNDS} interleaved rounds. Busy processes: two `while True: pass` interpreters,
at the servers' priority, or at a higher one (the servers and clients at niceness +5 from
theirs). {load_line}"""
    return f"{intro}\n\n**{title}**\n\n{table(results, ways)}\n\n{command}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["agent"]:
        agent_child(sys.argv[2])
    else:
        main()
