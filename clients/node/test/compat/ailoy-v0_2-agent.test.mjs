// Ailoy 0.2 `bindings/nodejs/tests/agent.test.ts`, case by case (named after each `test`,
// under a `describe` per model config). Local: Qwen3-0.6B is the offline SmolLM2 by alias;
// it takes the tools (in SmolLM2's tool format) and answers, but at 135M it rarely calls
// one, so its tool cases check that run ends with a reply and run the tool through an
// agent on the scripted test model. API models: one loopback server speaking
// each provider's wire (loopback.py); the builtin tools' own endpoints (DuckDuckGo, the
// fetched page) are that server too, and the MCP time server is ours (time_server.py).
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";

import * as ailoy from "ferrule";

import { redPng } from "./media.mjs";
import { collect, PROVIDERS, startLoopback, useOfflineAliases } from "./support.mjs";

const IMAGE_URL = "https://images.example.com/jensen-huang.jpg";
const PNG = redPng();

let loopback;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback();
});
after(async () => {
  await ailoy.stopDefaultRuntime();
  await loopback?.stop();
});

const modelConfigs = [
  {
    name: "Local",
    local: true,
    createAgent: async () => {
      const progress = (modelConfigs[0].progress = []);
      // A few tokens per answer keep the offline model's turns short.
      const model = await ailoy.LangModel.newLocal("Qwen/Qwen3-0.6B", {
        progressCallback: (prog) => progress.push(prog),
        options: { max_tokens: 12 },
      });
      return new ailoy.Agent(model);
    },
  },
  { name: "OpenAI", provider: "openai", api: "OpenAI", model: "gpt-4o", runImageUrl: true, runImageBase64: true },
  { name: "Gemini", provider: "gemini", api: "Gemini", model: "gemini-2.5-flash", runImageBase64: true },
  { name: "Claude", provider: "claude", api: "Claude", model: "claude-haiku-4-5", runImageUrl: true, runImageBase64: true },
  { name: "Grok", provider: "grok", api: "Grok", model: "grok-4-fast", runImageUrl: true, runImageBase64: true },
];
for (const cfg of modelConfigs.filter((c) => !c.local)) {
  const provider = PROVIDERS[cfg.provider];
  cfg.dialect = provider.dialect;
  cfg.createAgent = async () => new ailoy.Agent(await ailoy.LangModel.newStreamAPI(cfg.api, cfg.model, process.env[provider.key]));
}

const textOf = (message) => message.contents.filter((p) => p.type === "text").map((p) => p.text).join("");
const toolValues = (outputs) => outputs.filter((o) => o.delta.role === "tool").map((o) => o.delta.contents[0].value);
const sentBodies = async () => JSON.stringify((await loopback.requests()).map((r) => r.body));

