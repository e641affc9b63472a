#!/usr/bin/env node
// Replay Ailoy's own Node test files against this client, unchanged but for the package name.
//
//     node clients/node/test/compat/replay_ailoy.mjs [v0.1.0|v0.2.5] [--ailoy DIR] [FILE...]
//
// The files of the tag (0.1: bindings/js-node/tests/*.spec.ts, mocha + chai through tsx;
// 0.2: bindings/nodejs/tests/*.test.ts, vitest) are read from a git clone of brekkylab/ailoy
// (--ailoy DIR, else $AILOY_CHECKOUT), at that tag whatever the clone has checked out:
//
//     git clone https://github.com/brekkylab/ailoy.git ailoy && git -C ailoy checkout v0.1.0
//
// They are written to a temporary folder with their import of Ailoy's package ("../src", "../src/index") replaced by
// "ferrule", this client (build it first: npm run build). The runner Ailoy used, at the
// versions its package.json asks, is installed there from the npm registry (the only thing
// fetched); Ailoy's own runner settings (.mocharc.json, vitest.config.ts) are used as they are.
//
// Around them, as Ailoy's tests expect, all local:
// - $FERRULE_MODEL_ALIASES: the Qwen3 ids to the offline SmolLM2, BAAI/bge-m3 to the
//   offline MiniLM (support.mjs's aliases);
// - one loopback server (loopback.py) for OpenAI, Anthropic, Gemini and xAI, with their
//   keys set (Ailoy's files skip a provider without its key), answering as the Python
//   replay's stand-in model does (it calls the offered tool that matches the user's words,
//   so the tools really run, and answers their results), and serving DuckDuckGo's results
//   page; at the end every request must have been well formed and answered;
// - a real Chroma server on localhost:8000, where Ailoy's files look for it;
// - `ferrule serve` is started by the client itself (`new Runtime()`, `startRuntime()`).
//
// The public picture and recording some cases download themselves (they need the internet)
// are answered, in the test's process, by small local media (offline_media.mjs), so those
// cases run here too; they are listed as needing the internet all the same.
//
// Each case is printed with its outcome, then the counts per file. Cases that need the
// internet (a download inside the test itself) are listed, with why.
// Without a clone, or with one that lacks the tag, exits 2 saying how to get one; else the
// runner's status.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

import { ALIASES, startLoopback, TEST_KEY } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const CLIENT = resolve(HERE, "../..");
const REPO = resolve(CLIENT, "../..");
const CHECKOUT_VARIABLE = "AILOY_CHECKOUT";
const REPOSITORY = "https://github.com/brekkylab/ailoy.git";
const CHROMA_PORT = 8000;

const TAGS = {
  "v0.1.0": {
    package: "bindings/js-node",
    tests: /^tests\/.*\.spec\.ts$/,
    config: [".mocharc.json", "tsconfig.json"],
    runner: ["mocha", "chai", "tsx"],
    // the provider files import sharp (a dependency of Ailoy's package, not a dev one);
    // agent-local's MCP case starts this server with `npx -y`, which finds it installed here
    extra: ["sharp", "@modelcontextprotocol/server-filesystem"],
  },
  "v0.2.5": {
    package: "bindings/nodejs",
    tests: /^tests\/.*\.test\.ts$/,
    config: ["vitest.config.ts"],
    runner: ["vitest", "dotenv"],
    extra: [],
  },
};

/**
 * Cases that need the internet, and why: a download inside the test itself (answered here by
 * offline_media.mjs), a program fetched from a registry at run time, or a model that calls
 * tools where the case asserts the call's outcome (Qwen3's weights come from the Hugging Face
 * hub; the offline SmolLM2 they are aliased to takes tools but at 135M rarely calls one).
 */
const NEEDS_INTERNET = {
  "v0.1.0": {
    "Image input from Sharp": "fetch() of a public image in the test (a local PNG here)",
    "Image recognition from Sharp": "fetch() of a public image in the test (a local PNG here)",
    "Audio input from bytes": "fetch() of a public recording in the test (a local WAV here)",
    "run-http-request": "an HTTP request to api.frankfurter.dev in the test",
    "run-openai-infer": "asserts what the real gpt-4o answers",
    "Local Agent > Tool Call: Filesystem MCP tools": "asserts the file the model's tool call wrote: needs Qwen3-8B's weights",
  },
  "v0.2.5": {
    "agent.test.ts (the file)": "fetch() of a public image at the file's top level, before any case (a local PNG here)",
    "Tool Calling: MCP Tools (time)": "`uvx mcp-server-time` fetches the server from PyPI",
  },
};

