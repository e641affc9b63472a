// Ailoy 0.1 `bindings/js-node/tests/runtime.spec.ts`, case by case (named after each `it`),
// on `new Runtime()`: a `ferrule serve` of its own, through Ailoy's raw component protocol.
// Ailoy's component types and methods run on ferrule's components: tvm_language_model
// (llama.cpp, the offline SmolLM2 by alias), and ferrule-ailoy's tvm_embedding_model (over
// MiniLM, at bge-m3's width), faiss_vector_store and chromadb_vector_store (their
// insert_many / get_by_id / retrieve / remove / clear, over ferrule's FAISS store and a real
// Chroma server) and "openai" API-model type (one item, content a string); http_request's
// status_code.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { InvalidInputError, NDArray, Runtime, UnknownComponentError } from "ferrule";

import { startChroma, startLoopback, TEST_KEY, useOfflineAliases } from "./support.mjs";

let rt;
let loopback;
let chroma;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback();
  chroma = await startChroma(); // before the runtime starts: its server inherits the URL
  // the Chroma url the case sends crosses the network: the host allows localhost for it
  process.env.FERRULE_HTTP_REQUEST_ALLOW = "127.0.0.1,localhost";
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
    // Ailoy: tvm_embedding_model (BGE-M3) infers an NDArray of shape [1024]. Here BAAI/bge-m3
    // is the offline MiniLM by alias, at bge-m3's width: MiniLM's 384 values, then zeros.
    assert.equal(await rt.define("tvm_embedding_model", "em0", {}), true);
    const resp = await rt.callMethod("em0", "infer", { prompt: "What is BGE-M3?" });
    const arr = resp.embedding;
    assert.ok(arr instanceof NDArray);
    assert.deepEqual(arr.getShape(), [1024]);
    assert.equal(arr.getDtype(), "float32");
    const embedding = Array.from(arr.getData());
    assert.ok(embedding.slice(0, 384).some((x) => x !== 0) && embedding.slice(384).every((x) => x === 0));
    assert.ok(Math.abs(Math.hypot(...embedding) - 1) < 1e-5, "a unit vector");
    const near = (await rt.callMethod("em0", "infer", { prompt: "What is BGE M3?" })).embedding.getData();
    const far = (await rt.callMethod("em0", "infer", { prompt: "Bananas are yellow." })).embedding.getData();
    const dot = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
    assert.ok(dot(embedding, near) > dot(embedding, far));
    // sent back (Ailoy's VectorStore inserts what the model gave), an NDArray is its values
    assert.equal(await rt.define("faiss_vector_store", "vs_em", { dimension: 1024 }), true);
    const { ids } = await rt.callMethod("vs_em", "insert_many", [{ embedding: arr, document: "bge", metadata: null }]);
    const found = await rt.callMethod("vs_em", "retrieve", { query_embedding: arr, top_k: 1 });
    assert.deepEqual(found.results.map((r) => [r.id, r.document]), [[ids[0], "bge"]]);
    await rt.delete("vs_em");
    await rt.delete("em0");
  });

  test("NDArray: Ailoy 0.1's typed array with a shape, checked", () => {
    const arr = new NDArray({ shape: [2, 2], dtype: "int32", data: Int32Array.from([1, 2, 3, 4]) });
    assert.deepEqual([arr.getShape(), arr.getDtype(), Array.from(arr.getData())], [[2, 2], "int32", [1, 2, 3, 4]]);
    assert.equal(JSON.stringify({ a: arr }), '{"a":[1,2,3,4]}');
    const refused = (arg, field) =>
      assert.throws(() => new NDArray(arg), (e) => e instanceof InvalidInputError && e.field === field);
    refused({ shape: [3], dtype: "int32", data: Int32Array.from([1, 2]) }, "data");
    refused({ shape: [2], dtype: "float32", data: Int32Array.from([1, 2]) }, "data");
    refused({ shape: [2], dtype: "float16", data: Int32Array.from([1, 2]) }, "dtype");
    refused({ shape: [-1], dtype: "int32", data: Int32Array.from([]) }, "shape");
  });

  /** Ailoy's vector-store case on component vs0, by Ailoy's own methods. */
  const vectorStoreCase = async () => {
    const insertInputs = [
      { embedding: randomVector(10), document: "doc1", metadata: { value: 1 } },
      { embedding: randomVector(10), document: "doc2", metadata: null },
    ];
    const resp1 = await rt.callMethod("vs0", "insert_many", insertInputs); // a bare list, Float32Arrays
    assert.ok("ids" in resp1);
    const vectorIds = resp1.ids;

    const resp2 = await rt.callMethod("vs0", "get_by_id", { id: vectorIds[0] });
    assert.equal(resp2.id, vectorIds[0]);
    assert.equal(resp2.document, insertInputs[0].document);
    assert.deepEqual(resp2.metadata, insertInputs[0].metadata);

    const resp3 = await rt.callMethod("vs0", "retrieve", { query_embedding: insertInputs[0].embedding, top_k: 2 });
    assert.equal(resp3.results.length, 2);
    for (const [i, result] of resp3.results.entries()) {
      assert.equal(result.id, vectorIds[i]);
      assert.equal(result.document, insertInputs[i].document);
      assert.deepEqual(result.metadata, insertInputs[i].metadata);
      assert.ok(result.similarity <= resp3.results[0].similarity); // nearest first
      const similarity = Number(result.similarity.toFixed(6));
      assert.ok(similarity >= 0 && similarity <= 1, `similarity ${similarity}`);
    }

    assert.equal(await rt.callMethod("vs0", "remove", { id: vectorIds[0] }), true);
    assert.equal(await rt.callMethod("vs0", "get_by_id", { id: vectorIds[0] }), null);
    assert.equal(await rt.callMethod("vs0", "clear", null), true);
    assert.equal((await rt.callMethod("vs0/store", "count", {})).count, 0); // the ferrule store it defined
    assert.equal(await rt.delete("vs0"), true);
    await assert.rejects(rt.callMethod("vs0", "count", {}), UnknownComponentError);
    await assert.rejects(rt.callMethod("vs0/store", "count", {}), UnknownComponentError); // deleted with it
  };

  test("run-faiss-vector-store", async () => {
    assert.equal(await rt.define("faiss_vector_store", "vs0", { dimension: 10 }), true);
    await vectorStoreCase();
  });

  test("run-chromadb-vector-store", async (t) => {
    if (chroma === null) return t.skip("the ferrule-chroma plugin is not installed");
    // Ailoy's case names http://localhost:8000; this server listens on a free port. The url
    // crosses the network to ferrule serve, so it must pass the address policy of
    // http_request: FERRULE_HTTP_REQUEST_ALLOW=localhost (set before the server started).
    const url = chroma.url.replace("127.0.0.1", "localhost");
    assert.equal(await rt.define("chromadb_vector_store", "vs0", { url }), true);
    await vectorStoreCase();
    // a url the host does not allow is refused, naming the field
    const refused = await rt.define("chromadb_vector_store", "vs1", { url: "http://10.0.0.1:8000" }).catch((error) => error);
    assert.ok(refused instanceof InvalidInputError, String(refused));
    assert.match(refused.message, /FERRULE_HTTP_REQUEST_ALLOW/);
    assert.deepEqual(refused.errors.map((e) => e.path), ["$.url"]);
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
    const named = new Runtime("inproc://language_model"); // Ailoy's spelling: the name's own server
    try {
      await named.start();
      assert.equal(await named.define("tvm_language_model", "lm0", { model: "Qwen/Qwen3-0.6B" }), true);
      let text = "";
      let last;
      for await (const resp of named.callIterMethod("lm0", "infer", {
        messages: [{ role: "user", content: [{ type: "text", text: "Who is the president of US in 2021?" }] }],
        tools: [],
      })) {
        assert.ok("message" in resp);
        if (resp.finish_reason) assert.equal(resp.finish_reason, "stop");
        else assert.ok("content" in resp.message);
        for (const part of resp.message.content ?? []) text += part.text ?? "";
        last = resp;
      }
      assert.equal(last.finish_reason, "stop");
      assert.ok(text.trim().length > 0, "the offline model answered");
    } finally {
      await named.stop();
    }
  });

  test("run-http-request", async () => {
    // Ailoy asks api.frankfurter.dev; the same request goes to a loopback server here.
    const rates = { amount: 1.0, base: "USD", date: "2026-11-26", rates: { KRW: 1391.5 } };
    await loopback.script({ json: rates });
    const resp = await rt.call("http_request", {
      url: `${loopback.url}/v1/latest?base=USD&symbols=KRW`,
      method: "GET",
      headers: {},
    });
    assert.equal(resp.status_code, 200);
    assert.equal(typeof resp.headers["Content-Type"], "string");
    assert.ok(resp.headers["Content-Type"].startsWith("application/json"));
    const body = JSON.parse(resp.body);
    assert.equal(body.amount, 1.0);
    assert.equal(body.base, "USD");
    assert.ok("KRW" in body.rates);
    const seen = (await loopback.requests()).at(-1);
    assert.deepEqual(seen.query, { base: "USD", symbols: "KRW" });
  });

  test("run-openai-infer", async () => {
    // Ailoy's own calls: the "openai" type (ferrule_kit.ailoy_models over ferrule-openai's
    // model), on a runtime of its own; OPENAI_BASE_URL points it at the loopback server.
    await loopback.script({ dialect: "openai", text: "Joe Biden." });
    const own = new Runtime("inproc://openai");
    await own.start();
    assert.equal(await own.define("openai", "oai", { api_key: TEST_KEY, model: "gpt-4o" }), true);
    const items = [];
    for await (const resp of own.callIterMethod("oai", "infer", {
      messages: [{ role: "user", content: "Who is the president of US in 2021? Just answer in two words." }],
    })) {
      items.push(resp);
      assert.equal(resp.finish_reason, "stop");
      assert.equal(resp.message.role, "assistant");
      assert.equal(typeof resp.message.content, "string"); // chai's `contain` on it: a substring
      assert.ok(resp.message.content.includes("Joe Biden"));
    }
    assert.equal(items.length, 1); // not streamed: the whole reply, once
    const sent = (await loopback.requests()).at(-1);
    assert.equal(sent.path, "/v1/chat/completions");
    assert.equal(sent.body.model, "gpt-4o");
    assert.equal(sent.headers.authorization, `Bearer ${TEST_KEY}`);
    await own.stop();
  });

  test("run-openai-infer: a tool call, and Ailoy's required fields", async () => {
    const call = { id: "call_1", name: "get_weather", arguments: { city: "Seoul" } };
    await loopback.script({ dialect: "openai", tool_calls: [call] });
    await rt.define("openai", "oai-tools", { api_key: TEST_KEY, model: "gpt-4o" });
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather in a city.",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ];
    const items = [];
    for await (const resp of rt.callIterMethod("oai-tools", "infer", { messages: [{ role: "user", content: "Weather in Seoul?" }], tools })) {
      items.push(resp);
    }
    assert.equal(items.length, 1);
    assert.equal(items[0].finish_reason, "tool_calls");
    assert.equal(items[0].message.content, undefined);
    assert.deepEqual(items[0].message.tool_calls, [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: { city: "Seoul" } } }]);
    await assert.rejects(rt.define("openai", "no-key", { model: "gpt-4o" }), (err) => err instanceof InvalidInputError && /api_key/.test(err.message));
    await assert.rejects(
      (async () => {
        for await (const _ of rt.callIterMethod("oai-tools", "infer", {})) void _;
      })(),
      (err) => err instanceof InvalidInputError && /messages/.test(err.message),
    );
    await rt.delete("oai-tools");
  });
});

