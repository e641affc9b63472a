// Ailoy's documented Node idioms, one program each, as its README and guides write them
// (0.2: getting started, streaming, multi-turn, system message, thinking, tools, MCP, RAG
// with VectorStore and Knowledge and the document polyfill, images; 0.1: defineAgent and
// query, presets and JavaScript tools, MCP, RAG with defineVectorStore, the low-level
// Runtime with define / call / iter), with `ailoy-node` replaced by this client and each
// checked on its outcome. Offline: Qwen3 ids are the SmolLM2 model by alias, BAAI/bge-m3
// MiniLM, OpenAI is the loopback server (support.mjs), MCP's server is time_server.py.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import * as ai from "ferrule";

import { redPng } from "./media.mjs";
import { collect, printedTo, startLoopback, TEST_KEY, useOfflineAliases } from "./support.mjs";

const textOf = (message) => message.contents.filter((p) => p.type === "text").map((p) => p.text).join("");
const TIME_SERVER = fileURLToPath(new URL("./time_server.py", import.meta.url));
const PYTHON = process.env.FERRULE_PYTHON ?? "python3";

let loopback;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback();
});
after(async () => {
  await ai.stopDefaultRuntime();
  await loopback?.stop();
});

/** The OpenAI loopback's requests so far, as one text (what reached the "model"). */
const sent = async () => JSON.stringify((await loopback.requests()).map((r) => r.body));
const openai = () => ai.LangModel.newStreamAPI("OpenAI", "gpt-5", TEST_KEY);

