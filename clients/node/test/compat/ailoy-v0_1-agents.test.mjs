// Ailoy 0.1 `bindings/js-node/tests/agent-{local,openai,claude,gemini,grok}.spec.ts`, case
// by case (named after each `it`). Local: Qwen3-8B is the offline SmolLM2 by alias; it is
// given the tools (in SmolLM2's tool format) and answers, but at 135M it rarely calls one,
// so each tool case also runs its tool through an agent on the scripted test model (plugins/testmodel) that calls it: the tool was added under Ailoy's
// name, ran here or on the server, and its result reached the model. Providers: one
// loopback server speaking each provider's wire (loopback.py).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, beforeEach, describe, test } from "node:test";

import * as ai from "ferrule";

import { redPng, sharpLike, toneWav } from "./media.mjs";
import { collect, printedTo, PROVIDERS, startLoopback, TEST_KEY, useOfflineAliases } from "./support.mjs";

const FORMULA = "floor(ln(exp(e))+cos(2*pi))";
const IMAGE_URL = "https://images.example.com/jensen-huang.jpg";

let rt;
let loopback;
before(async () => {
  useOfflineAliases();
  loopback = await startLoopback();
  rt = await ai.startRuntime();
});
after(async () => {
  await rt?.stop();
  await loopback?.stop();
});

/** Print every response as Ailoy's tests do; what was printed. */
async function printed(agent, query) {
  const out = printedTo();
  for await (const resp of agent.query(query)) agent.print(resp, out);
  return out.text();
}

/** An agent on the test model: calls `name` with `args`, then says `answer`. */
const scripted = (name, args, answer) =>
  ai.defineAgent(rt, ai.LocalModel({ id: "test", options: { turns: [{ tool_calls: [{ name, arguments: args }] }, { text: answer }] } }));

const results = (responses) => responses.filter((r) => r.type === "tool_call_result").map((r) => r.content);

