"""ferrule's llama.cpp backend against calling llama-cpp-python directly.

Same GGUF (the shipped SmolLM2-135M-Instruct Q4_1), same messages, same threads (every
core), greedy decoding, the same number of generated tokens. ferrule is driven the way a
script drives it: a `Runtime`, ``call_iter_method(lm, "infer", ...)``; the baseline is
``Llama.create_chat_completion(..., stream=True)`` on its own `Llama`. Before every run
both models' KV caches are reset, so each run reads the whole prompt (no prefix reuse).
Runs are interleaved, alternating which goes first; medians over the repeats.

- time to first token: from the request to the first non-empty text delta;
- tokens/s: decode rate after the first token, (tokens - 1) / (last - first).

Targets: ferrule >= 0.97x direct tokens/s and <= 1.05x direct time to first token.

    python bench/bench_llamacpp.py            # BENCH_LLAMACPP_REPEATS=9 BENCH_LLAMACPP_TOKENS=128
"""

from __future__ import annotations

import os
import statistics
import time

from _common import write_section

REPEATS = int(os.environ.get("BENCH_LLAMACPP_REPEATS", "9"))
TOKENS = int(os.environ.get("BENCH_LLAMACPP_TOKENS", "128"))
PROMPT = "Write a long story about a dragon who learns to bake bread in a small village."
MESSAGES = [{"role": "user", "content": PROMPT}]


def measure(chunks, first_text) -> tuple[float, float, str]:
    """(time to first token, decode seconds, text) of one streamed run."""
    start = time.perf_counter()
    first = last = None
    parts = []
    for chunk in chunks:
        text = first_text(chunk)
        if text:
            now = time.perf_counter()
            first = first if first is not None else now
            last = now
            parts.append(text)
    assert first is not None and last is not None
    return first - start, last - first, "".join(parts)


def main() -> None:
    import ferrule_smollm2
    from ferrule import Runtime
    from ferrule_llamacpp.backend import available_cores
    from llama_cpp import Llama

    path = str(ferrule_smollm2.gguf_path())
    threads = available_cores()
    direct = Llama(path, n_ctx=0, n_threads=threads, n_threads_batch=threads, verbose=False)
    rt = Runtime()
    rt.define("llamacpp_language_model", "lm", {"model": path})
    model = rt.kernel.component("lm")
    assert model.threads == threads and model.n_ctx == direct.n_ctx()

    def run_ferrule() -> tuple[float, float, str]:
        model.wait_idle()
        model.decoder.clear_cache()  # no prefix reuse: the whole prompt is read, as direct
        items = rt.call_iter_method(
            "lm", "infer", {"messages": MESSAGES, "temperature": 0.0, "max_tokens": TOKENS}
        )
        return measure(items, lambda item: item["message"]["content"][0]["text"])

    def run_direct() -> tuple[float, float, str]:
        direct.reset()
        chunks = direct.create_chat_completion(
            MESSAGES, temperature=0.0, max_tokens=TOKENS, stream=True
        )
        return measure(chunks, lambda chunk: chunk["choices"][0]["delta"].get("content"))

    runs = {"ferrule": run_ferrule, "direct": run_direct}
    for run in runs.values():  # warm-up: page in the weights, build the samplers
        run()
    ttft: dict[str, list[float]] = {name: [] for name in runs}
    rate: dict[str, list[float]] = {name: [] for name in runs}
    texts: dict[str, str] = {}
    for repeat in range(REPEATS):
        order = list(runs) if repeat % 2 == 0 else list(reversed(runs))
        for name in order:
            first, decode, text = runs[name]()
            ttft[name].append(first)
            rate[name].append((TOKENS - 1) / decode)
            texts[name] = text
    assert texts["ferrule"] == texts["direct"], "greedy outputs differ: not the same work"
    rt.stop()
    direct.close()

    med_ttft = {n: statistics.median(v) for n, v in ttft.items()}
    med_rate = {n: statistics.median(v) for n, v in rate.items()}
    rate_ratio = med_rate["ferrule"] / med_rate["direct"]
    ttft_ratio = med_ttft["ferrule"] / med_ttft["direct"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    body = f"""
SmolLM2-135M-Instruct Q4_1 (the shipped GGUF), {threads} threads, greedy, {TOKENS} generated
tokens, prompt of one user message through the model's chat template; {REPEATS} interleaved
repeats, medians (1-minute load average at the end: {load:.2f}). ferrule: `Runtime().call_iter_method(lm, "infer", ...)`;
direct: `Llama.create_chat_completion(..., stream=True)`. Both produced the same text.

| | tokens/s | time to first token |
|---|---|---|
| llama-cpp-python directly | {med_rate["direct"]:.1f} | {med_ttft["direct"] * 1e3:.1f} ms |
| ferrule llamacpp backend | {med_rate["ferrule"]:.1f} | {med_ttft["ferrule"] * 1e3:.1f} ms |
| ratio (ferrule / direct) | **{rate_ratio:.3f}x** (target >= 0.97x) | **{ttft_ratio:.3f}x** (target <= 1.05x) |

All runs, tokens/s: ferrule {", ".join(f"{v:.1f}" for v in rate["ferrule"])};
direct {", ".join(f"{v:.1f}" for v in rate["direct"])}.

`python bench/bench_llamacpp.py` (BENCH_LLAMACPP_REPEATS, BENCH_LLAMACPP_TOKENS).
"""
    path_written = write_section("llamacpp", "llama.cpp backend vs llama-cpp-python directly", body)
    print(body)
    print(f"wrote {path_written}")


if __name__ == "__main__":
    main()
