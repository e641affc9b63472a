// Every export of ailoy-node 0.1.0's and 0.2.5's index is one of this client's, and the
// ones added for that behave as Ailoy documents them: 0.1's content classes, model
// classes and id lists, tool definitions (builtin, REST API with bearerAutenticator,
// outputPath), `{desc, call}` tools, getAvailableTools, defineVectorStore and its
// VectorStore (Ailoy's raw components through ferrule-ailoy), generateUUID, named
// runtimes sharing one server (startThreads / stopThreads), BrokerClient refused; 0.2's
// iterator classes and LangModelInferConfig.
import assert from "node:assert/strict";
import { inspect } from "node:util";
import { after, before, describe, test } from "node:test";

import * as ferrule from "ferrule";
import {
  APIModel,
  AudioContent,
  BrokerClient,
  ImageContent,
  InvalidInputError,
  LocalModel,
  MessageDeltaOutputIterator,
  MessageOutputIterator,
  NDArray,
  Runtime,
  TextContent,
  UnknownComponentError,
  VectorStore,
  bearerAutenticator,
  defineAgent,
  defineVectorStore,
  generateUUID,
  startThreads,
  stopThreads,
} from "ferrule";
import { Agent, LangModel } from "ferrule";

import { collect, startChroma, startLoopback, useOfflineAliases } from "./support.mjs";

const field = (name) => (error) => error instanceof InvalidInputError && error.field === name;

/** Ailoy's index exports (ailoy-node 0.1.0 and 0.2.5): the values; their types are checked by tsc (test/types). */
const AILOY_VALUES = {
  "0.1.0": [
    "Agent", "AudioContent", "BrokerClient", "ImageContent", "NDArray", "Runtime", "TextContent", "VectorStore",
    "APIModel", "LocalModel", "_APIModel", "_LocalModel", "bearerAutenticator", "defineAgent", "defineVectorStore",
    "generateUUID", "startRuntime", "startThreads", "stopThreads",
    "claudeModelIds", "geminiModelIds", "grokModelIds", "openAIModelIds",
  ],
  "0.2.5": [
    "Agent", "EmbeddingModel", "Knowledge", "LangModel", "MCPClient", "MessageDeltaOutputIterator",
    "MessageOutputIterator", "Tool", "VectorStore", "accumulateMessageDelta", "finishMessageDelta",
    "getDocumentPolyfill", "imageFromBase64", "imageFromBytes", "imageFromUrl",
  ],
};

let rt;
let loopback;
let chroma;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback(); // also lets http_request reach 127.0.0.1
  chroma = await startChroma();
  rt = new Runtime();
  await rt.start();
});
after(async () => {
  await rt?.stop();
  await loopback?.stop();
  await chroma?.stop();
});

