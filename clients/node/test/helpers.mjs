// Shared by the tests: a `ferrule serve` started by the test itself with a known token,
// for the tests of `startRuntime({ url, token })`.
import { spawn } from "node:child_process";

export const TOKEN = "node-client-tests-token-0123456789abcdef";

/**
 * `ferrule serve` on a free loopback port with TOKEN; resolves to { url, stop, output }
 * (`output()`: what it printed so far, its access log included).
 */
export async function serveWithToken() {
  const child = spawn("ferrule", ["--debug", "serve", "--port", "0"], {
    env: { ...process.env, FERRULE_TOKEN: TOKEN },
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
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`ferrule serve exited ${code}: ${output}`)));
  });
  return {
    url,
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

/** Every item of an async iterable. */
export async function collect(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}
