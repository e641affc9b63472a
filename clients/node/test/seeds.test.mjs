// Every JavaScript example of the seeds (test/seeds/, only the package name changed), run
// as written with `node` against a real `ferrule serve` that each one starts. A fragment
// that uses names defined by an earlier example gets them from a preloaded context
// (test/seeds/context_*.mjs). The seeds' Qwen3 models run as the offline default model
// ($FERRULE_MODEL_ALIASES). Examples that cannot succeed run too, and must fail the way
// README.md in test/seeds/ says.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

const SEEDS = fileURLToPath(new URL("./seeds/", import.meta.url));
const ALIASES = "Qwen/Qwen3-0.6B=SmolLM2-135M-Instruct,Qwen/Qwen3-8B=SmolLM2-135M-Instruct";
const OFFLINE_QWEN = (model) =>
  new RegExp(`ModelError: model '${model.replace("/", "\\/")}' needs .*could not be downloaded`);

function hasSharp() {
  try {
    createRequire(import.meta.url).resolve("sharp");
    return true;
  } catch {
    return false;
  }
}

/**
 * file -> [context, expected]: expected.code (exit status), what stdout/stderr match, and
 * `aliases` when not the default ones.
 */
const EXAMPLES = {
  "low_level_01_echo.mjs": [null, { code: 1, stderr: /ReferenceError: results is not defined/ }],
  "low_level_02_split_text.mjs": [
    null,
    { code: 0, stdout: /^\d+\n\*+ First chunk \*+\nCHAPTER 1\n\nIn chapter 1 [\s\S]*\n\*+\n$/ },
  ],
  "low_level_03_infer.mjs": [
    null,
    { code: 0, stdout: /^\{\n {2}message: \{ role: 'assistant'[\s\S]*finish_reason: '(stop|length)',\n {2}usage: /m },
  ],
  // Without the aliases: on SmolLM2 this prompt runs to the end of the model's context
  // (8.5 minutes on 2 cores), too long for the suite (README.md in test/seeds/).
  "low_level_04_chain_of_thought.mjs": [
    "runtime",
    { code: 1, stderr: OFFLINE_QWEN("Qwen/Qwen3-8B"), aliases: "" },
  ],
  "low_level_05_system_message.mjs": ["runtime", { code: 0, stdout: /\S/ }],
  "agent_guide_01_runtime.mjs": [null, { code: 0, stdout: /^$/ }],
  "agent_guide_02_agent.mjs": ["runtime", { code: 0, stdout: /^$/ }],
  "agent_guide_03_system_message.mjs": ["runtime", { code: 0, stdout: /^$/ }],
  "agent_guide_04_delete.mjs": ["agent", { code: 0, stdout: /^$/ }],
  "agent_guide_05_local_model.mjs": [null, { code: 0, stdout: /^$/ }],
  "agent_guide_06_api_models.mjs": [
    null,
    { code: 1, stderr: /SyntaxError: Identifier 'agent' has already been declared/ },
  ],
  "agent_guide_07_provider.mjs": ["runtime", { code: 0, stdout: /^$/ }],
  "agent_guide_08_query.mjs": ["agent", { code: 0, stdout: /^\nPlease give me a short poem about AI$/ }],
  "agent_guide_09_images.mjs": [
    "agent",
    hasSharp()
      ? { code: 0, stdout: /^\nWhat is in this image\?\nWhat is in this image\?$/ }
      : { code: 1, stderr: /Cannot find package 'sharp'/ },
  ],
  "agent_guide_10_audio.mjs": ["agent", { code: 0, stdout: /^\nWhat's in these recording\?$/ }],
  "agent_guide_11_reasoning.mjs": [
    "agent",
    { code: 0, stdout: /^\n\[reasoning\]\n.+\nPlease solve me a simultaneous equation: x\+y=3, 4x\+3y=12$/s },
  ],
  "agent_guide_12_messages.mjs": ["agent", { code: 0, stdout: /^\[\]\n$/ }],
};

/** A 1-second 8 kHz mono 16-bit WAV of silence: what path/to/audio.wav holds. */
function wav() {
  const samples = 8000;
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + samples * 2, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(samples * 2, 40);
  return Buffer.concat([header, Buffer.alloc(samples * 2)]);
}

/** A text in place of the seed's book (not in this repository): ten chapters. */
function book() {
  const chapters = [];
  for (let i = 1; i <= 10; i++) {
    const paragraph = `In chapter ${i} a shoemaker walks home through the snow and thinks about what people live by. `;
    chapters.push(`CHAPTER ${i}\n\n${paragraph.repeat(30)}`);
  }
  return chapters.join("\n\n");
}

let workdir;
before(() => {
  workdir = mkdtempSync(join(tmpdir(), "ferrule-node-seeds-"));
  writeFileSync(join(workdir, "what_men_live_by.txt"), book());
  mkdirSync(join(workdir, "path", "to"), { recursive: true });
  writeFileSync(join(workdir, "path", "to", "audio.wav"), wav());
  writeFileSync(
    join(workdir, "path", "to", "image.png"),
    Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
      "base64",
    ),
  );
});
after(() => rmSync(workdir, { recursive: true, force: true }));

function run(file, context, aliases = ALIASES) {
  const args = context ? ["--import", join(SEEDS, `context_${context}.mjs`)] : [];
  args.push(join(SEEDS, file));
  const env = { ...process.env, FERRULE_MODEL_ALIASES: aliases };
  const child = spawn(process.execPath, args, { cwd: workdir, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

test("every JavaScript example of the seeds has its test file", async () => {
  const { readdirSync } = await import("node:fs");
  const files = readdirSync(SEEDS).filter((f) => /^(low_level|agent_guide)_\d+_.*\.mjs$/.test(f));
  assert.deepEqual(files.sort(), Object.keys(EXAMPLES).sort());
});

for (const [file, [context, expected]] of Object.entries(EXAMPLES)) {
  test(file, async () => {
    const { code, stdout, stderr } = await run(file, context, expected.aliases ?? ALIASES);
    const shown = `exit ${code}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
    assert.equal(code, expected.code, shown);
    if (expected.stdout) assert.match(stdout, expected.stdout, shown);
    if (expected.stderr) assert.match(stderr, expected.stderr, shown);
  });
}
