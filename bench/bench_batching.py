"""Continuous batching in ferrule-llamacpp, through a real ``ferrule serve``.

One server process (``python -m ferrule.cli serve``); the clients, in this process, define
three components of the same GGUF over the network (``AsyncRuntime(url=...)``): **one at
a time** (``parallel: 1``, requests wait in line: the backend before batching),
**deterministic** (``parallel: 8, deterministic: true``: each prompt read whole, in steps
of its own) and **packed** (``parallel: 8``, the default: prompts and generating sequences
in one step). For 1, 2, 4 and 8 concurrent streams, each stream sends its requests one
after another (``infer``, greedy, its own prompt, a fixed ``max_tokens``), to each
component in turn.

- aggregate tokens/s: output tokens of all streams (from each reply's usage) / wall time;
- time to first token: request sent -> first non-empty text delta, p50 and p99 over all
  requests of the round;
- ratios: aggregate tokens/s against one stream on the same component, and TTFT against
  one request alone (1 stream) on it, in the same run.

Then, in this process, the decoder's own step timings (``BatchDecoder.stats``): how long
one ``llama_decode`` of 1, 2, 4 and 8 generating sequences takes, and how fast prompts are
read, which is what caps the curve on 2 cores.

Models: the shipped SmolLM2-135M-Instruct Q4_1, and a larger GGUF built here once (cached
under ``bench/data/models/``, git-ignored): a llama of about 0.5B parameters with random
weights and SmolLM2's tokenizer and chat template, quantized to Q4_0 by llama.cpp's
quantizer (``gguf`` writes it). Its text is noise; its cost per token is a real model's.

    python bench/bench_batching.py   # BENCH_BATCHING_REQUESTS=3 BENCH_BATCHING_TOKENS=32
                                     # (the shipped model's workload)
                                     # BENCH_BATCHING_LARGE=0: the shipped model only
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_section
from ferrule_llamacpp.backend import available_cores

#: Requests each stream sends one after another, and their max_tokens: on the shipped model,
#: and on the larger one (about 4x slower per token: fewer, to keep the run to minutes).
REQUESTS = int(os.environ.get("BENCH_BATCHING_REQUESTS", "3"))
TOKENS = int(os.environ.get("BENCH_BATCHING_TOKENS", "32"))
LARGE_REQUESTS, LARGE_TOKENS = 2, 24
#: Tokens of a bench prompt (SmolLM2's template) that requests share, and those after them.
PROMPT_SHARED, PROMPT_END = 29, 20
#: llama.cpp threads of the served components (0: every core, the component's default).
THREADS = int(os.environ.get("BENCH_BATCHING_THREADS", "0"))
STREAMS = (1, 2, 4, 8)
#: The components compared, by name: their attributes besides the model and context.
CONFIGS: dict[str, dict[str, object]] = {
    "one at a time": {"parallel": 1},
    "deterministic": {"parallel": 8, "deterministic": True},
    "packed": {"parallel": 8},
}
TOPICS = [
    "the sea", "a dragon", "bread", "the moon", "a city at night", "winter", "a robot",
    "the forest", "a library", "rain", "mountains", "a small boat", "coffee", "a garden",
    "trains", "the desert",
]  # fmt: skip


#: Numbers each round, so that no prompt repeats one of an earlier round: requests share
#: the chat template's system prompt and first words, never a whole prompt cached before.
ROUNDS = itertools.count()


def prompt(stream: int, request: int, round_id: int) -> str:
    topic = TOPICS[(stream * 3 + request) % len(TOPICS)]
    return f"Write a few sentences about {topic}. (request {round_id}.{stream}.{request})"


def start_server(model_folder: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        # a client may name a GGUF path on the server only under these folders
        env={**os.environ, "FERRULE_REMOTE_PATHS": model_folder},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return process, line.split("listening on ")[1].split()[0]


async def one_stream(
    rt, component: str, stream: int, workload: tuple[int, int], round_id: int
) -> tuple[list[float], int]:
    """TTFTs and output tokens of one stream's requests, sent one after another."""
    ttfts, tokens = [], 0
    requests, max_tokens = workload
    for request in range(requests):
        inputs = {
            "messages": [{"role": "user", "content": prompt(stream, request, round_id)}],
            "temperature": 0.0,
            "max_tokens": max_tokens,
        }
        sent = time.perf_counter()
        first = None
        async for item in rt.call_iter_method(component, "infer", inputs):
            if first is None and item["message"]["content"][0]["text"]:
                first = time.perf_counter() - sent
            if item.get("usage"):
                tokens += item["usage"]["output_tokens"]
        assert first is not None
        ttfts.append(first)
    return ttfts, tokens