describe("Ailoy 0.2's guides", () => {
  test("getting started: an API model's agent.run(string)", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "Circuits hum softly." });
    const agent = new ai.Agent(await openai());
    const texts = [];
    for await (const resp of agent.run("Please give me a short poem about AI")) {
      if (resp.message.contents[0].type === "text") texts.push(resp.message.contents[0].text);
    }
    assert.deepEqual(texts, ["Circuits hum softly."]);
    assert.match(await sent(), /short poem about AI/);
  });

  test("getting started: a local model, with progressCallback", async () => {
    const progress = [];
    const lm = await ai.LangModel.newLocal("Qwen/Qwen3-0.6B", { progressCallback: (p) => progress.push(p), options: { max_tokens: 12 } });
    assert.equal(progress.at(-1).comment, "Initialized");
    const agent = new ai.Agent(lm);
    const outputs = await collect(agent.run("Please give me a short poem about AI"));
    assert.equal(outputs.at(-1).message.role, "assistant");
    assert.ok(textOf(outputs.at(-1).message).trim().length > 0);
  });

  test("streaming: runDelta's text deltas, accumulated and finished into the message", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "Silicon dreams of light." });
    const agent = new ai.Agent(await openai());
    let streamed = "";
    let acc = { contents: [], tool_calls: [] };
    let finished;
    for await (const resp of agent.runDelta("Please give me a short poem about AI.")) {
      if (resp.delta.contents?.[0]?.type === "text") streamed += resp.delta.contents[0].text;
      acc = ai.accumulateMessageDelta(acc, resp.delta);
      if (resp.finish_reason !== undefined) {
        finished = ai.finishMessageDelta(acc);
        acc = { contents: [], tool_calls: [] };
      }
    }
    assert.equal(streamed, "Silicon dreams of light.");
    assert.equal(finished.contents[0].text, streamed);
  });

  test("multi-turn: the earlier turns go with the new one, and a loop keeps the answers", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "Blue." }, { dialect: "openai", text: "You asked about John." });
    const agent = new ai.Agent(await openai());
    const messages = [
      { role: "user", contents: "John's favorite color is blue. Please remember that." },
      { role: "assistant", contents: "Great to hear that John's favorite color is blue." },
      { role: "user", contents: "What's John's favorite color?" },
    ];
    for await (const resp of agent.run(messages)) messages.push(resp.message);
    assert.equal(textOf(messages.at(-1)), "Blue.");
    messages.push({ role: "user", contents: "What did I ask?" });
    for await (const resp of agent.run(messages)) messages.push(resp.message);
    assert.equal(textOf(messages.at(-1)), "You asked about John.");
    const [, second] = await loopback.requests();
    const history = JSON.stringify(second.body.messages);
    for (const turn of ["favorite color is blue", "Great to hear", "Blue.", "What did I ask?"]) assert.ok(history.includes(turn), turn);
  });

  test("system message: contents as a string or as parts", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "Arr, the borrow checker be watchin'." });
    const agent = new ai.Agent(await openai());
    const messages = [
      { role: "system", contents: "You are an assistant who always speaks like a pirate." },
      { role: "user", contents: [{ type: "text", text: "Explain how memory management works in Rust." }] },
    ];
    const [out] = await collect(agent.run(messages));
    assert.match(textOf(out.message), /^Arr/);
    const [request] = await loopback.requests();
    const instructions = request.body.messages.filter((m) => ["system", "developer"].includes(m.role)); // gpt-5: "developer"
    assert.match(JSON.stringify(instructions), /speaks like a pirate/);
    assert.match(JSON.stringify(request.body.messages.at(-1)), /memory management works in Rust/);
  });

  test("thinking: thinkEffort enable asks the model to reason; its thinking streams apart from the text", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "anthropic", text: "x = 3, y = 0." });
    const agent = new ai.Agent(await ai.LangModel.newStreamAPI("Claude", "claude-sonnet-4-20250514", TEST_KEY));
    let text = "";
    for await (const resp of agent.runDelta("Please solve me a simultaneous equation: x+y=3, 4x+3y=12", {
      inference: { thinkEffort: "enable" },
    })) {
      if (resp.delta.contents.length !== 0 && resp.delta.contents[0].type === "text") text += resp.delta.contents[0].text;
    }
    assert.equal(text, "x = 3, y = 0.");
    const [request] = await loopback.requests();
    assert.equal(request.body.thinking?.type, "enabled", JSON.stringify(request.body)); // the reasoning was asked for
  });

  test("using tools: a JavaScript function tool, called by the model, its result sent back", async () => {
    await loopback.clear();
    await loopback.script(
      { dialect: "openai", tool_calls: [{ id: "call_1", name: "frankfurter", arguments: { base: "USD", symbols: "KRW" } }] },
      { dialect: "openai", text: "1 USD is 1391.5 KRW." },
    );
    const calls = [];
    const tool = ai.Tool.newFunction(
      {
        name: "frankfurter",
        description: "Get the latest currency exchange rates of target currencies based on the 'base' currency",
        parameters: {
          type: "object",
          properties: { base: { type: "string" }, symbols: { type: "string" } },
        },
      },
      async (args) => {
        calls.push(args);
        return { base: args.base, rates: { KRW: 1391.5 } };
      },
    );
    const agent = new ai.Agent(await openai(), [tool]);
    const outputs = await collect(agent.run("How much is 1 USD in KRW?"));
    assert.deepEqual(calls, [{ base: "USD", symbols: "KRW" }]);
    assert.equal(textOf(outputs.at(-1).message), "1 USD is 1391.5 KRW.");
    assert.match(await sent(), /1391\.5/);
  });

  test("using tools: the builtin terminal tool runs where this program runs", async () => {
    const tool = ai.Tool.newBuiltin("terminal");
    const result = await tool.run({ command: "echo ferrule" });
    assert.deepEqual(result, { exit_code: 0, stdout: "ferrule\n", stderr: "" });
  });

  test("MCP: a stdio server's tool by getTool, called by the model, printed by agent.print", async () => {
    const client = await ai.MCPClient.newStdio(PYTHON, [TIME_SERVER]);
    try {
      const tools = [client.getTool("get_current_time")];
      assert.throws(() => client.getTool("search_repositories"), (e) => e instanceof ai.InvalidInputError && e.field === "name");
      await loopback.clear();
      await loopback.script(
        { dialect: "openai", tool_calls: [{ id: "call_t", name: "get_current_time", arguments: { timezone: "Asia/Seoul" } }] },
        { dialect: "openai", text: "It is morning in Seoul." },
      );
      const agent = new ai.Agent(await openai(), tools);
      const out = printedTo();
      for await (const resp of agent.run("What time is it in Seoul?")) agent.print(resp, out);
      assert.match(out.text(), /\[tool call\]/);
      assert.match(out.text(), /\+09:00/); // the tool's answer, printed as the tool message
      assert.match(out.text(), /It is morning in Seoul\./);
    } finally {
      await client.close();
    }
  });

  test("RAG using documents: an embedding model, a FAISS store, Knowledge, the Qwen3 polyfill", async () => {
    const progress = [];
    const model = await ai.EmbeddingModel.newLocal("BAAI/bge-m3", { progressCallback: (p) => progress.push(p) });
    assert.deepEqual(progress.map((p) => p.comment), ["Initialized"]);
    const vs = await ai.VectorStore.newFaiss(1024);
    const CHUNKS = ["The old man fished alone in a skiff in the Gulf Stream.", "The boy had helped him carry the lines."];
    for (const [i, chunk] of CHUNKS.entries()) {
      await vs.addVector({ embedding: await model.infer(chunk), document: chunk, metadata: { title: "The Old Man and the Sea", index: i } });
    }
    const knowledge = ai.Knowledge.newVectorStore(vs, model);
    const agent = new ai.Agent(await openai(), undefined, knowledge);
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "He fished in the Gulf Stream." });
    const config = { inference: { documentPolyfill: ai.getDocumentPolyfill("Qwen3") }, knowledge: { topK: 1 } };
    const outputs = await collect(agent.run("Where did the old man fish?", config));
    assert.equal(textOf(outputs.at(-1).message), "He fished in the Gulf Stream.");
    const body = await sent();
    assert.ok(body.includes(CHUNKS[0]) && !body.includes(CHUNKS[1]), "the nearest chunk reached the model");
    await vs.delete();
    await model.delete();
  });

  test("images: imageFromUrl and imageFromBase64 parts beside the text", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "A golden retriever." }, { dialect: "openai", text: "A red square." });
    const agent = new ai.Agent(await openai());
    const url = "https://images.example.com/golden-retriever.jpg";
    const [first] = await collect(agent.run([{ role: "user", contents: [ai.imageFromUrl(url), { type: "text", text: "What do you see in this image?" }] }]));
    assert.equal(textOf(first.message), "A golden retriever.");
    const png = redPng().toString("base64");
    const [second] = await collect(agent.run([{ role: "user", contents: [ai.imageFromBase64(png), { type: "text", text: "And here?" }] }]));
    assert.equal(textOf(second.message), "A red square.");
    const body = await sent();
    assert.ok(body.includes(url) && body.includes(png));
  });
});