describe("Ailoy's exports", () => {
  test("every value Ailoy's index exports is one of ours", () => {
    for (const [tag, names] of Object.entries(AILOY_VALUES)) {
      const missing = names.filter((name) => ferrule[name] === undefined);
      assert.deepEqual(missing, [], `ailoy-node ${tag}`);
    }
  });

  test("0.1's content classes build the wire's parts", () => {
    const text = new TextContent("text", "Hello");
    assert.equal(JSON.stringify(text), '{"type":"text","text":"Hello"}');
    const image = new ImageContent("image_url", { url: "https://example.org/a.png" });
    assert.ok(ImageContent.fromUrl("https://example.org/a.png") instanceof ImageContent);
    assert.deepEqual({ ...image }, { type: "image_url", image_url: { url: "https://example.org/a.png" } });
    const audio = new AudioContent("input_audio", { data: "UklGRg==", format: "WAV" });
    assert.deepEqual({ ...audio }, { type: "input_audio", input_audio: { data: "UklGRg==", format: "wav" } });
    assert.throws(() => new TextContent("image_url", "x"), field("type"));
    assert.throws(() => new ImageContent("image_url", {}), field("image_url.url"));
    assert.throws(() => new AudioContent("input_audio", { data: "x" }), field("input_audio.format"));
  });

  test("0.1's model classes: the provider from its id lists, Ailoy's attributes, the key never shown", () => {
    assert.ok(ferrule.openAIModelIds.includes("gpt-4o") && ferrule.claudeModelIds.includes("claude-sonnet-4-20250514"));
    assert.ok(ferrule.geminiModelIds.includes("gemini-2.5-flash") && ferrule.grokModelIds.includes("grok-4"));
    const claude = APIModel({ id: "claude-sonnet-4-20250514", apiKey: "sk-SECRET-1234567890" });
    assert.ok(claude instanceof ferrule._APIModel && claude instanceof ferrule.ModelSpec);
    assert.equal(claude.provider, "claude");
    assert.equal(claude.componentType, "claude");
    assert.deepEqual(claude.toAttrs(), { model: "claude-sonnet-4-20250514", api_key: "sk-SECRET-1234567890" });
    assert.equal(claude.apiKey, "sk-SECRET-1234567890");
    for (const shown of [String(claude), JSON.stringify(claude), inspect(claude)]) assert.ok(!shown.includes("SECRET"), shown);
    const custom = APIModel({ id: "my-model", provider: "openai" });
    assert.equal(custom.componentType, "openai");
    assert.throws(() => APIModel({}), field("id"));

    const local = LocalModel({ id: "Qwen/Qwen3-0.6B" });
    assert.ok(local instanceof ferrule._LocalModel && local.local);
    assert.equal(local.componentType, "tvm_language_model");
    assert.deepEqual(local.toAttrs(), { model: "Qwen/Qwen3-0.6B", quantization: "q4f16_1", device: 0 });
    assert.match(local.defaultSystemMessage(), /Qwen/);
    assert.equal(LocalModel().defaultSystemMessage(), undefined);
    assert.throws(() => LocalModel({ device: 1 }), field("device"));
    assert.throws(() => LocalModel({ backend: "mlc" }), field("backend"));
    assert.throws(() => LocalModel({ quantization: "q8" }), field("quantization"));
  });

  test("generateUUID gives version-4 UUIDs; BrokerClient is refused, saying what to use", () => {
    const ids = new Set(Array.from({ length: 5 }, () => generateUUID()));
    assert.equal(ids.size, 5);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.throws(() => new BrokerClient("inproc://"), (e) => field("url")(e) && /new Runtime/.test(e.message));
  });

  test("runtimes of one inproc name share one server, which stops with the last (startThreads / stopThreads)", async () => {
    await startThreads("inproc://shared-test");
    const one = new Runtime("inproc://shared-test");
    const two = new Runtime("inproc://shared-test");
    await one.start();
    await two.start();
    assert.equal(one.url, two.url);
    await one.define("faiss_store", "kb", { dimension: 2 });
    assert.equal((await two.callMethod("kb", "count", {})).count, 0); // one server: one kernel
    await one.stop(); // its components go; the server stays for `two` and startThreads
    await assert.rejects(two.callMethod("kb", "count", {}), UnknownComponentError);
    const url = two.url;
    await two.stop();
    assert.equal((await fetch(`${url}/health`)).status, 200); // still up: startThreads holds it
    await stopThreads("inproc://shared-test");
    await assert.rejects(fetch(`${url}/health`)); // stopped with the last user
    await assert.rejects(startThreads("http://127.0.0.1:1"), field("url"));
  });
});