def p99(values: list[float]) -> float:
    """Nearest rank (the largest of fewer than 100)."""
    ordered = sorted(values)
    return ordered[math.ceil(0.99 * len(ordered)) - 1]


async def measure(rt, component: str, streams: int, workload: tuple[int, int]) -> dict[str, float]:
    round_id = next(ROUNDS)
    started = time.perf_counter()
    results = await asyncio.gather(
        *(one_stream(rt, component, s, workload, round_id) for s in range(streams))
    )
    wall = time.perf_counter() - started
    ttfts = [t for ts, _ in results for t in ts]
    tokens = sum(n for _, n in results)
    return {
        "tps": tokens / wall,
        "p50": statistics.median(ttfts),
        "p99": p99(ttfts),
        "tokens": tokens,
    }


#: The larger model's shape: a llama of about half a billion parameters (hidden 1280, 24
#: layers, 20 query and 4 key/value heads of 64, feed-forward 3456, SmolLM2's 49,152-token
#: vocabulary, tied embeddings), between SmolLM2-360M and Qwen2.5-0.5B.
LARGE_SHAPE = {"n_embd": 1280, "n_layer": 24, "n_head": 20, "n_head_kv": 4, "n_ff": 3456}
#: Where the built model is kept between runs (git-ignored: never commit weights).
MODEL_CACHE = Path(__file__).parent / "data" / "models"


LARGE_TITLE = "random llama 0.5B Q4_0 (built here)"