describe("Local Agent (Ailoy 0.1 agent-local.spec.ts)", () => {
  let agent;
  before(async () => {
    agent = await ai.defineAgent(rt, ai.LocalModel({ id: "Qwen/Qwen3-8B" }));
  });
  beforeEach(() => {
    agent.clearMessages();
    agent.clearTools();
  });
  after(async () => {
    await agent.delete();
  });

  /** The offline model takes the tools and answers, with no error response. */
  const answers = async (query) => {
    const out = await printed(agent, query);
    assert.ok(out.trim());
    assert.doesNotMatch(out, /\[error\]/);
  };

  test("Tool Call: calculator tools", async () => {
    agent.addToolsFromPreset("calculator");
    assert.deepEqual(agent.tools.map((t) => t.name), ["calculator"]);
    await answers(`Please calculate this formula: ${FORMULA}`);

    const calc = await scripted("calculator", { expression: FORMULA }, "It is 3.");
    calc.addToolsFromPreset("calculator");
    const responses = await collect(calc.query(`Please calculate this formula: ${FORMULA}`));
    assert.deepEqual(results(responses)[0].result, { value: 3 });
    assert.equal(responses.filter((r) => r.type === "output_text").map((r) => r.content).join(""), "It is 3.");
    await calc.delete();
  });

  test("Tool Call: frankfurter tools", async () => {
    agent.addToolsFromPreset("frankfurter");
    assert.deepEqual(agent.tools.map((t) => t.name), ["frankfurter"]);
    await answers("I want to buy 100 U.S. Dollar and 100 EUR with my Korean Won. How much do I need to take?");

    const rates = { amount: 1.0, base: "KRW", date: "2026-11-26", rates: { USD: 0.00068, EUR: 0.00065 } };
    await loopback.clear();
    await loopback.script({ json: rates });
    const args = { base: "KRW", symbols: "USD,EUR" };
    const fx = await scripted("frankfurter", args, "About 301,000 won.");
    fx.addToolsFromPreset("frankfurter");
    const responses = await collect(fx.query("I want to buy 100 U.S. Dollar and 100 EUR with my Korean Won."));
    assert.deepEqual(results(responses)[0].result, rates);
    const [request] = await loopback.requests();
    assert.equal(request.path, "/v1/latest");
    assert.deepEqual(request.query, args);
    await fx.delete();
  });

  test("Tool Call: Custom function tools", async () => {
    const temperature = ({ location, unit }) => {
      assert.equal(typeof location, "string");
      if (unit === "celsius") return 25;
      else if (unit === "fahrenheit") return 77;
      else return null;
    };
    const desc = {
      name: "get_current_temperature",
      description: "Get the current temperature at a location.",
      parameters: {
        type: "object",
        properties: {
          location: { type: "string", description: 'The location to get the temperature for, in the format "City, Country"' },
          unit: { type: "string", enum: ["celsius", "fahrenheit"], description: "The unit to return the temperature in." },
        },
        required: ["location", "unit"],
      },
      return: { type: "number", description: "The current temperature at the specified location in the specified units, as a float." },
    };
    agent.addJSFunctionTool(temperature, desc);
    assert.deepEqual(agent.tools.map((t) => t.name), ["get_current_temperature"]);
    await answers("Hello, how is the current weather in my city Seoul?");

    const weather = await scripted("get_current_temperature", { location: "Seoul, Korea", unit: "celsius" }, "25 degrees.");
    weather.addJSFunctionTool(temperature, desc);
    const responses = await collect(weather.query("Hello, how is the current weather in my city Seoul?"));
    assert.equal(results(responses)[0].result, 25);
    assert.equal(responses.filter((r) => r.type === "output_text").map((r) => r.content).join(""), "25 degrees.");
    await weather.delete();
  });

  test("Tool Call: Filesystem MCP tools", async () => {
    const root = mkdtempSync(join(tmpdir(), "ferrule-mcp-"));
    const server = {
      command: process.env.FERRULE_PYTHON ?? "python3",
      args: [fileURLToPath(new URL("./filesystem_server.py", import.meta.url)), root],
    };
    try {
      await agent.addToolsFromMcpServer("filesystem", server);
      const names = agent.tools.map((t) => t.name);
      assert.ok(["filesystem-list_directory", "filesystem-read_file", "filesystem-write_file"].every((n) => names.includes(n)), names);
      await agent.removeMcpServer("filesystem");
      assert.deepEqual(agent.tools, []);

      const path = join(root, "hello.txt");
      const files = await scripted("filesystem-write_file", { path, content: "hello world" }, "Done.");
      await files.addToolsFromMcpServer("filesystem", server, { toolsToAdd: ["write_file"] });
      assert.deepEqual(files.tools.map((t) => t.name), ["filesystem-write_file"]);
      const responses = await collect(files.query(`Create a file hello.txt under ${root} and write 'hello world'.`));
      assert.ok(!("error" in results(responses)[0]), JSON.stringify(results(responses)));
      assert.equal(existsSync(path), true);
      assert.equal(readFileSync(path, { encoding: "utf-8" }), "hello world");
      await files.delete(); // stops its MCP server
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** Ailoy's provider files and the cases each has. */
const CASES = {
  openai: ["calculator", "image url", "image sharp", "audio"],
  claude: ["calculator", "image sharp"],
  gemini: ["calculator", "image sharp", "audio"],
  grok: ["calculator", "image url", "image sharp"],
};
const TITLES = { openai: "OpenAI", claude: "Claude", gemini: "Gemini", grok: "Grok" };

for (const [name, cases] of Object.entries(CASES)) {
  const provider = PROVIDERS[name];
  describe(`${TITLES[name]} Agent (Ailoy 0.1 agent-${name}.spec.ts)`, () => {
    let agent;
    before(async () => {
      agent = await ai.defineAgent(rt, ai.APIModel({ id: provider.model, apiKey: TEST_KEY }));
    });
    beforeEach(async () => {
      agent.clearMessages();
      agent.clearTools();
      await loopback.clear();
    });
    after(async () => {
      await agent.delete();
    });
    const sent = async () => JSON.stringify((await loopback.requests()).map((r) => r.body));

    test("Tool Call: calculator tools", async () => {
      await loopback.script(
        { dialect: provider.dialect, tool_calls: [{ id: "call_1", name: "calculator", arguments: { expression: FORMULA } }] },
        { dialect: provider.dialect, text: "The result is 3." },
      );
      agent.addToolsFromPreset("calculator");
      const out = await printed(agent, `Please calculate this formula: ${FORMULA}`);
      assert.ok(!out.includes("[error]"), out);
      assert.match(out, /The result is 3\./);
      assert.match(out, /"value":3/);
      const [first, second] = await loopback.requests();
      assert.match(JSON.stringify(first.body), /calculator/); // the tool was offered
      assert.match(JSON.stringify(second.body), /\\"value\\": ?3|"value": ?3/); // its result went back
      assert.ok(JSON.stringify(first.headers).includes(TEST_KEY), "the agent's API key was sent");
    });

    if (cases.includes("image url")) {
      test("Image input from URL", async () => {
        await loopback.script({ dialect: provider.dialect, text: "A man in a leather jacket." });
        const out = await printed(agent, ["What is in this image?", ai.ImageContent.fromUrl(IMAGE_URL)]);
        assert.match(out, /leather jacket/);
        assert.ok((await sent()).includes(IMAGE_URL));
      });
    }

    if (cases.includes("image sharp")) {
      test(name === "openai" || name === "grok" ? "Image input from Sharp" : "Image recognition from Sharp", async () => {
        await loopback.script({ dialect: provider.dialect, text: "A red square." });
        const png = redPng();
        const out = await printed(agent, ["What is in this image?", sharpLike(png)]);
        assert.match(out, /A red square\./);
        assert.ok((await sent()).includes(png.toString("base64")), "the image's bytes reached the provider");
      });
    }

    if (cases.includes("audio")) {
      test("Audio input from bytes", async () => {
        await loopback.script({ dialect: provider.dialect, text: "A short tone." });
        const audioAgent =
          name === "openai"
            ? await ai.defineAgent(rt, ai.APIModel({ id: "gpt-4o-audio-preview", provider: "openai", apiKey: TEST_KEY }))
            : agent;
        const wav = toneWav();
        const out = await printed(audioAgent, ["What's in these recording?", await ai.AudioContent.fromBytes(wav, "wav")]);
        assert.match(out, /A short tone\./);
        assert.ok((await sent()).includes(wav.toString("base64")), "the audio's bytes reached the provider");
        if (audioAgent !== agent) await audioAgent.delete();
      });
    }
  });
}