describe("0.1's tools: definitions, {desc, call}, getAvailableTools", () => {
  const context = () => ({ runtime: rt, signal: new AbortController().signal, toolCallId: "call_1" });

  test("a builtin tool calls the operator its description names; outputPath picks from the output", async () => {
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    const description = {
      name: "calculator",
      description: "Evaluate an expression.",
      parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
    };
    assert.equal(agent.addBuiltinTool({ type: "builtin", description, behavior: { outputPath: "value" } }), true);
    const tool = agent.tools.find((t) => t.name === "calculator");
    assert.equal(await tool.run({ expression: "2 + 3 * 4" }, context()), 14);
    await assert.rejects(tool.run({}, context()), /needs expression/);
    assert.deepEqual(agent.getAvailableTools(), [description]);
    await agent.delete();
  });

  test("a REST API tool fills ${name}, sends the rest as the query, through http_request, with the authenticator", async () => {
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    await loopback.clear();
    await loopback.script({ json: { rates: { KRW: 1391.5 }, base: "USD" } });
    const definition = {
      type: "restapi",
      description: {
        name: "rates",
        description: "Exchange rates.",
        parameters: { type: "object", properties: { base: { type: "string" }, symbols: { type: "string" } }, required: ["base"] },
      },
      behavior: { baseURL: `${loopback.url}/v1/\${base}`, method: "GET", headers: { accept: "application/json" }, outputPath: "rates.KRW" },
    };
    assert.equal(agent.addRESTAPITool(definition, bearerAutenticator("tok-123")), true);
    const tool = agent.tools.find((t) => t.name === "rates");
    assert.equal(await tool.run({ base: "USD", symbols: "KRW" }, context()), 1391.5);
    const [sent] = await loopback.requests();
    assert.equal(sent.path, "/v1/USD");
    assert.deepEqual(sent.query, { symbols: "KRW" });
    assert.equal(sent.headers.authorization, "Bearer tok-123");
    assert.throws(() => bearerAutenticator(""), field("token"));
    // a preset file's content, with its authenticator
    assert.equal(agent.addToolsFromPreset({ other: { ...definition, description: { ...definition.description, name: "other" } } }, {}), true);
    assert.throws(() => agent.addToolsFromPreset({ bad: { type: "shell" } }), field("bad.type"));
    assert.throws(() => agent.addToolsFromPreset("calculator", { authenticator: bearerAutenticator("x") }), field("authenticator"));
    await agent.delete();
  });

  test("Ailoy 0.1's {desc, call} tools run, and a second of one name is refused", async () => {
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    const desc = { name: "double", description: "Twice a number.", parameters: { type: "object", properties: { n: { type: "number" } } } };
    assert.equal(agent.addTool({ desc, call: async ({ n }) => n * 2 }), true);
    assert.equal(await agent.tools[0].run({ n: 21 }, context()), 42);
    assert.throws(() => agent.addTool({ desc, call: () => 0 }), InvalidInputError);
    await agent.delete();
  });
});

describe("0.1's defineVectorStore (Ailoy's raw components, through ferrule-ailoy)", () => {
  const documents = [
    { document: "BGE M3 is an embedding model supporting dense, sparse and multi-vector retrieval.", metadata: { topic: "bge" } },
    { document: "Bananas are yellow fruits that grow in bunches.", metadata: null },
  ];

  const ragCase = async (store) => {
    for (const item of documents) await store.insert(item);
    const found = await store.retrieve("What is BGE M3?", 2);
    assert.deepEqual(found.map((r) => r.document), documents.map((d) => d.document));
    assert.deepEqual(found[0].metadata, { topic: "bge" });
    assert.equal(found[1].metadata, null);
    assert.ok(found[0].similarity > found[1].similarity);
    assert.equal((await store.retrieve("yellow fruit")).length, 2); // topK defaults to 5
    const embedding = await store.embedding("hello");
    assert.ok(embedding instanceof NDArray);
    assert.deepEqual(embedding.getShape(), [1024]); // bge-m3's width, MiniLM by alias
    await store.clear();
    assert.deepEqual(await store.retrieve("What is BGE M3?"), []);
    // the other API's methods are refused, saying which to use
    await assert.rejects(store.addVector({ embedding: [1], document: "x" }), field("addVectors"));
    await assert.rejects(store.retrieve([0.1, 0.2]), field("query"));
    const component = store.component;
    await store.delete();
    await store.delete(); // a no-op once deleted, as Ailoy's
    await assert.rejects(rt.callMethod(component, "clear", null), UnknownComponentError);
  };

  test("faiss", async () => {
    await ragCase(await defineVectorStore(rt, "BAAI/bge-m3", "faiss"));
  });

  test("chromadb", async (t) => {
    if (chroma === null) return t.skip("the ferrule-chroma plugin is not installed");
    const url = chroma.url.replace("127.0.0.1", "localhost");
    await ragCase(await defineVectorStore(rt, "BAAI/bge-m3", "chromadb", { url, collection: "define_vector_store" }));
  });

  test("new VectorStore(runtime) then define; what is refused", async () => {
    const store = new VectorStore(rt);
    assert.equal(store.api, "0.1");
    await assert.rejects(store.insert({ document: "x" }), /not defined yet/);
    await assert.rejects(store.define("BAAI/bge-m4", {}, "faiss", {}), field("embeddingModelName"));
    await assert.rejects(store.define("BAAI/bge-m3", {}, "qdrant", {}), field("vectorStoreName"));
    await assert.rejects(defineVectorStore(rt, "BAAI/bge-m3", "faiss", { device: 1 }), (e) => e instanceof InvalidInputError && /device/.test(e.message));
    await store.define("BAAI/bge-m3", {}, "faiss", {});
    await store.define("BAAI/bge-m3", {}, "faiss", {}); // a no-op once defined
    await store.insert({ document: "one" });
    assert.equal((await store.retrieve("one", 1))[0].document, "one");
    await store.delete();
    // a 0.2 store refuses 0.1's methods, and Knowledge takes only a 0.2 store
    const faiss = await VectorStore.newFaiss(4, { runtime: rt });
    assert.equal(faiss.api, "0.2");
    await assert.rejects(faiss.insert({ document: "x" }), field("insert"));
    await assert.rejects(faiss.retrieve("a text", 1), field("queryEmbedding"));
    assert.throws(() => ferrule.Knowledge.newVectorStore(store, {}), field("store"));
    await faiss.delete();
  });
});