for (const cfg of modelConfigs) {
  describe(`Agent test: ${cfg.name}`, () => {
    let agent;
    before(async () => {
      agent = await cfg.createAgent();
    });

    /** Script one text answer (API models), run `messages`, and return the messages yielded. */
    const chat = async (messages) => {
      await loopback.clear();
      if (!cfg.local) await loopback.script({ dialect: cfg.dialect, text: "My name is Ferrule." });
      const outputs = await collect(agent.run(messages));
      const last = outputs.at(-1);
      assert.equal(last.message.role, "assistant");
      assert.ok(["stop", "length"].includes(last.finish_reason.type), JSON.stringify(last.finish_reason));
      const text = textOf(last.message);
      assert.ok(text.trim().length > 0, "the model answered");
      if (!cfg.local) {
        assert.equal(text, "My name is Ferrule.");
        assert.match(await sentBodies(), /What is your name\?/);
      }
      return outputs;
    };

    if (cfg.local) {
      test("Local createAgent: newLocal's progressCallback hears the packaged file found, then the load", () => {
        assert.deepEqual(cfg.progress, [
          { comment: "SmolLM2-135M-Instruct.Q4_1.gguf ready", current: 1, total: 2 },
          { comment: "Initialized", current: 2, total: 2 },
        ]);
      });
    }

    test("Simple Chat(single string)", async () => {
      await chat("What is your name?");
    });

    test("Simple Chat(string contents)", async () => {
      await chat([{ role: "user", contents: "What is your name?" }]);
    });

    test("Simple Chat(normal form)", async () => {
      await chat([{ role: "user", contents: [{ type: "text", text: "What is your name?" }] }]);
    });

    test("Simple Chat Delta", async () => {
      if (!cfg.local) await loopback.script({ dialect: cfg.dialect, text: "My name is Ferrule." });
      let acc = { contents: [], tool_calls: [] };
      let deltas = 0;
      for await (const resp of agent.runDelta([{ role: "user", contents: [{ type: "text", text: "What is your name?" }] }])) {
        acc = ailoy.accumulateMessageDelta(acc, resp.delta);
        deltas++;
      }
      const message = ailoy.finishMessageDelta(acc);
      assert.equal(message.role, "assistant");
      assert.equal(message.contents[0].type, "text");
      assert.ok(message.contents[0].text.trim().length > 0);
      assert.ok(deltas >= 1);
      if (!cfg.local) assert.equal(message.contents[0].text, "My name is Ferrule.");
    });

    /**
     * Run `query` with `tool` added: the model calls `name` with `args` (scripted), the
     * tool runs (its own endpoints answered by `endpointReplies`), the model answers.
     * Returns the tool's result values. The local model takes the tool and its run ends
     * with a reply; the test model then makes the call.
     */
    const toolRun = async (tool, query, args, endpointReplies = []) => {
      const name = tool.description.name;
      await loopback.clear();
      let runner = agent;
      if (cfg.local) {
        agent.addTool(tool);
        const local = await collect(agent.runDelta(query));
        assert.ok(local.at(-1)?.finish_reason, "the run ended with a finish reason");
        agent.removeTool(name);
        await loopback.clear();
        const scripted = await ailoy.LangModel.newLocal("test", {
          options: { turns: [{ tool_calls: [{ name, arguments: args }] }, { text: "Done." }] },
        });
        runner = new ailoy.Agent(scripted);
        await loopback.script(...endpointReplies);
      } else {
        await loopback.script(
          { dialect: cfg.dialect, tool_calls: [{ id: "call_1", name, arguments: args }] },
          ...endpointReplies,
          { dialect: cfg.dialect, text: "Done." },
        );
      }
      runner.addTool(tool);
      const outputs = await collect(runner.runDelta(query));
      runner.removeTool(name);
      const calls = outputs.flatMap((o) => o.delta.tool_calls);
      assert.deepEqual(calls.map((c) => [c.function.name, c.function.arguments]), [[name, args]]);
      const text = outputs.flatMap((o) => o.delta.contents).filter((p) => p.type === "text").map((p) => p.text).join("");
      assert.equal(text, "Done.");
      if (!cfg.local) assert.match(JSON.stringify((await loopback.requests()).at(-1).body), new RegExp(name));
      return toolValues(outputs);
    };

    test("Tool Calling: Builtin Tool (terminal)", async () => {
      const tool = ailoy.Tool.newBuiltin("terminal");
      const [result] = await toolRun(tool, "List the files in the current directory.", { command: "ls" });
      assert.equal(result.exit_code, 0);
      for (const file of readdirSync(process.cwd()).filter((f) => !f.startsWith("."))) assert.ok(result.stdout.includes(file), file);
    });

    test("Tool Calling: Builtin Tool (web search)", async () => {
      const tool = ailoy.Tool.newBuiltin("web_search_duckduckgo");
      const page =
        '<html><body><div class="result"><h2 class="result__title"><a class="result__a" href="https://github.com/brekkylab/ailoy">Ailoy: an AI agent framework</a></h2>' +
        '<a class="result__snippet" href="https://github.com/brekkylab/ailoy">Agents, tools and RAG on local and API models.</a></div></body></html>';
      const [result] = await toolRun(tool, "Search for Ailoy (AI agent framework) and describe its functionalities", { query: "Ailoy" }, [{ html: page }]);
      assert.equal(result.results?.[0]?.title, "Ailoy: an AI agent framework", JSON.stringify(result));
      assert.equal(result.results[0].href, "https://github.com/brekkylab/ailoy");
      assert.ok((await loopback.requests()).some((r) => r.path === "/html/"), "DuckDuckGo was asked");
    });

    test("Tool Calling: Builtin Tool (web fetch)", async () => {
      const tool = ailoy.Tool.newBuiltin("web_fetch");
      const url = `${loopback.url}/ailoy/`;
      const [result] = await toolRun(tool, `Fetch the contents from ${url} and summarize it.`, { url }, [
        { html: "<html><body><h1>Ailoy</h1><p>A lightweight agent framework.</p></body></html>" },
      ]);
      // The server's web_fetch operator, as Python's Tool.new_builtin("web_fetch"): the page as Markdown.
      assert.deepEqual(Object.keys(result), ["results"]);
      assert.match(result.results, /^# Ailoy$/m);
      assert.match(result.results, /^A lightweight agent framework\.$/m);
      assert.ok(!result.results.includes("<"), result.results);
      assert.ok((await loopback.requests()).some((r) => r.method === "GET" && r.path === "/ailoy/"), "the page was fetched");
    });

    test("Tool Calling: MCP Tools (time)", async () => {
      const client = await ailoy.MCPClient.newStdio(process.env.FERRULE_PYTHON ?? "python3", [
        fileURLToPath(new URL("./time_server.py", import.meta.url)),
      ]);
      try {
        const [tool] = client.tools;
        assert.deepEqual(client.tools.map((t) => t.description.name), ["get_current_time"]);
        const [result] = await toolRun(tool, "What time is it now in Asia/Seoul? Answer in local timezone.", { timezone: "Asia/Seoul" });
        assert.equal(result.timezone, "Asia/Seoul");
        assert.match(result.datetime, /\+09:00$/);
      } finally {
        await client.close();
      }
    });

    test("Tool Calling: JsFunctionTool (temperature)", async () => {
      const tool = ailoy.Tool.newFunction(
        {
          name: "temperature",
          description: "Get temperature of the provided location",
          parameters: {
            type: "object",
            properties: {
              location: { type: "string", description: "The city name" },
              unit: { type: "string", description: "temperature unit", enum: ["Celsius", "Fahrenheit"] },
            },
            required: ["location", "unit"],
          },
        },
        async (args) => ({ location: args.location, unit: args.unit, temp: 38 }),
      );
      const [result] = await toolRun(tool, "What is the temperature in Seoul now? Answer in Celsius.", { location: "Seoul", unit: "Celsius" });
      assert.deepEqual(result, { location: "Seoul", unit: "Celsius", temp: 38 });
    });

    if (cfg.runImageUrl) {
      test("Multimodal: Image URL", async () => {
        await loopback.clear();
        const imgPart = ailoy.imageFromUrl(IMAGE_URL);
        await loopback.script({ dialect: cfg.dialect, text: "A man in a leather jacket." });
        const outputs = await collect(agent.run([{ role: "user", contents: [imgPart, { type: "text", text: "What is shown in this image?" }] }]));
        assert.equal(textOf(outputs.at(-1).message), "A man in a leather jacket.");
        assert.ok((await sentBodies()).includes(IMAGE_URL));
      });
    }

    if (cfg.runImageBase64) {
      test("Multimodal: Image Base64", async () => {
        await loopback.clear();
        await loopback.script({ dialect: cfg.dialect, text: "A red square." });
        const part = ailoy.imageFromBase64(PNG.toString("base64"));
        const outputs = await collect(agent.run([{ role: "user", contents: [part, { type: "text", text: "What is shown in this image?" }] }]));
        assert.equal(textOf(outputs.at(-1).message), "A red square.");
        assert.ok((await sentBodies()).includes(PNG.toString("base64")));
      });
    }

    test("Using Knowledge", async () => {
      const vs = await ailoy.VectorStore.newFaiss(1024); // bge-m3's width, kept by its alias

      const emb = await ailoy.EmbeddingModel.newLocal("BAAI/bge-m3");
      const doc0 = "Ailoy is an awesome AI agent framework supporting Rust, Python, Nodejs and WebAssembly.";
      await vs.addVector({ embedding: await emb.infer(doc0), document: doc0 });
      await vs.addVector({ embedding: await emb.infer("The Han river flows through Seoul."), document: "The Han river flows through Seoul." });
      const knowledge = ailoy.Knowledge.newVectorStore(vs, emb);
      assert.deepEqual((await knowledge.retrieve("What is Ailoy?")).map((d) => d.text), [doc0]);
      agent.setKnowledge(knowledge);
      await loopback.clear();
      if (!cfg.local) await loopback.script({ dialect: cfg.dialect, text: "An AI agent framework." });
      const documentPolyfill = ailoy.getDocumentPolyfill("Qwen3");
      let acc = { contents: [], tool_calls: [] };
      for await (const resp of agent.runDelta("What is Ailoy?", { inference: { documentPolyfill } })) {
        acc = ailoy.accumulateMessageDelta(acc, resp.delta);
      }
      assert.ok(textOf(ailoy.finishMessageDelta(acc)).trim().length > 0);
      agent.removeKnowledge();
      if (!cfg.local) {
        const sent = await sentBodies();
        assert.ok(sent.includes(doc0), "the retrieved document reached the model");
        assert.ok(!sent.includes("Han river"), "only the nearest document did");
      }
      await vs.delete();
    });
  });
}

test("Tool Calling: Builtin Tool (web fetch): its settings, an unknown one refused by name", () => {
  assert.equal(ailoy.Tool.newBuiltin("web_fetch", { max_chars: 100, format: "text" }).description.name, "web_fetch");
  assert.throws(() => ailoy.Tool.newBuiltin("web_fetch", { proxy_url: "http://127.0.0.1:9" }), (error) => {
    assert.ok(error instanceof ailoy.InvalidInputError);
    assert.equal(error.field, "proxy_url");
    return true;
  });
});