let checkout = null; // the clone of brekkylab/ailoy, set by main
const git = (...args) => execFileSync("git", ["-C", checkout, ...args], { encoding: "utf8", maxBuffer: 1 << 26 });

/** Why `dir` cannot be replayed at `tag` (with how to get a clone that can), or null. */
function checkoutProblem(dir, tag) {
  const get = `    git clone ${REPOSITORY} ailoy && git -C ailoy checkout ${tag}`;
  if (!dir) {
    return `replay_ailoy.mjs reads Ailoy's tests from a clone of brekkylab/ailoy: pass --ailoy DIR or set $${CHECKOUT_VARIABLE}. To make one:\n${get}`;
  }
  try {
    execFileSync("git", ["-C", dir, "rev-parse", "--verify", "--quiet", `${tag}^{commit}`], { stdio: "ignore" });
    return null;
  } catch {
    return `${dir} is not a git clone of brekkylab/ailoy with the tag ${tag} (a clone made before the tag: git -C ${dir} fetch --tags). To make one:\n${get}`;
  }
}

/** Ailoy's import of its own package, and only that, becomes "ferrule". */
export function renamePackage(source) {
  return source.replace(/(from\s+|import\s*\(\s*|require\s*\(\s*)(["'])\.\.\/src(?:\/index)?(?:\.[cm]?[jt]s)?\2/g, "$1$2ferrule$2");
}

function writeSuite(tag, root, only) {
  const spec = TAGS[tag];
  const names = git("ls-tree", "-r", "--name-only", `${tag}:${spec.package}`).split("\n");
  const files = names.filter((n) => spec.tests.test(n)).filter((n) => only.length === 0 || only.some((o) => n.endsWith(o)));
  mkdirSync(join(root, "tests"));
  for (const name of files) writeFileSync(join(root, name), renamePackage(git("show", `${tag}:${spec.package}/${name}`)));
  for (const name of spec.config) writeFileSync(join(root, name), git("show", `${tag}:${spec.package}/${name}`));
  const ailoyPackage = JSON.parse(git("show", `${tag}:${spec.package}/package.json`));
  const versions = { ...ailoyPackage.dependencies, ...ailoyPackage.devDependencies };
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "ailoy-replay", private: true, type: ailoyPackage.type }, null, 2));
  const install = [...spec.runner, ...spec.extra].map((name) => (versions[name] ? `${name}@${versions[name]}` : name));
  return { files, install };
}

function run(command, args, options) {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"], ...options });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
      process.stdout.write(chunk);
    });
    child.once("error", fail);
    child.once("exit", (code) => done({ code: code ?? 1, output }));
  });
}

