// Shared by the Ailoy compat tests: the environment Ailoy's tests expect, here offline.
// Qwen3 and bge-m3 ids go to the offline models (FERRULE_MODEL_ALIASES), each provider's
// base URL to one loopback server (loopback.py, the kit's wire dialects), set before a
// test file starts its `ferrule serve` so the server inherits them.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ALIASES = {
  "Qwen/Qwen3-0.6B": "SmolLM2-135M-Instruct",
  "Qwen/Qwen3-8B": "SmolLM2-135M-Instruct",
  "BAAI/bge-m3": "all-MiniLM-L6-v2",
};
export const TEST_KEY = "sk-ailoy-compat-0123456789";

/** Ailoy's providers: the id its tests use, the loopback's dialect, the variables. */
export const PROVIDERS = {
  openai: { model: "gpt-4.1-mini", dialect: "openai", base: "OPENAI_BASE_URL", suffix: "/v1", key: "OPENAI_API_KEY" },
  claude: { model: "claude-sonnet-4-20250514", dialect: "anthropic", base: "ANTHROPIC_BASE_URL", suffix: "", key: "ANTHROPIC_API_KEY" },
  gemini: { model: "gemini-2.5-flash", dialect: "gemini", base: "GOOGLE_GEMINI_BASE_URL", suffix: "", key: "GEMINI_API_KEY" },
  grok: { model: "grok-4", dialect: "xai", base: "XAI_BASE_URL", suffix: "/v1", key: "XAI_API_KEY" },
};

export function useOfflineAliases() {
  process.env.FERRULE_MODEL_ALIASES = Object.entries(ALIASES)
    .map(([from, to]) => `${from}=${to}`)
    .join(",");
}

/** The loopback server: `script(...replies)`, `requests()`, `clear()`, `stop()`; `url`. */
export async function startLoopback() {
  const python = process.env.FERRULE_PYTHON ?? "python3";
  const script = fileURLToPath(new URL("./loopback.py", import.meta.url));
  const child = spawn(python, [script], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const read = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error("the loopback server exited");
    return JSON.parse(value);
  };
  const { url } = await read();
  const ask = async (command) => {
    child.stdin.write(JSON.stringify(command) + "\n");
    const answer = await read();
    if (answer.error) throw new Error(answer.error);
    return answer;
  };
  for (const provider of Object.values(PROVIDERS)) {
    process.env[provider.base] = url + provider.suffix;
    process.env[provider.key] = TEST_KEY;
  }
  process.env.FERRULE_FRANKFURTER_URL = `${url}/v1/latest`;
  process.env.FERRULE_DUCKDUCKGO_URL = url;
  // The http_request operator reaches public addresses only, unless the host allows more.
  // (localhost too: Ailoy's Chroma case names http://localhost:8000, which may resolve to ::1)
  process.env.FERRULE_HTTP_REQUEST_ALLOW = "127.0.0.1,localhost";
  return {
    url,
    script: (...replies) => ask({ op: "script", replies }),
    requests: async () => (await ask({ op: "requests" })).requests,
    clear: () => ask({ op: "clear" }),
    /** From now on the server answers every request by itself (loopback.py's `answered`). */
    auto: () => ask({ op: "auto" }),
    /** Throws unless every request so far was well formed and answered. */
    check: () => ask({ op: "check" }),
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.stdin.end();
      }),
  };
}

/** Every item of an async iterable. */
export async function collect(iterable) {
  const items = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** A writable that keeps what `agent.print` writes. */
export function printedTo() {
  const chunks = [];
  return {
    write: (chunk) => {
      chunks.push(String(chunk));
      return true;
    },
    text: () => chunks.join(""),
  };
}

/**
 * A real Chroma server (chroma_server.py), its URL set as $FERRULE_CHROMA_URL for the
 * runtimes started after it; null when the ferrule-chroma plugin is not installed.
 */
export async function startChroma() {
  const python = process.env.FERRULE_PYTHON ?? "python3";
  const probe = spawn(python, ["-c", "import ferrule_chroma.testing"], { stdio: "ignore" });
  if ((await new Promise((resolve) => probe.once("exit", resolve))) !== 0) return null;
  const child = spawn(python, [fileURLToPath(new URL("./chroma_server.py", import.meta.url))], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const { value } = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  const { url } = JSON.parse(value);
  process.env.FERRULE_CHROMA_URL = url;
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.stdin.end();
      }),
  };
}