def random_llama(tokenizer_gguf: str) -> str:
    """A llama-architecture GGUF of LARGE_SHAPE with random weights (normal, std 0.02;
    norms 1) and the tokenizer and chat template of ``tokenizer_gguf``, quantized to Q4_0
    by llama.cpp's quantizer; built once, then reused from MODEL_CACHE. Its text is noise,
    its cost per token is that of a real model of this shape."""
    import gguf
    import llama_cpp
    import numpy as np
    from llama_cpp._logger import set_verbose

    shape = LARGE_SHAPE
    name = "random-llama-{n_embd}x{n_layer}".format(**shape)
    target = MODEL_CACHE / f"{name}.Q4_0.gguf"
    if target.exists():
        return str(target)
    MODEL_CACHE.mkdir(parents=True, exist_ok=True)
    source = gguf.GGUFReader(tokenizer_gguf)
    n_vocab = len(source.fields["tokenizer.ggml.tokens"].data)
    d, n_ff, n_head, n_head_kv = shape["n_embd"], shape["n_ff"], shape["n_head"], shape["n_head_kv"]
    head = d // n_head
    f16 = MODEL_CACHE / f"{name}.F16.gguf"
    writer = gguf.GGUFWriter(f16, "llama")
    writer.add_name(f"{name} (random weights, ferrule bench)")
    writer.add_block_count(shape["n_layer"])
    writer.add_context_length(8192)
    writer.add_embedding_length(d)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_rope_dimension_count(head)
    writer.add_rope_freq_base(100000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(n_vocab)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    for key, field in source.fields.items():
        if key.startswith("tokenizer."):
            sub_type = field.types[1] if len(field.types) > 1 else None
            writer.add_key_value(key, field.contents(), field.types[0], sub_type)
    rng = np.random.default_rng(0)

    def weight(
        rows: int, cols: int
    ) -> np.ndarray:  # llama.cpp's [cols, rows] is numpy's (rows, cols)
        return (rng.standard_normal((rows, cols), dtype=np.float32) * 0.02).astype(np.float16)

    writer.add_tensor("token_embd.weight", weight(n_vocab, d))
    writer.add_tensor("output_norm.weight", np.ones(d, dtype=np.float32))
    for layer in range(shape["n_layer"]):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(d, dtype=np.float32))
        writer.add_tensor(f"{block}.attn_q.weight", weight(d, d))
        writer.add_tensor(f"{block}.attn_k.weight", weight(n_head_kv * head, d))
        writer.add_tensor(f"{block}.attn_v.weight", weight(n_head_kv * head, d))
        writer.add_tensor(f"{block}.attn_output.weight", weight(d, d))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(d, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(n_ff, d))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(n_ff, d))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(d, n_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    set_verbose(False)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0
    partial = target.with_suffix(".partial")
    status = llama_cpp.llama_model_quantize(str(f16).encode(), str(partial).encode(), params)
    f16.unlink()
    if status != 0:
        raise SystemExit("llama_model_quantize failed")
    partial.rename(target)
    return str(target)


async def bench_model(
    url: str, path: str, workload: tuple[int, int]
) -> dict[str, dict[int, dict[str, float]]]:
    from ferrule import AsyncRuntime

    async with AsyncRuntime(url=url) as rt:
        for name, options in CONFIGS.items():
            attributes = {"model": path, "n_ctx": 1024, **options}
            if THREADS:
                attributes["n_threads"] = THREADS
            await rt.define("llamacpp_language_model", name.replace(" ", "_"), attributes)
        table: dict[str, dict[int, dict[str, float]]] = {name: {} for name in CONFIGS}
        await measure(rt, "packed", 2, (1, 8))  # warm-up: page the weights in
        for streams in STREAMS:
            for name in CONFIGS:  # interleaved, so load changes hit all alike
                result = await measure(rt, name.replace(" ", "_"), streams, workload)
                table[name][streams] = result
                print(
                    f"{Path(path).stem} {name} x{streams}: {result['tps']:.1f} tok/s, "
                    f"TTFT p50 {result['p50'] * 1e3:.0f} ms p99 {result['p99'] * 1e3:.0f} ms "
                    f"(load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
        for name in CONFIGS:
            await rt.delete(name.replace(" ", "_"))
    return table


async def step_costs(path: str, threads: int) -> tuple[dict[int, tuple[float, float]], float]:
    """Milliseconds per ``llama_decode`` of n generating sequences, wall and CPU (the
    decoder's own timings, n requests sent at once in this process), and prompt tokens
    read per CPU second."""
    from ferrule import AsyncRuntime

    async with AsyncRuntime() as rt:
        # Deterministic: prompt reads in steps of their own, so each kind is timed apart.
        attributes = {
            "model": path,
            "parallel": 8,
            "n_ctx": 1024,
            "n_threads": threads,
            "deterministic": True,
        }
        await rt.define("llamacpp_language_model", "steps", attributes)
        stats = rt.kernel.component("steps").decoder.stats

        async def run(index: int) -> None:
            inputs = {
                "messages": [{"role": "user", "content": prompt(index, 0, next(ROUNDS))}],
                "temperature": 0.0,
                "max_tokens": 8,
            }
            async for _ in rt.call_iter_method("steps", "infer", inputs):
                pass

        await run(0)  # warm-up
        step_ms = {}
        for n in STREAMS:
            steps, wall, cpu = stats.decode.get(n, [0, 0.0, 0.0])
            await asyncio.gather(*(run(i) for i in range(n)))
            steps_after, wall_after, cpu_after = stats.decode.get(n, [0, 0.0, 0.0])
            if steps_after > steps:
                count = steps_after - steps
                step_ms[n] = ((wall_after - wall) / count * 1e3, (cpu_after - cpu) / count * 1e3)
        _, tokens, _, cpu = stats.prompt
        await rt.delete("steps")
    return step_ms, tokens / cpu


def section(title: str, table: dict[str, dict[int, dict[str, float]]]) -> str:
    rows = [
        f"**{title}**",
        "",
        "| streams | | tokens/s (all streams) | vs 1 stream | TTFT p50 | TTFT p99 | p99 vs 1 request |",
        "|---|---|---|---|---|---|---|",
    ]
    for streams in STREAMS:
        for name, results in table.items():
            r, one = results[streams], results[1]
            rows.append(
                f"| {streams} | {name} | {r['tps']:.1f} | {r['tps'] / one['tps']:.2f}x | "
                f"{r['p50'] * 1e3:.0f} ms | {r['p99'] * 1e3:.0f} ms | {r['p99'] / one['p50']:.2f}x |"
            )
    return "\n".join(rows)


def reading(
    tables: dict[str, dict[str, dict[int, dict[str, float]]]],
    costs: dict[tuple[str, int], tuple[dict[int, tuple[float, float]], float]],
) -> str:
    """What caps the curve, from the step costs at 1 thread (the CPU time of a step is the
    same whatever the neighbours run)."""
    served = "; ".join(
        f"{title}: {t['packed'][4]['tps'] / t['packed'][1]['tps']:.2f}x at 4 streams"
        for title, t in tables.items()
    )
    gains, reads = [], []
    for title in tables:
        step_ms, prompt_rate = costs[title, 1]
        cpu = {n: c for n, (_, c) in step_ms.items()}
        gain = ", ".join(f"{n * cpu[1] / cpu[n]:.2f}x at {n}" for n in STREAMS[1:] if n in cpu)
        gains.append(f"{title}: {gain}")
        reads.append(f"{1e3 * (PROMPT_SHARED + PROMPT_END) / prompt_rate:.0f} ms ({title})")
    return f"""
What caps it. Decoding n sequences in one step gives, in tokens per CPU second over one
sequence (1 thread), {"; ".join(gains)}: that is what sharing a step saves. The 135M Q4_1
model saves little: its CPU kernels are bound by arithmetic (a dot product per row and
token, so a step of 4 sequences costs nearly 4 of one); the 0.5B model reads its weights
(290 MB) once per step however many sequences the step holds, so a step of 4 costs about
half of 4 single steps. The served ratios ({served}) also count that one stream leaves the
decoder idle between its requests and while its prompt is read, which other streams fill;
on a busy machine they lose what the server's event loop (a write per token and stream),
the client and the neighbours take from the 2 cores.

Time to first token. Requests that come together are admitted in the same step. Packed
(the default), each gets the start its prompt shares with the others (the chat template's
system prompt and the first words, {PROMPT_SHARED} tokens here) copied from a slot that
holds it, and the prompts' own ends (about {PROMPT_END} tokens each) are read in one
`llama_decode` with the generating sequences' tokens: every first token comes out of the
same step. Deterministic, each prompt is read whole in a `llama_decode` of its own, one
after another, before the step's decode: the last of 4 waits for 4 reads of the whole
prompt, one {PROMPT_SHARED + PROMPT_END}-token read being about {", ".join(reads)} of CPU
(the cost of replies that depend on nothing but the request; see the README).
"""


def report(
    tables: dict[str, dict[str, dict[int, dict[str, float]]]],
    costs: dict[tuple[str, int], tuple[dict[int, tuple[float, float]], float]],
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
) -> str:
    summary = "; ".join(
        f"{title}: **{t['packed'][4]['tps'] / t['packed'][1]['tps']:.2f}x** one stream's "
        f"tokens/s at 4 streams, p99 TTFT **{t['packed'][4]['p99'] / t['packed'][1]['p50']:.2f}x** "
        "one request's"
        for title, t in tables.items()
    )
    versus = "; ".join(
        f"{title}: tokens/s **{t['packed'][4]['tps'] / t['one at a time'][4]['tps']:.2f}x** / "
        f"**{t['packed'][8]['tps'] / t['one at a time'][8]['tps']:.2f}x**, TTFT p99 "
        f"**{t['one at a time'][4]['p99'] / t['packed'][4]['p99']:.1f}x** / "
        f"**{t['one at a time'][8]['p99'] / t['packed'][8]['p99']:.1f}x** shorter"
        for title, t in tables.items()
    )
    modes = "; ".join(
        f"{title}: tokens/s **{t['packed'][4]['tps'] / t['deterministic'][4]['tps']:.2f}x** / "
        f"**{t['packed'][8]['tps'] / t['deterministic'][8]['tps']:.2f}x**, TTFT p99 "
        f"**{t['deterministic'][4]['p99'] / t['packed'][4]['p99']:.1f}x** / "
        f"**{t['deterministic'][8]['p99'] / t['packed'][8]['p99']:.1f}x** shorter"
        for title, t in tables.items()
    )
    steps = [
        "| model | threads | "
        + " | ".join(f"{n} seq" for n in STREAMS)
        + " | prompt tokens per CPU s |",
        "|---|---|" + "---|" * (len(STREAMS) + 1),
    ]
    for (title, threads), (step_ms, prompt_rate) in costs.items():
        one = step_ms.get(1)
        cells = []
        for n in STREAMS:
            if n not in step_ms:
                cells.append("n/a")
                continue
            wall, cpu = step_ms[n]
            if threads > 1:  # the calling thread's CPU time is only part of the work
                cells.append(f"{wall:.1f} ms")
                continue
            # The gain over one sequence, in work: (n / cpu) / (1 / cpu at 1).
            gain = f", {n * one[1] / cpu:.2f}x" if one else ""
            cells.append(f"{wall:.1f} / {cpu:.1f} ms{gain}")
        rate = f"{prompt_rate:.0f}" if threads == 1 else "n/a"
        steps.append(f"| {title} | {threads} | " + " | ".join(cells) + f" | {rate} |")
    return (
        f"""
One `ferrule serve` process; clients in another process over loopback
(`AsyncRuntime(url=...)`, `infer` streamed). Each stream sends requests one after another
(its own prompt, greedy, {REQUESTS} of `max_tokens` {TOKENS} on the shipped model,
{LARGE_REQUESTS} of {LARGE_TOKENS} on the larger one; the tokens counted are those each
reply's usage reports: the random model may end a reply early, its end token being as
likely as any other); "one at a time" is the component with `parallel: 1` (requests wait
in line, as before batching), "deterministic" the same GGUF with `parallel: 8` and
`deterministic: true`, "packed" with `parallel: 8` (the default mode); rounds
interleaved. Threads: {THREADS or f"every core ({available_cores()})"}. Load average (1, 5, 15 min) before
{" / ".join(f"{x:.1f}" for x in load_before)}, after {" / ".join(f"{x:.1f}" for x in load_after)}
(other jobs shared the machine: absolute numbers move with it, the interleaved ratios less).

Target at 4 streams: >= 2x the aggregate tokens/s of one stream, p99 time to first token
<= 2x a single request's (p50 at 1 stream). {summary}. Packed against one at a time at 4 /
8 streams: {versus}. Packed against deterministic at 4 / 8 streams: {modes}.

What one step costs: the decoder's own timings of `llama_decode` (`BatchDecoder.stats`), n
requests sent at once in one process: with 1 thread, wall / CPU milliseconds per step of n
sequences (llama.cpp computes on the calling thread, so its CPU time is the step's work,
whoever else gets the cores; the neighbours still cool the caches) and the gain in tokens per CPU second over one sequence; with
every core, wall milliseconds (its threads wait for each other at every operation, and a
thread the crowd has preempted stalls the others):

"""
        + "\n".join(steps)
        + "\n"
        + reading(tables, costs)
        + "\n"
        + "\n\n".join(section(title, table) for title, table in tables.items())
        + """

`python bench/bench_batching.py` (BENCH_BATCHING_REQUESTS, BENCH_BATCHING_TOKENS,
BENCH_BATCHING_LARGE=0 for the shipped model only).
"""
    )


def main() -> None:
    import ferrule_smollm2

    shipped = str(ferrule_smollm2.gguf_path())
    models = {"SmolLM2-135M-Instruct Q4_1 (shipped)": ("SmolLM2-135M-Instruct", (REQUESTS, TOKENS))}
    if os.environ.get("BENCH_BATCHING_LARGE", "1") == "1":
        models[LARGE_TITLE] = (random_llama(shipped), (LARGE_REQUESTS, LARGE_TOKENS))
    load_before = os.getloadavg()
    process, url = start_server(str(MODEL_CACHE))
    try:
        tables = {
            title: asyncio.run(bench_model(url, path, workload))
            for title, (path, workload) in models.items()
        }
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    # 1 thread and every core, interleaved: on a shared machine llama.cpp's threads wait
    # for each other at every operation of the graph.
    costs: dict[tuple[str, int], tuple[dict[int, float], float]] = {}
    for title, (path, _) in models.items():
        for threads in sorted({1, available_cores()}):
            costs[title, threads] = asyncio.run(step_costs(path, threads))
    load_after = os.getloadavg()
    body = report(tables, costs, load_before, load_after)
    path = write_section("batching", "Continuous batching on llama.cpp (ferrule serve)", body)
    print(body)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
