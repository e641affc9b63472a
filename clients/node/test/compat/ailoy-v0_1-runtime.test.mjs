// Ailoy 0.1 `bindings/js-node/tests/runtime.spec.ts`, case by case (named after each `it`),
// on `new Runtime()`: a `ferrule serve` of its own. Ailoy's component types are ferrule's
// aliases (tvm_language_model); its vector store and embedding cases use the Node
// client's VectorStore / EmbeddingModel (ferrule's stores speak the vector-store contract,
// not Ailoy 0.1's insert_many / get_by_id / retrieve methods).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { EmbeddingModel, Runtime, UnknownComponentError, VectorStore } from "ferrule";

import { startChroma, startLoopback, TEST_KEY, useOfflineAliases } from "./support.mjs";

let rt;
let loopback;
let chroma;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback();
  chroma = await startChroma(); // before the runtime starts: its server inherits the URL
  rt = new Runtime();
  await rt.start();
});
after(async () => {
  await rt?.stop();
  await loopback?.stop();
  await chroma?.stop();
});

const randomVector = (n) => new Float32Array(Array.from({ length: n }, () => Math.random()));

describe("Runtime (Ailoy 0.1 runtime.spec.ts)", () => {
  test("run-echo", async () => {
    // Ailoy's own lifecycle: a runtime of its own, started and stopped by the test.
    const own = new Runtime();
    assert.equal(own.url, "(not started)");
    await own.start();
    assert.match(own.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const resp = await own.call("echo", { text: "hello world" });
    assert.equal(resp.text, "hello world");
    await own.stop();
    await assert.rejects(own.call("echo", { text: "x" }), /stopped/);
  });

  test("run-spell", async () => {
    const sentence = "abcdefghijk";
    let i = 0;
    for await (const resp of rt.callIter("spell", { text: sentence })) {
      assert.equal(resp.text, sentence[i]);
      i++;
    }
    assert.equal(i, sentence.length);
  });

  test("run-multiple", async () => {
    const sentence = "artificial intelligence";
    const prom1 = rt.callIter("spell", { text: sentence });
    const prom2 = rt.callIter("spell", { text: sentence.toUpperCase() });
    let one = "";
    let two = "";
    let done1 = false;
    let done2 = false;
    while (!done1 || !done2) {
      if (!done1) {
        const r = await prom1.next();
        if (r.done) done1 = true;
        else one += r.value.text;
      }
      if (!done2) {
        const r = await prom2.next();
        if (r.done) done2 = true;
        else two += r.value.text;
      }
    }
    assert.equal(one, sentence);
    assert.equal(two.toLowerCase(), sentence);
  });

  test("run-embedding-model", async () => {
    // Ailoy: tvm_embedding_model "em0" infers a [1024] BGE-M3 vector; here bge-m3 is the
    // offline MiniLM by alias, keeping bge-m3's 1024 dimensions (MiniLM's 384, then zeros).
    const model = await EmbeddingModel.newLocal("BAAI/bge-m3", { runtime: rt });
    const embedding = await model.infer("What is BGE-M3?");
    assert.ok(embedding instanceof Float32Array);
    assert.deepEqual([embedding.length, model.dimension], [1024, 1024]);
    const norm = Math.hypot(...embedding);
    assert.ok(norm > 0.5, `a real embedding, norm ${norm}`);
    // similar texts are nearer than unrelated ones
    const [same, other] = await model.inferMany(["What is BGE M3?", "Bananas are yellow."]);
    const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
    assert.ok(dot(embedding, same) > dot(embedding, other));
  });

  /** Ailoy's vector store case: insert two, get one, retrieve both nearest first, remove, clear. */
  const vectorStoreCase = async (vs, cosine) => {
    const inputs = [
      { embedding: randomVector(10), document: "doc1", metadata: { value: 1 } },
      { embedding: randomVector(10), document: "doc2", metadata: null },
    ];
    const ids = await vs.addVectors(inputs);
    assert.equal(ids.length, 2);
    const got = await vs.getById(ids[0]);
    assert.equal(got.id, ids[0]);
    assert.equal(got.document, "doc1");
    assert.deepEqual(got.metadata, { value: 1 });
    const results = await vs.retrieve(inputs[0].embedding, 2);
    assert.equal(results.length, 2);
    for (const [i, result] of results.entries()) {
      assert.equal(result.id, ids[i]);
      assert.equal(result.document, inputs[i].document);
      assert.deepEqual(result.metadata, inputs[i].metadata ?? undefined);
      assert.ok(result.distance >= results[0].distance); // nearest first
      if (cosine) {
        const similarity = 1 - result.distance;
        assert.ok(similarity >= -1e-6 && similarity <= 1 + 1e-6, `similarity ${similarity}`);
      }
    }
    assert.ok(Math.abs(results[0].distance) < 1e-5, "the query's own vector is at distance 0");
    await vs.removeVector(ids[0]);
    assert.equal(await vs.getById(ids[0]), null);
    assert.equal(await vs.count(), 1);
    await vs.clear();
    assert.equal(await vs.count(), 0);
    await vs.delete();
    await assert.rejects(vs.count(), UnknownComponentError);
  };

  test("run-faiss-vector-store", async () => {
    assert.equal(await rt.define("faiss_vector_store", "vs0", { dimension: 10 }), true);
    assert.equal(await rt.delete("vs0"), true);
    await vectorStoreCase(await VectorStore.newFaiss(10, { runtime: rt }), true);
  });

  test("run-chromadb-vector-store", async (t) => {
    if (chroma === null) return t.skip("the ferrule-chroma plugin is not installed");
    assert.equal(await rt.define("chromadb_vector_store", "vs0", { collection: "ailoy_vs0" }), true);
    assert.equal(await rt.delete("vs0"), true);
    await vectorStoreCase(await VectorStore.newChroma(chroma.url, "ailoy_vs0", { runtime: rt }), false); // L2
  });

  test("run-split-text", async () => {
    const text = `
  Madam Speaker, Madam Vice President, our First Lady and Second Gentleman. Members of Congress and the Cabinet. Justices of the Supreme Court. My fellow Americans.

  Last year COVID-19 kept us apart. This year we are finally together again.

  Tonight, we meet as Democrats Republicans and Independents. But most importantly as Americans.
      `;
    const resp = await rt.call("split_text", { text, chunk_size: 500, chunk_overlap: 200 });
    assert.ok(resp.chunks.length >= 1);
    for (const chunk of resp.chunks) assert.ok(chunk.length < 500);
    assert.ok(resp.chunks.join(" ").includes("Tonight, we meet as Democrats"));
  });

  test("run-language-model", async () => {
    const named = new Runtime("inproc://language_model"); // Ailoy's spelling: a server of its own
    try {
      assert.equal(await named.define("tvm_language_model", "lm0", { model: "Qwen/Qwen3-0.6B" }), true);
      let text = "";
      let finish;
      for await (const resp of named.callIterMethod("lm0", "infer", {
        messages: [{ role: "user", content: [{ type: "text", text: "Who is the president of US in 2021?" }] }],
        tools: [],
        max_tokens: 24,
      })) {
        assert.ok("message" in resp);
        if (resp.finish_reason) finish = resp.finish_reason;
        else assert.ok("content" in resp.message);
        for (const part of resp.message.content ?? []) text += part.text ?? "";
      }
      assert.ok(["stop", "length"].includes(finish), finish);
      assert.ok(text.trim().length > 0, "the offline model answered");
    } finally {
      await named.stop();
    }
  });

  test("run-http-request", async () => {
    const rates = { amount: 1.0, base: "USD", date: "2026-11-26", rates: { KRW: 1391.5 } };
    await loopback.script({ json: rates });
    const resp = await rt.call("http_request", {
      url: `${loopback.url}/v1/latest?base=USD&symbols=KRW`,
      method: "GET",
      headers: {},
    });
    // Ailoy names it status_code; ferrule's http_request answers `status`.
    assert.equal(resp.status, 200);
    const contentType = Object.entries(resp.headers).find(([k]) => k.toLowerCase() === "content-type")[1];
    assert.ok(contentType.startsWith("application/json"));
    const body = JSON.parse(resp.body);
    assert.equal(body.amount, 1.0);
    assert.equal(body.base, "USD");
    assert.ok("KRW" in body.rates);
    const seen = (await loopback.requests()).at(-1);
    assert.deepEqual(seen.query, { base: "USD", symbols: "KRW" });
  });

  test("run-openai-infer", async () => {
    // Ailoy's component type "openai" is ferrule's openai_language_model.
    await loopback.script({ dialect: "openai", text: "Joe Biden" });
    assert.equal(await rt.define("openai_language_model", "oai", { api_key: TEST_KEY, model: "gpt-4o" }), true);
    let text = "";
    let finish;
    let role;
    for await (const resp of rt.callIterMethod("oai", "infer", {
      messages: [{ role: "user", content: [{ type: "text", text: "Who is the president of US in 2021? Just answer in two words." }] }],
    })) {
      role = resp.message.role ?? role;
      finish = resp.finish_reason ?? finish;
      for (const part of resp.message.content ?? []) text += part.text ?? "";
    }
    assert.equal(finish, "stop");
    assert.equal(role ?? "assistant", "assistant");
    assert.ok(text.includes("Joe Biden"));
    const sent = (await loopback.requests()).at(-1);
    assert.equal(sent.path, "/v1/chat/completions");
    assert.equal(sent.body.model, "gpt-4o");
    await rt.delete("oai");
  });
});

