"""The Node client (clients/node): its per-chunk streaming cost against reading the same
NDJSON stream with bare ``fetch`` in the same run, and the time from ``startRuntime()``
(which starts ``ferrule serve``) to the first echo.

Streaming: the test model echoes a 20 000-word message, one stream item per word; the
client (``for await (const item of rt.callIterMethod(...))``) and bare fetch (read the
body, split lines, ``JSON.parse`` each) read it, interleaved round by round, best round of
each. Twice: from ``ferrule serve`` (the server's work is in both times), and from a
loopback server replaying the recorded items of ten replies in one stream (the client side
alone; long rounds, against the shared machine's jitter). Target:
the client within 1.2x of bare fetch per chunk.

Run: ``python bench/bench_node.py`` (needs node 20+, npm, and ferrule with
ferrule-testmodel installed in this Python; builds the client first).
Env: BENCH_NODE_WORDS (20000), BENCH_NODE_ROUNDS (11), BENCH_NODE_STARTS (5).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write_section

CLIENT = Path(__file__).resolve().parents[1] / "clients" / "node"


def main() -> None:
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "FERRULE_PYTHON": sys.executable,
        "BENCH_NODE_STARTS": os.environ.get("BENCH_NODE_STARTS", "5"),
    }
    for command in (["npm", "ci", "--no-audit", "--no-fund"], ["npm", "run", "build"]):
        subprocess.run(command, cwd=CLIENT, env=env, check=True, capture_output=True)
    node = subprocess.run(["node", "--version"], capture_output=True, text=True, check=True)
    done = subprocess.run(
        ["node", "bench/stream.mjs"],
        cwd=CLIENT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    words, rounds = result["words"], result["rounds"]
    rows = []
    ratios = {}
    for key, label in (
        ("served", "from `ferrule serve` (server included)"),
        ("replayed", "from a loopback server replaying ten replies' items (client side alone)"),
    ):
        figures = result[key]
        items = figures["items"]
        ratio = figures["client"] / figures["bare"]
        ratios[key] = figures["medianRatio"]
        rows.append(
            f"| {label} | {items} | {figures['bare'] / items * 1000:.2f} µs "
            f"| {figures['client'] / items * 1000:.2f} µs | **{ratio:.2f}x** "
            f"| {figures['medianRatio']:.2f}x |"
        )
    starts = result["starts"]
    totals = sorted(s["total"] for s in starts)
    spawn = sorted(s["startRuntime"] for s in starts)
    echo = sorted(s["firstEcho"] for s in starts)
    mid = len(starts) // 2
    body = f"""
The client's `for await (const item of rt.callIterMethod(...))` against bare `fetch` reading
the same NDJSON (split lines, `JSON.parse` each): the test model echoing a {words}-word
message (one item per word) from `ferrule serve`, and ten such replies' items replayed by a
loopback server; interleaved, best of {rounds} rounds each; Node {node.stdout.strip()}.

| stream | items | bare fetch per item | client per item | client / bare (best rounds) | median of the rounds' ratios |
|---|---|---|---|---|---|
{chr(10).join(rows)}

- per-chunk overhead of the client (median of the rounds' ratios):
  **{ratios["replayed"]:.2f}x** bare fetch on the client side alone,
  **{ratios["served"]:.2f}x** end to end (target: within 1.2x). The client
  parses each network read's lines as bare fetch does and hands the items out of a queue,
  one resolved promise each: what it adds is that promise per item. This machine is
  shared and noisy: a ratio below 1.0x is noise, and the client-side figure moves between
  runs (the median of paired rounds moves less than the best rounds)
- `startRuntime()` to the first echo (spawning `ferrule serve` on a free port with a fresh
  token, waiting for it to listen, one `rt.call("echo", ...)`), {len(starts)} starts: median
  **{totals[mid]:.0f} ms** (best {totals[0]:.0f} ms); of it `startRuntime()` {spawn[mid]:.0f} ms
  (the Python server starting and discovering its plugins), the first echo {echo[mid]:.0f} ms

Run: `python bench/bench_node.py` (BENCH_NODE_WORDS, BENCH_NODE_ROUNDS, BENCH_NODE_STARTS).
"""
    path = write_section("node", "The Node client: streaming overhead and start-up", body)
    print(path.read_text())


if __name__ == "__main__":
    main()