/** A real Chroma server on 127.0.0.1:8000 (the nox environment's chromadb), or null. */
async function startChroma(python, root) {
  const probe = spawn(python, ["-c", "import chromadb.cli.cli"], { stdio: "ignore" });
  if ((await new Promise((r) => probe.once("exit", r))) !== 0) return null;
  const data = join(root, "chroma");
  const child = spawn(
    python,
    ["-c", "from chromadb.cli.cli import app; app()", "run", "--path", data, "--host", "127.0.0.1", "--port", String(CHROMA_PORT)],
    { stdio: "ignore", env: { ...process.env, ANONYMIZED_TELEMETRY: "False" } },
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`chroma run exited ${child.exitCode} (is port ${CHROMA_PORT} taken?)`);
    if (Date.now() > deadline) {
      child.kill("SIGTERM");
      throw new Error(`Chroma did not answer on port ${CHROMA_PORT} in 120 s`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${CHROMA_PORT}/api/v2/heartbeat`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  console.log(`Chroma answers on localhost:${CHROMA_PORT}`);
  return {
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r();
        child.once("exit", r);
        child.kill("SIGTERM");
      }),
  };
}

/** Ailoy's .mocharc.json but its `spec` glob (one file per run, so each is counted). */
function mochaOptions(root) {
  const { timeout, require: required } = JSON.parse(readFileSync(join(root, ".mocharc.json"), "utf8"));
  return ["--no-config", "--timeout", String(timeout), ...[required].flat().flatMap((r) => ["--require", r])];
}

/** A file's counts, from the runner's closing lines (mocha's spec, vitest's verbose). */
function summarize(tag, output) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const number = (pattern) => Number(pattern.exec(plain)?.[1] ?? 0);
  if (tag === "v0.1.0") {
    return { passed: number(/(\d+) passing/), failed: number(/(\d+) failing/), skipped: number(/(\d+) pending/) };
  }
  const tests = /^\s*Tests\s+(.*)$/m.exec(plain)?.[1] ?? "";
  const of = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(tests)?.[1] ?? 0);
  return { passed: of("passed"), failed: of("failed"), skipped: of("skipped") };
}

async function main(argv) {
  const tag = argv[0]?.startsWith("v") ? argv.shift() : "v0.1.0";
  if (!(tag in TAGS)) throw new Error(`unknown tag ${tag}; tags: ${Object.keys(TAGS).join(", ")}`);
  checkout = process.env[CHECKOUT_VARIABLE] || null;
  const flag = argv.indexOf("--ailoy");
  if (flag !== -1) {
    checkout = argv.splice(flag, 2)[1] ?? null;
  }
  const problem = checkoutProblem(checkout, tag);
  if (problem !== null) {
    console.error(problem);
    return 2;
  }
  if (!existsSync(join(CLIENT, "dist", "index.js"))) throw new Error(`build the client first: cd ${CLIENT} && npm run build`);
  const root = mkdtempSync(join(tmpdir(), `ailoy-node-${tag}-`));
  const services = [];
  try {
    const { files, install } = writeSuite(tag, root, argv);
    console.log(`replaying ${files.join(", ")} of Ailoy ${tag} in ${root}`);
    for (const [name, why] of Object.entries(NEEDS_INTERNET[tag])) console.log(`needs the internet (${why}): ${name}`);
    const npm = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...install, CLIENT], { cwd: root });
    if (npm.code !== 0) throw new Error("npm install of the runner failed");

    const python = process.env.FERRULE_PYTHON ?? (existsSync(join(REPO, ".nox/tests/bin/python")) ? join(REPO, ".nox/tests/bin/python") : "python3");
    process.env.FERRULE_PYTHON = python;
    process.env.FERRULE_MODEL_ALIASES = Object.entries(ALIASES)
      .map(([from, to]) => `${from}=${to}`)
      .join(",");
    const loopback = await startLoopback(); // sets the providers' base URLs and keys
    services.push(loopback);
    await loopback.auto(); // every request answered by the server itself
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --import ${pathToFileURL(join(HERE, "offline_media.mjs")).href}`.trim();
    process.env.NO_COLOR = "1";
    process.env.CLAUDE_API_KEY = TEST_KEY; // 0.1's Claude file reads this name
    const chroma = await startChroma(python, root);
    if (chroma) services.push(chroma);
    else console.log("no chromadb in the environment: the Chroma cases will fail");
    process.env.FERRULE_CHROMA_URL = `http://localhost:${CHROMA_PORT}`;

    const bin = (name) => join(root, "node_modules", ".bin", name);
    const counts = {};
    let status = 0;
    for (const file of files) {
      console.log(`\n=== ${file}`);
      const result =
        tag === "v0.1.0"
          ? await run(bin("mocha"), [...mochaOptions(root), "--reporter", "spec", file], { cwd: root })
          : await run(bin("vitest"), ["run", "--reporter", "verbose", file.replace(/^tests\//, "")], { cwd: root });
      counts[file] = summarize(tag, result.output);
      const ran = counts[file].passed + counts[file].failed + counts[file].skipped;
      if (ran === 0 && result.code !== 0) counts[file].note = "the file failed before any case";
      if (result.code !== 0) status = 1;
    }
    console.log("\nper file:");
    for (const [file, c] of Object.entries(counts)) {
      console.log(`  ${file}: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped${c.note ? ` (${c.note})` : ""}`);
    }
    const requests = await loopback.requests();
    console.log(`loopback providers answered ${requests.length} requests`);
    await loopback.check(); // every request well formed and answered
    return status;
  } finally {
    for (const service of services.reverse()) await service.stop();
    if (!process.env.AILOY_REPLAY_KEEP) rmSync(root, { recursive: true, force: true });
    else console.log(`kept ${root}`);
  }
}

process.exitCode = await main(process.argv.slice(2));