describe("Ailoy 0.1's README and tutorials", () => {
  let rt;
  before(async () => {
    rt = await ai.startRuntime();
  });
  after(async () => {
    await rt?.stop();
  });

  test("defineAgent with a system message, query, print", async () => {
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "Ahoy!" });
    const agent = await ai.defineAgent(rt, ai.APIModel({ id: "gpt-4o", apiKey: TEST_KEY }), { systemMessage: "You are a pirate." });
    const out = printedTo();
    for await (const resp of agent.query("Hello")) agent.print(resp, out);
    assert.equal(out.text().trim(), "Ahoy!");
    assert.match(await sent(), /You are a pirate\./);
    await agent.delete();
  });

  test("tools: a preset and a JavaScript function", async () => {
    await loopback.clear();
    await loopback.script(
      { dialect: "openai", tool_calls: [{ id: "c1", name: "calculator", arguments: { expression: "2**10" } }] },
      { dialect: "openai", tool_calls: [{ id: "c2", name: "shout", arguments: { text: "done" } }] },
      { dialect: "openai", text: "1024, DONE" },
    );
    const agent = await ai.defineAgent(rt, ai.APIModel({ id: "gpt-4o", apiKey: TEST_KEY }));
    agent.addToolsFromPreset("calculator");
    agent.addJSFunctionTool(({ text }) => text.toUpperCase(), {
      name: "shout",
      description: "Upper-case a text.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    });
    const responses = await collect(agent.query("What is 2 to the 10th, then shout done."));
    const results = responses.filter((r) => r.type === "tool_call_result").map((r) => JSON.stringify(r.content));
    assert.equal(results.length, 2);
    assert.match(results[0], /1024/);
    assert.match(results[1], /DONE/);
    assert.equal(responses.filter((r) => r.type === "output_text").map((r) => r.content).join(""), "1024, DONE");
    await agent.delete();
  });

  test("MCP: addToolsFromMcpServer names the tools server-tool", async () => {
    const agent = await ai.defineAgent(rt, ai.APIModel({ id: "gpt-4o", apiKey: TEST_KEY }));
    await agent.addToolsFromMcpServer("time", { command: PYTHON, args: [TIME_SERVER] });
    assert.deepEqual(agent.getAvailableTools().map((t) => t.name), ["time-get_current_time"]);
    await loopback.clear();
    await loopback.script(
      { dialect: "openai", tool_calls: [{ id: "c1", name: "time-get_current_time", arguments: { timezone: "UTC" } }] },
      { dialect: "openai", text: "Noted." },
    );
    const responses = await collect(agent.query("What time is it in UTC?"));
    assert.match(JSON.stringify(responses.find((r) => r.type === "tool_call_result").content), /UTC/);
    await agent.removeMcpServer("time");
    assert.deepEqual(agent.getAvailableTools(), []);
    await agent.delete();
  });

  test("RAG with a vector store: defineVectorStore, insert, retrieve, the context in the query", async () => {
    const vs = await ai.defineVectorStore(rt, "BAAI/bge-m3", "faiss");
    const doc = "BGE M3 is an embedding model supporting dense retrieval, lexical matching and multi-vector interaction.";
    await vs.insert({ document: doc, metadata: { topic: "bge-m3" } });
    await vs.insert({ document: "Seoul is the capital of Korea.", metadata: { topic: "seoul" } });
    const query = "What is BGE M3?";
    const [best] = await vs.retrieve(query, 1);
    assert.equal(best.document, doc);
    await loopback.clear();
    await loopback.script({ dialect: "openai", text: "An embedding model." });
    const agent = await ai.defineAgent(rt, ai.APIModel({ id: "gpt-4o", apiKey: TEST_KEY }));
    const prompt = `Based on the provided contexts, try to answer user's question.\nContext: ${best.document}\nQuestion: ${query}`;
    const answer = (await collect(agent.query(prompt))).filter((r) => r.type === "output_text").map((r) => r.content).join("");
    assert.equal(answer, "An embedding model.");
    assert.ok((await sent()).includes("multi-vector interaction"));
    await agent.delete();
    await vs.delete();
  });

  test("the low-level Runtime: call, callIter, define, callIterMethod, delete", async () => {
    assert.deepEqual(await rt.call("echo", { text: "Hello world" }), { text: "Hello world" });
    const letters = (await collect(rt.callIter("spell", { text: "abc" }))).map((r) => r.text);
    assert.deepEqual(letters, ["a", "b", "c"]);
    const { chunks } = await rt.call("split_text", { text: "One sentence. ".repeat(400), chunk_size: 500, chunk_overlap: 100 });
    assert.ok(chunks.length > 1 && chunks.every((c) => c.length <= 500));
    assert.equal(await rt.define("tvm_language_model", "lm0", { model: "Qwen/Qwen3-0.6B" }), true);
    const messages = [
      { role: "system", content: [{ type: "text", text: "You are a friendly chatbot who always responds in the style of a pirate." }] },
      { role: "user", content: [{ type: "text", text: "Who are you?" }] },
    ];
    let text = "";
    let last;
    for await (const resp of rt.callIterMethod("lm0", "infer", { messages, max_tokens: 16 })) {
      text += (resp.message.content ?? []).map((p) => p.text ?? "").join("");
      last = resp;
    }
    assert.ok(["stop", "length"].includes(last.finish_reason));
    assert.ok(text.trim().length > 0);
    assert.equal(await rt.delete("lm0"), true);
  });
});
