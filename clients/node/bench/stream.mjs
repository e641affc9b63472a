// Measures, for bench/bench_node.py (which writes bench/results/node.md): the client's
// per-chunk cost of streaming (rt.callIterMethod) against reading the same NDJSON with
// bare fetch in the same run, and the time from startRuntime() to the first echo.
// Prints one JSON object.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

import { startRuntime } from "ferrule";

const WORDS = Number(process.env.BENCH_NODE_WORDS ?? 20000);
const ROUNDS = Number(process.env.BENCH_NODE_ROUNDS ?? 11);
const STARTS = Number(process.env.BENCH_NODE_STARTS ?? 3);
const REPLAY_REPEAT = 10;

/** Bare fetch: read the body, split it into lines, parse each: what any client must do. */
async function bareFetch(url, headers, body) {
  const response = await fetch(`${url}/ferrule/v1/iter`, { method: "POST", headers, body: JSON.stringify(body) });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let items = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const lines = (buffer + decoder.decode(value, { stream: true })).split("\n");
    buffer = lines.pop();
    for (const line of lines) {
      if ("item" in JSON.parse(line)) items++;
    }
  }
  return items;
}

async function viaClient(rt, inputs) {
  let items = 0;
  for await (const _item of rt.callIterMethod("bench-lm", "infer", inputs)) items++;
  return items;
}

/** Best ms of each, the two interleaved round by round; both must see the same items. */
async function interleaved(fns) {
  const times = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  let items;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [key, fn] of Object.entries(fns)) {
      const start = performance.now();
      const seen = await fn();
      times[key].push(performance.now() - start);
      if (items !== undefined && seen !== items) throw new Error(`${key} saw ${seen} items, not ${items}`);
      items = seen;
    }
  }
  // Also the median of each round's client/bare ratio: the two ran back to back.
  const ratios = times.client.map((ms, i) => ms / times.bare[i]).sort((a, b) => a - b);
  const best = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.min(...v)]));
  return { items, ...best, medianRatio: ratios[Math.floor(ratios.length / 2)] };
}

/** `ferrule serve` with a token we know, so bare fetch can read it too. */
async function serve(token) {
  const child = spawn("ferrule", ["serve", "--port", "0"], {
    env: { ...process.env, FERRULE_TOKEN: token },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const found = /listening on (http:\/\/\S+)/.exec(output);
      if (found) resolve(found[1]);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`ferrule serve exited ${code}: ${output}`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  return { url, stop: () => new Promise((resolve) => (child.once("exit", resolve), child.kill("SIGTERM"))) };
}

// 1. Time to the first echo: startRuntime() starts `ferrule serve`, then one call.
const starts = [];
for (let i = 0; i < STARTS; i++) {
  const t0 = performance.now();
  const rt = await startRuntime();
  const t1 = performance.now();
  await rt.call("echo", { text: "Hello world" });
  const t2 = performance.now();
  await rt.stop();
  starts.push({ startRuntime: t1 - t0, firstEcho: t2 - t1, total: t2 - t0 });
}

// 2. Streaming: the test model echoes a WORDS-word message, one item per word.
const token = randomBytes(24).toString("base64url");
const headers = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
const server = await serve(token);
const rt = await startRuntime({ url: server.url, token });
await rt.define("test_language_model", "bench-lm", {});
const text = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(" ");
const inputs = { messages: [{ role: "user", content: [{ type: "text", text }] }] };
const body = { name: "bench-lm", method: "infer", inputs };

// 2a. Against `ferrule serve`: the server's work is in both times.
const served = await interleaved({
  client: () => viaClient(rt, inputs),
  bare: () => bareFetch(server.url, headers, body),
});

// 2b. Against a loopback server replaying the bytes of one reply: the client side alone.
const response = await fetch(`${server.url}/ferrule/v1/iter`, { method: "POST", headers, body: JSON.stringify(body) });
const recorded = Buffer.from(await response.arrayBuffer());
// Ten replies' items in one stream, so that a round is long against the machine's jitter.
const itemLines = recorded.toString("utf8").replace(/\{"end":true\}\n$/, "");
const replayBody = Buffer.from(itemLines.repeat(REPLAY_REPEAT) + '{"end":true}\n');
const replay = createServer((request, reply) => {
  request.resume();
  request.on("end", () => {
    reply.writeHead(200, { "Content-Type": "application/x-ndjson" });
    reply.end(replayBody);
  });
});
await new Promise((resolve) => replay.listen(0, "127.0.0.1", resolve));
const replayUrl = `http://127.0.0.1:${replay.address().port}`;
const replayRt = await startRuntime({ url: replayUrl, token });
const replayed = await interleaved({
  client: () => viaClient(replayRt, inputs),
  bare: () => bareFetch(replayUrl, headers, body),
});
replay.close();
await rt.stop();
await server.stop();

console.log(JSON.stringify({ words: WORDS, rounds: ROUNDS, bytes: recorded.length, starts, served, replayed }));
