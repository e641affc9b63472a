// The README's JavaScript examples run as written, each against the server it starts.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const jsBlocks = (text) => [...text.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
const BLOCKS = jsBlocks(README);
const SERVE_DOC = jsBlocks(readFileSync(new URL("../../../docs/serve.md", import.meta.url), "utf8"));

function run(source, index) {
  // Inside the package, so that `import ... from "ferrule"` resolves to this package.
  const file = fileURLToPath(new URL(`./.readme-example-${index}.mjs`, import.meta.url));
  writeFileSync(file, source);
  const child = spawn(process.execPath, [file], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.once("close", (code) => {
      rmSync(file, { force: true });
      resolve({ code, stdout, stderr });
    }),
  );
}

test("the README has its three examples", () => {
  assert.equal(BLOCKS.length, 3);
});

test("the runtime example", async () => {
  const { code, stdout, stderr } = await run(BLOCKS[0], 0);
  assert.equal(code, 0, stderr);
  assert.equal(stdout, "{ text: 'Hello world' }\nWhat's your name?");
});

test("the agent example, on the offline default model", async () => {
  const { code, stdout, stderr } = await run(BLOCKS[1], 1);
  assert.equal(code, 0, stderr);
  // The answer streams, then the conversation is printed.
  assert.doesNotMatch(stdout, /\[error\]/, stdout);
  assert.match(stdout, /^\n\S[\s\S]*\[\s*\{\s*role: 'system'[\s\S]*role: 'user'[\s\S]*role: 'assistant'/, stdout);
});

test("the tools example", async () => {
  const { code, stdout, stderr } = await run(BLOCKS[2], 2);
  assert.equal(code, 0, stderr);
  assert.equal(
    stdout,
    '\n[tool call] {"id":"call_1","type":"function","function":{"name":"add","arguments":{"a":1,"b":2}}}\n' +
      '\n[tool result] {"tool_call_id":"call_1","name":"add","result":3}\n' +
      "\nIt is 3.",
  );
});

test("docs/serve.md's JavaScript example", async () => {
  assert.equal(SERVE_DOC.length, 1);
  const { code, stdout, stderr } = await run(SERVE_DOC[0], "serve-doc");
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^\{ text: 'Hello world' \}\n\n\S/, stdout);
  assert.doesNotMatch(stdout, /\[error\]/);
});