describe("0.2's iterators and inference settings", () => {
  test("run and runDelta return Ailoy's iterator classes; unknown or unsupported settings are refused", async () => {
    const lm = await LangModel.newLocal("test", { runtime: rt });
    const agent = new Agent(lm);
    const outputs = agent.run("Hello there", { inference: { temperature: 0.2, maxTokens: 16, topP: 0.9 } });
    assert.ok(outputs instanceof MessageOutputIterator);
    const [first] = await collect(outputs);
    assert.equal(first.finish_reason.type, "stop");
    const deltas = agent.runDelta("Hello again");
    assert.ok(deltas instanceof MessageDeltaOutputIterator);
    assert.ok((await deltas.next()).value.delta.role === "assistant");
    await deltas.return();
    await assert.rejects(collect(agent.run("x", { inference: { grammar: { type: "regex", regex: "a+" } } })), field("inference.grammar"));
    await assert.rejects(collect(agent.run("x", { inference: { seed: 1 } })), field("inference.seed"));
    await assert.rejects(
      collect(agent.run("x", { inference: { grammar: { type: "jsonschema", schema: "{not json" } } })),
      field("inference.grammar.schema"),
    );
    await assert.rejects(LangModel.newLocal("test", { runtime: rt, deviceId: 1 }), field("deviceId"));
    await assert.rejects(LangModel.newLocal("test", { runtime: rt, validateChecksum: true }), field("validateChecksum"));
    await assert.rejects(LangModel.newLocal("test", { runtime: rt, kvCache: { slidingWindowSize: 4 } }), field("kvCache.slidingWindowSize"));
    await lm.delete();
  });

  test("LangModel.infer / inferDelta: one step of the model, a tool call returned and not run, documents placed", async () => {
    const lm = await LangModel.newStreamAPI("OpenAI", "gpt-4o", "sk-test", { runtime: rt });
    await loopback.clear();
    await loopback.script(
      { dialect: "openai", tool_calls: [{ id: "call_1", name: "get_weather", arguments: { city: "Seoul" } }] },
      { dialect: "openai", text: "Sunny, says the almanac." },
    );
    const weather = { name: "get_weather", description: "The weather.", parameters: { type: "object", properties: { city: { type: "string" } } } };
    const called = await lm.infer("Weather in Seoul?", [weather]);
    assert.deepEqual(called.finish_reason, { type: "tool_call" });
    assert.deepEqual(called.message.tool_calls.map((c) => [c.function.name, c.function.arguments]), [["get_weather", { city: "Seoul" }]]);
    const deltas = lm.inferDelta([{ role: "user", contents: "And tomorrow?" }], null, [{ id: "d1", text: "The almanac says sunny." }]);
    assert.ok(deltas instanceof MessageDeltaOutputIterator);
    const outputs = await collect(deltas);
    assert.equal(outputs.map((o) => o.delta.contents[0]?.text ?? "").join(""), "Sunny, says the almanac.");
    assert.deepEqual(outputs.at(-1).finish_reason, { type: "stop" });
    const [first, second] = await loopback.requests();
    assert.ok(JSON.stringify(first.body.tools).includes("get_weather"));
    assert.ok(JSON.stringify(second.body.messages).includes("The almanac says sunny."), "the document reached the model");
    await lm.delete();
  });

  test("query's responses carry Ailoy 0.1's isTypeSwitched beside is_type_switched", async () => {
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    const responses = await collect(agent.query("Hello"));
    assert.ok(responses.length > 0);
    for (const response of responses) assert.equal(response.isTypeSwitched, response.is_type_switched);
    await agent.delete();
  });
});
