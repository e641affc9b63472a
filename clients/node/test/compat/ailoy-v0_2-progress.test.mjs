// Ailoy 0.2 `LangModel.newLocal(name, { progressCallback })` (agent.test.ts's Local model):
// the callback hears the server make the model ready, through `ferrule serve`'s
// prepare_local_model stream. A model not yet downloaded: its weights come from a loopback
// Hugging Face endpoint ($HF_ENDPOINT of the runtime's server, with a cache of its own), and
// every byte is reported as it arrives, then the file ready, then the model loaded.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import * as ailoy from "ferrule";

const python = process.env.FERRULE_PYTHON ?? "python3";
// A real GGUF to serve: the packaged offline model's file (the runtime loads what it downloads).
const GGUF = readFileSync(
  execFileSync(python, ["-c", "import ferrule_smollm2, pathlib; print(next(pathlib.Path(ferrule_smollm2.__file__).parent.glob('*.gguf')))"], {
    encoding: "utf8",
  }).trim(),
);
const FILE = "/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf";

let hub;
let hubUrl;
let cache;
before(async () => {
  hub = createServer((request, response) => {
    if (request.url.split("?")[0] !== FILE) {
      response.writeHead(404, { "content-length": 0, "x-error-code": "EntryNotFound" }).end();
      return;
    }
    response.writeHead(200, {
      "content-length": GGUF.length,
      etag: `"${createHash("sha256").update(GGUF).digest("hex")}"`,
      "x-repo-commit": "0123456789abcdef0123456789abcdef01234567",
      "content-type": "application/octet-stream",
    });
    response.end(request.method === "HEAD" ? undefined : GGUF);
  });
  await new Promise((resolve) => hub.listen(0, "127.0.0.1", resolve));
  hubUrl = `http://127.0.0.1:${hub.address().port}`;
  cache = mkdtempSync(join(tmpdir(), "ferrule-hub-"));
});
after(() => {
  hub?.close();
  rmSync(cache, { recursive: true, force: true });
});

/** A runtime whose server downloads from the loopback hub into `cache`, Qwen3 not aliased. */
function hubRuntime() {
  const env = { ...process.env, HF_ENDPOINT: hubUrl, HF_HUB_CACHE: cache, FERRULE_MODEL_ALIASES: "" };
  delete env.HF_HUB_OFFLINE;
  return ailoy.startRuntime({ env });
}

test("Local createAgent: LangModel.newLocal reports the bytes downloaded, the file ready, then Initialized", async () => {
  const runtime = await hubRuntime();
  try {
    const progress = [];
    const model = await ailoy.LangModel.newLocal("Qwen/Qwen3-0.6B", { progressCallback: (p) => progress.push(p), runtime });
    const downloads = progress.filter((p) => p.comment === "Downloading Qwen3-0.6B-Q8_0.gguf");
    assert.ok(downloads.length >= 1, JSON.stringify(progress.slice(0, 3)));
    assert.deepEqual(downloads.at(-1), { comment: "Downloading Qwen3-0.6B-Q8_0.gguf", current: GGUF.length, total: GGUF.length });
    assert.deepEqual(downloads.map((p) => p.current), [...downloads.map((p) => p.current)].sort((a, b) => a - b));
    assert.deepEqual(progress.slice(downloads.length), [
      { comment: "Qwen3-0.6B-Q8_0.gguf ready", current: 1, total: 2 },
      { comment: "Initialized", current: 2, total: 2 },
    ]);
    assert.ok(model instanceof ailoy.LangModel);

    // Cached now: no download, the file found and the model loaded.
    const again = [];
    await ailoy.LangModel.newLocal("Qwen/Qwen3-0.6B", { progressCallback: (p) => again.push(p), runtime });
    assert.deepEqual(again, [
      { comment: "Qwen3-0.6B-Q8_0.gguf ready", current: 1, total: 2 },
      { comment: "Initialized", current: 2, total: 2 },
    ]);
  } finally {
    await runtime.stop();
  }
});

test("Local createAgent: a progressCallback that is not a function is refused, naming it", async () => {
  await assert.rejects(ailoy.LangModel.newLocal("Qwen/Qwen3-0.6B", { progressCallback: 42 }), (error) => {
    assert.ok(error instanceof ailoy.InvalidInputError);
    assert.equal(error.field, "progressCallback");
    return true;
  });
});
