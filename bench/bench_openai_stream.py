"""Streaming throughput: a 20,000-chunk Chat Completions reply read six ways.

A loopback aiohttp server (in a process of its own, so it does not share this process's
GIL) serves the same bytes every time: 20,000 ``data: {chunk}`` events in OpenAI's
documented shape, then the finish chunk, the usage chunk and ``data: [DONE]``. It writes
them in 64 KiB pieces so the client, not the server, is what is measured. Read by:

- raw aiohttp line reading (``async for line in response.content``) — the limit;
- ferrule's OpenAI plugin: the LM component stream via ``AsyncRuntime.call_iter_method``
  (``infer``), and via the synchronous ``Runtime`` (which hops to its loop thread per item);
- the official ``openai`` SDK (``AsyncOpenAI(base_url=...)``, ``stream=True``).

Targets (issue 3): the LM component stream at least 0.5x the raw limit and at least 4x
the official SDK. Run: ``python bench/bench_openai_stream.py`` (needs ferrule-openai and
the ``openai`` package: ``pip install -e 'plugins/openai[bench]'``).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_section

CHUNKS = 20_000
ROUNDS = 5
MODEL = "gpt-4o"


def body() -> bytes:
    def event(obj: object) -> bytes:
        return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"

    base = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1760000000,
        "model": MODEL,
    }
    parts = [
        event(
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "finish_reason": None,
                    }
                ],
            }
        )
    ]
    for i in range(CHUNKS):
        delta = {"content": f" tok{i % 100}"}
        parts.append(
            event(
                {
                    **base,
                    "choices": [
                        {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
                    ],
                }
            )
        )
    parts.append(event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    usage = {"prompt_tokens": 10, "completion_tokens": CHUNKS, "total_tokens": CHUNKS + 10}
    parts.append(event({**base, "choices": [], "usage": usage}))
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


# -- the server (run in a subprocess) ---------------------------------------------------


def serve(port: int) -> None:
    from aiohttp import web

    payload = body()
    piece = 64 * 1024

    async def completions(request: web.Request) -> web.StreamResponse:
        await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for start in range(0, len(payload), piece):
            await response.write(payload[start : start + piece])
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


# -- the readers ------------------------------------------------------------------------

REQUEST = {"model": MODEL, "messages": [{"role": "user", "content": "Count."}], "stream": True}
INPUTS = {"messages": [{"role": "user", "content": "Count."}]}


async def raw_aiohttp(base_url: str) -> int:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(base_url + "/chat/completions", json=REQUEST) as response:
            count = 0
            async for line in response.content:
                if line.startswith(b"data:"):
                    count += 1
    return count


async def openai_sdk(base_url: str) -> int:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)
    try:
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=REQUEST["messages"],
            stream=True,
            stream_options={"include_usage": True},
        )
        count = 0
        async for _chunk in stream:
            count += 1
    finally:
        await client.close()
    return count


async def ferrule_async(runtime: object) -> int:
    count = 0
    async for _item in runtime.call_iter_method("lm", "infer", INPUTS):  # type: ignore[attr-defined]
        count += 1
    return count


def ferrule_sync(runtime: object) -> int:
    count = 0
    for _item in runtime.call_iter_method("lm", "infer", INPUTS):  # type: ignore[attr-defined]
        count += 1
    return count


def _agent(runtime: object, base_url: str):
    from ferrule import Agent, APIModel

    return Agent(runtime, APIModel(MODEL, provider="openai", api_key="bench", base_url=base_url))


async def agent_async(agent: object) -> int:
    count = 0
    async for _resp in agent.aquery("Stream, please."):  # type: ignore[attr-defined]
        count += 1
    agent.clear_messages()  # type: ignore[attr-defined]
    return count


def agent_sync(agent: object) -> int:
    count = 0
    for _resp in agent.query("Stream, please."):  # type: ignore[attr-defined]
        count += 1
    agent.clear_messages()  # type: ignore[attr-defined]
    return count


async def best_async(fn, *args) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        count = await fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, count


def best_sync(fn, *args) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        count = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, count


async def measure_async(base_url: str) -> dict[str, tuple[float, int]]:
    from ferrule import AsyncRuntime

    results = {"raw": await best_async(raw_aiohttp, base_url)}
    async with AsyncRuntime() as rt:
        await rt.define(
            "openai_language_model",
            "lm",
            {"model": MODEL, "api_key": "bench", "base_url": base_url},
        )
        results["ferrule_async"] = await best_async(ferrule_async, rt)
        results["agent_async"] = await best_async(agent_async, _agent(rt, base_url))
    results["openai_sdk"] = await best_async(openai_sdk, base_url)
    return results


def measure_sync(base_url: str) -> dict[str, tuple[float, int]]:
    from ferrule import Runtime

    with Runtime() as rt:
        rt.define(
            "openai_language_model",
            "lm",
            {"model": MODEL, "api_key": "bench", "base_url": base_url},
        )
        return {
            "ferrule_sync": best_sync(ferrule_sync, rt),
            "agent_sync": best_sync(agent_sync, _agent(rt, base_url)),
        }


def main() -> None:
    process, base_url = start_server()
    try:
        results = asyncio.run(measure_async(base_url))
        results.update(measure_sync(base_url))
    finally:
        process.terminate()
        process.wait(10)
    rate = {name: CHUNKS / seconds for name, (seconds, _count) in results.items()}
    raw = rate["raw"]
    sdk = rate["openai_sdk"]
    labels = {
        "raw": "raw aiohttp line reading (the limit)",
        "ferrule_async": "ferrule LM stream, AsyncRuntime.call_iter_method",
        "ferrule_sync": "ferrule LM stream, sync Runtime.call_iter_method",
        "openai_sdk": "official openai SDK (AsyncOpenAI, stream=True)",
        "agent_async": "ferrule Agent stream, AsyncRuntime (`async for resp in agent.aquery(...)`)",
        "agent_sync": "ferrule Agent stream, sync Runtime (`for resp in agent.query(...)`)",
    }
    rows = [
        f"| {labels[name]} | {results[name][1]:,} | {results[name][0] * 1000:.0f} | {rate[name]:,.0f} | "
        f"{rate[name] / raw:.2f}x | {rate[name] / sdk:.1f}x |"
        for name in (
            "raw",
            "ferrule_async",
            "ferrule_sync",
            "agent_async",
            "agent_sync",
            "openai_sdk",
        )
    ]
    table = "\n".join(
        [
            "| reader | items | ms (best of 5) | chunks/s | vs raw | vs openai SDK |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )
    target_raw = rate["ferrule_async"] / raw >= 0.5
    target_sdk = rate["ferrule_async"] / sdk >= 4
    target_agent = rate["agent_async"] / sdk >= 3
    body_md = f"""
A {CHUNKS:,}-chunk OpenAI Chat Completions stream from a loopback aiohttp server (its own
process; 64 KiB writes) read six ways; "items" is what each reader yields (ferrule: one
item per content chunk plus the final item; the SDK: every chunk object; raw: every
`data:` line). Command: `python bench/bench_openai_stream.py`.

{table}

Targets: LM stream >= 0.5x raw: **{"met" if target_raw else "missed"}** ({rate["ferrule_async"] / raw:.2f}x); >= 4x the official SDK: **{"met" if target_sdk else "missed"}** ({rate["ferrule_async"] / sdk:.1f}x). Agent stream >= 3x the official SDK: **{"met" if target_agent else "missed"}** ({rate["agent_async"] / sdk:.1f}x async, {rate["agent_sync"] / sdk:.1f}x sync).

The sync Runtime reads the stream ahead on its loop and hands over everything buffered at once (`ferrule._bridge._Pump`): {rate["ferrule_sync"] / rate["ferrule_async"]:.2f}x of the async stream.
"""
    print(body_md)
    write_section("openai_stream", "OpenAI-wire streaming throughput", body_md)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]))
    else:
        os.environ.pop("OPENAI_BASE_URL", None)
        main()
