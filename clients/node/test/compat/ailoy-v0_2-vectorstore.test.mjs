// Ailoy 0.2 `bindings/nodejs/tests/vectorstore.test.ts`, case by case (named after each
// `test`, under a `describe` per store). bge-m3 is the offline MiniLM here, by alias, at
// bge-m3's 1024 dimensions. The Chroma store is the ferrule-chroma plugin
// (chromadb_vector_store) on a real Chroma server this file starts (chroma_server.py);
// without the plugin installed that suite is skipped, saying so.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";

import * as ailoy from "ferrule";

import { startChroma, useOfflineAliases } from "./support.mjs";

const chroma = await startChroma(); // before the runtime starts: its server inherits the URL

useOfflineAliases();
const model = await ailoy.EmbeddingModel.newLocal("BAAI/bge-m3");

const configs = [
  { name: "Faiss", skip: false, create: () => ailoy.VectorStore.newFaiss(1024) },
  {
    name: "Chroma",
    skip: chroma === null && "the ferrule-chroma plugin is not installed",
    create: () => ailoy.VectorStore.newChroma(process.env.FERRULE_CHROMA_URL, "my_collection"),
  },
];

after(async () => {
  await ailoy.stopDefaultRuntime();
  await chroma?.stop();
});

for (const cfg of configs) {
  describe(`VectorStore: ${cfg.name}`, { skip: cfg.skip }, () => {
    let vs;
    before(async () => {
      vs = await cfg.create();
    });
    beforeEach(async () => {
      await vs.clear();
    });
    after(async () => {
      await vs.clear();
      await vs.delete();
    });

    test("Add & get & remove a single input", async () => {
      const document = "What is your name?";
      const embedding = await model.infer(document);
      const id = await vs.addVector({ embedding, document });
      const got = await vs.getById(id);
      assert.notEqual(got, null);
      assert.equal(got.id, id);
      assert.equal(got.document, document);
      assert.deepEqual(got.embedding, embedding);
      assert.equal(got.metadata, undefined);
      assert.equal(await vs.count(), 1);
      await vs.removeVector(id);
      assert.equal(await vs.count(), 0);
      assert.equal(await vs.getById(id), null);
    });

    test("Add & get & remove multiple inputs", async () => {
      const emb0 = await model.infer("document0");
      const emb1 = await model.infer("document1");
      const ids = await vs.addVectors([
        { embedding: emb0, document: "document0" },
        { embedding: emb1, document: "document1", metadata: { n: 1 } },
      ]);
      assert.equal(ids.length, 2);
      const got = await vs.getByIds(ids);
      assert.equal(got.length, 2);
      assert.deepEqual(
        got.map((g) => [g.id, g.document]),
        [
          [ids[0], "document0"],
          [ids[1], "document1"],
        ],
      );
      assert.deepEqual(got[0].embedding, emb0);
      assert.deepEqual(got[1].embedding, emb1);
      assert.deepEqual(got[1].metadata, { n: 1 });
      assert.equal(await vs.count(), 2);
      await vs.removeVectors(ids);
      assert.equal(await vs.count(), 0);
    });

    test("Retrieve results for a single query", async () => {
      const doc0 = "Ailoy is an awesome library";
      const doc1 = "Langchain is a library";
      const ids = await vs.addVectors([
        { embedding: await model.infer(doc0), document: doc0 },
        { embedding: await model.infer(doc1), document: doc1 },
      ]);
      const results = await vs.retrieve(await model.infer("What is Ailoy?"), 2);
      assert.equal(results.length, 2);
      // The query is about Ailoy, so the nearest item is the first input.
      assert.equal(results[0].id, ids[0]);
      assert.equal(results[1].id, ids[1]);
      assert.equal(results[0].document, doc0);
      assert.ok(results[0].distance < results[1].distance);
    });

    test("Retrieve batch results for multiple queries", async () => {
      const doc0 = "BGE M3 is an embedding model supporting dense retrieval, lexical matching and multi-vector interaction.";
      const doc1 = "BM25 is a bag-of-words retrieval function that ranks a set of documents based on the query terms appearing in each document";
      const ids = await vs.addVectors([
        { embedding: await model.infer(doc0), document: doc0 },
        { embedding: await model.infer(doc1), document: doc1 },
      ]);
      const results = await vs.batchRetrieve([await model.infer("What is BGE-M3?"), await model.infer("Defination of BM25")], 2);
      assert.equal(results.length, 2);
      assert.equal(results[0].length, 2);
      assert.equal(results[0][0].id, ids[0]);
      assert.ok(results[0][0].distance < results[0][1].distance);
      assert.equal(results[1].length, 2);
      assert.equal(results[1][0].id, ids[1]);
      assert.ok(results[1][0].distance < results[1][1].distance);
    });
  });
}

// Ailoy's files make one EmbeddingModel per test file, or per model config (agent.test.ts's
// Using Knowledge, four at once): models of one id on one runtime share one embedder
// component, and the last delete() removes it.
test("EmbeddingModel.newLocal: one embedder per model id, deleted with its last model", async () => {
  const [first, second] = await Promise.all([ailoy.EmbeddingModel.newLocal("BAAI/bge-m3"), ailoy.EmbeddingModel.newLocal("BAAI/bge-m3")]);
  assert.equal(first.component, model.component);
  assert.equal(second.component, model.component);
  assert.equal(first.dimension, 1024);
  await first.delete();
  await first.delete(); // idempotent: it lets go once
  assert.equal((await second.infer("still here")).length, 1024);
  await second.delete();
  assert.equal((await model.infer("and here")).length, 1024);
  await model.delete(); // the last one: the component goes
  await assert.rejects(ailoy.defaultRuntime().callMethod(model.component, "embed", { texts: ["x"] }), ailoy.UnknownComponentError);
  const fresh = await ailoy.EmbeddingModel.newLocal("BAAI/bge-m3");
  assert.notEqual(fresh.component, model.component);
  assert.equal((await fresh.infer("a new one")).length, 1024);
  await fresh.delete();
});
