// The runtime against a real `ferrule serve`: started by startRuntime() or connected to.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { inspect } from "node:util";

import {
  DuplicateComponentError,
  InvalidInputError,
  ModelError,
  RemoteError,
  RequestCancelledError,
  Runtime,
  UnauthorizedError,
  UnknownComponentError,
  UnknownMethodError,
  UnknownOperatorError,
  startRuntime,
} from "ferrule";

import { TOKEN, collect, serveWithToken } from "./helpers.mjs";

const hi = (text) => ({ messages: [{ role: "user", content: [{ type: "text", text }] }] });

/** Whether `url` still answers after up to 10 s of asking (false as soon as it does not). */
async function stillServing(url) {
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${url}/health`);
    } catch {
      return false;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

describe("startRuntime() starts its own server", () => {
  let rt;
  before(async () => {
    rt = await startRuntime();
  });
  after(async () => {
    await rt.stop();
  });

  test("echo, as the seed calls it", async () => {
    assert.deepEqual(await rt.call("echo", { text: "Hello world" }), { text: "Hello world" });
  });

  test("the server has a fresh token, which the runtime never shows", async () => {
    const response = await fetch(`${rt.url}/ferrule/v1/call`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ operator: "echo", inputs: { text: "x" } }),
    });
    assert.equal(response.status, 401);
    assert.equal(inspect(rt), `Runtime(${rt.url})`);
    assert.equal(JSON.stringify(Object.keys(rt)), JSON.stringify(["url"]));
    assert.match(rt.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test("callIter streams an operator's items", async () => {
    assert.deepEqual(await collect(rt.callIter("spell", { text: "abc" })), [
      { text: "a" },
      { text: "b" },
      { text: "c" },
    ]);
  });

  test("define, callIterMethod, callMethod and delete a component", async () => {
    await rt.define("test_language_model", "lm-node", {});
    const items = await collect(rt.callIterMethod("lm-node", "infer", hi("What's your name?")));
    const text = items.map((i) => i.message.content[0]?.text ?? "").join("");
    assert.equal(text, "What's your name?");
    assert.equal(items.at(-1).finish_reason, "stop");
    await assert.rejects(rt.define("test_language_model", "lm-node", {}), DuplicateComponentError);
    await assert.rejects(rt.callMethod("lm-node", "no_such_method", {}), UnknownMethodError);
    await rt.delete("lm-node");
    await assert.rejects(rt.callMethod("lm-node", "infer", hi("x")), UnknownComponentError);
  });

  test("errors arrive typed, naming the bad field", async () => {
    await assert.rejects(rt.call("no_such_operator", {}), (error) => {
      assert.ok(error instanceof UnknownOperatorError);
      assert.equal(error.kind, "unknown_operator");
      assert.match(error.message, /unknown operator 'no_such_operator'/);
      return true;
    });
    await assert.rejects(rt.call("echo", { txt: "x" }), (error) => {
      assert.ok(error instanceof InvalidInputError);
      assert.equal(error.field, "$.text");
      assert.deepEqual(
        error.errors.map((e) => e.path),
        ["$.text", "$.txt"],
      );
      return true;
    });
    await assert.rejects(rt.call("echo", { text: 1n }), (error) => {
      assert.ok(error instanceof InvalidInputError);
      assert.equal(error.field, "inputs");
      return true;
    });
  });

  test("an error before a stream raises at its first item; one mid-stream after its items", async () => {
    await assert.rejects(collect(rt.callIter("no_such_operator", {})), UnknownOperatorError);
    await rt.define("test_language_model", "lm-fails", {
      turns: [{ text: "one two", error: "the model broke" }],
    });
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const item of rt.callIterMethod("lm-fails", "infer", hi("x"))) seen.push(item);
      })(),
      (error) => error instanceof ModelError && /the model broke/.test(error.message),
    );
    assert.equal(seen.map((i) => i.message.content[0]?.text ?? "").join(""), "one two");
    await rt.delete("lm-fails");
  });

  test("a consumer that stops closes the stream and its producer", async () => {
    // 200 items a second apart: a stream left running would outlive the test's timeout,
    // and the server could not delete the component (stop) while it runs.
    await rt.define("test_language_model", "lm-slow", {
      turns: [1, 2].map(() => ({ text: "word ".repeat(200), delay: 1.0 })),
    });
    const first = [];
    for await (const item of rt.callIterMethod("lm-slow", "infer", hi("x"))) {
      first.push(item);
      if (first.length === 1) break;
    }
    assert.equal(first.length, 1);
    // the connection was closed: the server serves the next request at once
    assert.deepEqual(await rt.call("echo", { text: "next" }), { text: "next" });
  });

  test("an aborted signal cancels a stream with RequestCancelledError", async () => {
    const controller = new AbortController();
    const seen = [];
    await assert.rejects(
      (async () => {
        for await (const item of rt.callIterMethod("lm-slow", "infer", hi("x"), {
          signal: controller.signal,
        })) {
          seen.push(item);
          controller.abort();
        }
      })(),
      RequestCancelledError,
    );
    assert.equal(seen.length, 1);
    await rt.delete("lm-slow");
  });

  test("introspection lists what the server has", async () => {
    const operators = await rt.operators();
    assert.ok(Object.keys(operators).includes("echo") || JSON.stringify(operators).includes("echo"));
    assert.ok(JSON.stringify(await rt.componentTypes()).includes("test_language_model"));
    assert.ok(JSON.stringify(await rt.plugins()).includes("testmodel"));
  });
});

describe("startRuntime({ url, token }) connects to a running server", () => {
  let server;
  before(async () => {
    server = await serveWithToken();
  });
  after(async () => {
    await server.stop();
  });

  test("with its token", async () => {
    const rt = await startRuntime({ url: server.url, token: TOKEN });
    assert.equal(rt.ownsServer, false);
    assert.deepEqual(await rt.call("echo", { text: "hi" }), { text: "hi" });
    await rt.define("test_language_model", "lm-connected", {});
    await rt.stop(); // deletes what it defined, leaves the server running
    const other = await startRuntime({ url: server.url, token: TOKEN });
    await assert.rejects(other.callMethod("lm-connected", "infer", hi("x")), UnknownComponentError);
    await assert.rejects(rt.call("echo", { text: "after stop" }), RemoteError);
    await other.stop();
  });

  test("a wrong or missing token is UnauthorizedError", async () => {
    for (const token of [undefined, "wrong-token"]) {
      const rt = await startRuntime({ url: server.url, token });
      await assert.rejects(rt.call("echo", { text: "hi" }), UnauthorizedError);
    }
  });

  test("a consumer that stops closes the connection: the server logs the client gone", async () => {
    const rt = await startRuntime({ url: server.url, token: TOKEN });
    await rt.define("test_language_model", "lm-left", {
      turns: [{ text: "word ".repeat(200), delay: 0.5 }],
    });
    for await (const _item of rt.callIterMethod("lm-left", "infer", hi("x"))) break;
    // status 499: the client left before the answer ended (the server closed its producer)
    let left = false;
    for (let i = 0; i < 100 && !left; i++) {
      left = /path='\/ferrule\/v1\/iter' status=499/.test(server.output());
      if (!left) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(left, server.output());
    await rt.stop();
  });

  test("a bad url is refused at once, naming the field", () => {
    assert.throws(() => new Runtime("localhost:8080"), (e) => e instanceof InvalidInputError && e.field === "url");
  });

  test("an unreachable server is RemoteError", async () => {
    const rt = await startRuntime({ url: "http://127.0.0.1:9" });
    await assert.rejects(rt.call("echo", { text: "hi" }), RemoteError);
  });
});

describe("the started server's lifetime", () => {
  test("a command that cannot start is RemoteError, saying why", async () => {
    await assert.rejects(startRuntime({ command: ["/nonexistent/ferrule"] }), (error) => {
      assert.ok(error instanceof RemoteError);
      assert.match(error.message, /could not start/);
      return true;
    });
    await assert.rejects(startRuntime({ serveArgs: ["--port", "not-a-port"] }), (error) => {
      assert.ok(error instanceof RemoteError);
      assert.match(error.message, /exited with code 2 before listening/);
      return true;
    });
  });

  test("without `ferrule` on PATH, it runs `python -m ferrule.cli` ($FERRULE_PYTHON)", async () => {
    const bin = (process.env.PATH ?? "").split(":").find((dir) => existsSync(join(dir, "ferrule")));
    assert.ok(bin, "the tests need `ferrule` on PATH");
    const python = process.env.FERRULE_PYTHON ?? join(bin, "python");
    const script = `
      import { startRuntime } from "ferrule";
      const rt = await startRuntime();
      console.log(JSON.stringify(await rt.call("echo", { text: "from python -m" })));
      await rt.stop();
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: new URL(".", import.meta.url),
      env: { ...process.env, PATH: "/usr/bin:/bin", FERRULE_PYTHON: python },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, output);
    assert.equal(output, '{"text":"from python -m"}\n');
  });

  test("rt.stop() stops it", async () => {
    const rt = await startRuntime();
    const url = rt.url;
    await rt.stop();
    await rt.stop(); // idempotent
    await assert.rejects(fetch(`${url}/health`));
  });

  test("a process that exits without rt.stop() stops it too", async () => {
    const script = `
      import { startRuntime } from "ferrule";
      const rt = await startRuntime();
      console.log(rt.url);
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: new URL(".", import.meta.url),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0);
    const url = output.trim();
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    // SIGTERM was sent at exit; the server shuts down within its grace
    assert.equal(await stillServing(url), false, "the server outlived the process that started it");
  });

  test("a process killed (no exit handler runs) stops it too: the server watches its stdin", async () => {
    const script = `
      import { startRuntime } from "ferrule";
      const rt = await startRuntime();
      console.log(rt.url);
      setInterval(() => {}, 1000); // alive until killed
    `;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: new URL(".", import.meta.url),
      stdio: ["ignore", "pipe", "inherit"],
    });
    const url = await new Promise((resolve) => {
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
        if (output.includes("\n")) resolve(output.trim());
      });
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal((await fetch(`${url}/health`)).ok, true);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(await stillServing(url), false, "the server outlived the killed process that started it");
  });
});
