// The agent API on the test model (plugins/testmodel): tools run here, in Node.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { inspect } from "node:util";

import {
  APIModel,
  AudioContent,
  ImageContent,
  InvalidInputError,
  LocalModel,
  ModelError,
  RequestCancelledError,
  UnknownComponentError,
  UnknownModelError,
  defineAgent,
  startRuntime,
} from "ferrule";

import { collect } from "./helpers.mjs";

const ADD = {
  name: "add",
  description: "Add two integers.",
  parameters: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
  },
  run: ({ a, b }) => a + b,
};

/** The test model, answering with these turns in order. */
const scripted = (...turns) => LocalModel({ id: "test", options: { turns } });
const callsOf = (...calls) => ({
  tool_calls: calls.map(([name, args]) => ({ name, arguments: args })),
});
const text = (responses, type = "output_text") =>
  responses
    .filter((r) => r.type === type)
    .map((r) => r.content)
    .join("");

let rt;
before(async () => {
  rt = await startRuntime();
});
after(async () => {
  await rt.stop();
});

describe("queries", () => {
  test("the echoing test model streams its answer, with reasoning when asked", async () => {
    const agent = await defineAgent(rt, LocalModel({ id: "test" }), {
      systemMessage: "You are a pirate.",
    });
    const plain = await collect(agent.query("Please give me a short poem about AI"));
    assert.equal(text(plain), "Please give me a short poem about AI");
    assert.deepEqual(
      plain.map((r) => [r.type, r.role, r.is_type_switched]).slice(0, 2),
      [
        ["output_text", "assistant", true],
        ["output_text", "assistant", false],
      ],
    );
    const reasoned = await collect(agent.query("x+y=3, 4x+3y=12", { reasoning: true }));
    assert.equal(reasoned[0].type, "reasoning");
    assert.equal(reasoned[0].is_type_switched, true);
    assert.ok(text(reasoned, "reasoning").length > 0);
    assert.equal(text(reasoned), "x+y=3, 4x+3y=12");
    const messages = agent.getMessages();
    assert.deepEqual(
      messages.map((m) => m.role),
      ["system", "user", "assistant", "user", "assistant"],
    );
    assert.equal(messages[0].content[0].text, "You are a pirate.");
    agent.clearMessages();
    assert.deepEqual(
      agent.getMessages().map((m) => m.role),
      ["system"],
    );
    await agent.delete();
    await agent.delete(); // idempotent
    await assert.rejects(rt.callMethod(agent.component, "infer", {}), UnknownComponentError);
  });

  test("tool calls run here, concurrently, and their results go back to the model", async () => {
    let waiting = 0;
    let release;
    const bothStarted = new Promise((resolve) => (release = resolve));
    const slowAdd = {
      ...ADD,
      // Each call waits until both have started: run one after the other, they never finish.
      run: async ({ a, b }, context) => {
        assert.match(context.toolCallId, /^call_/);
        assert.equal(context.signal.aborted, false);
        if (++waiting === 2) release();
        await bothStarted;
        return { sum: a + b };
      },
    };
    const agent = await defineAgent(
      rt,
      scripted(callsOf(["add", { a: 1, b: 2 }], ["add", { a: 3, b: 4 }]), { text: "3 and 7" }),
      { tools: [slowAdd] },
    );
    const responses = await collect(agent.query("What are 1 + 2 and 3 + 4?"));
    assert.deepEqual(
      responses.map((r) => [r.type, r.is_type_switched]).slice(0, 4),
      [
        ["tool_call", true],
        ["tool_call", false],
        ["tool_call_result", true],
        ["tool_call_result", false],
      ],
    );
    assert.deepEqual(responses[0].content.function, { name: "add", arguments: { a: 1, b: 2 } });
    assert.deepEqual(
      responses.slice(2, 4).map((r) => [r.role, r.content.name, r.content.result]),
      [
        ["tool", "add", { sum: 3 }],
        ["tool", "add", { sum: 7 }],
      ],
    );
    assert.equal(responses[2].content.tool_call_id, responses[0].content.id);
    assert.equal(text(responses), "3 and 7");
    const messages = agent.getMessages();
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant", "tool", "tool", "assistant"],
    );
    assert.equal(messages[2].content[0].text, JSON.stringify({ sum: 3 }));
    await agent.delete();
  });

  test("a tool that fails, or one the model made up, gives the model an error result", async () => {
    const broken = { ...ADD, name: "broken", run: () => { throw new TypeError("no luck"); } };
    const agent = await defineAgent(
      rt,
      scripted(callsOf(["broken", {}], ["invented", {}]), { text: "sorry" }),
      { tools: [broken] },
    );
    const results = (await collect(agent.query("go"))).filter((r) => r.type === "tool_call_result");
    assert.deepEqual(
      results.map((r) => r.content.error),
      ["TypeError: no luck", 'there is no tool named "invented"; the tools are: broken'],
    );
    assert.equal(agent.getMessages()[2].content[0].text, JSON.stringify({ error: "TypeError: no luck" }));
    await agent.delete();
  });

  test("a tool that needs confirmation runs only when confirmed", async () => {
    const ran = [];
    const guarded = { ...ADD, requiresConfirmation: true, run: ({ a, b }) => (ran.push([a, b]), a + b) };
    const turns = [callsOf(["add", { a: 1, b: 1 }], ["add", { a: 2, b: 2 }]), { text: "done" }];
    const agent = await defineAgent(rt, scripted(...turns, ...turns, ...turns), {
      tools: [guarded],
      confirm: (call) => call.function.arguments.a === 1,
    });
    const results = async (options) =>
      (await collect(agent.query("go", options)))
        .filter((r) => r.type === "tool_call_result")
        .map((r) => r.content.result ?? r.content.error);
    assert.deepEqual(await results(), [2, "the user declined this tool call"]);
    assert.deepEqual(ran, [[1, 1]]);
    assert.deepEqual(await results({ confirm: async () => true }), [2, 4]);
    const unasked = await defineAgent(rt, scripted(...turns), { tools: [guarded] });
    const declined = (await collect(unasked.query("go"))).filter((r) => r.type === "tool_call_result");
    assert.ok(declined.every((r) => /declined this tool call: no one was asked/.test(r.content.error)));
    assert.deepEqual(ran, [[1, 1], [1, 1], [2, 2]]);
    await agent.delete();
    await unasked.delete();
  });

  test("a consumer that stops cancels the running tools", async () => {
    let aborted;
    const started = Promise.withResolvers ? Promise.withResolvers() : null;
    let markStarted;
    const toolStarted = started ? started.promise : new Promise((r) => (markStarted = r));
    const forever = {
      name: "wait_forever",
      run: (_args, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve("aborted");
          });
          (started ? started.resolve : markStarted)();
        }),
    };
    const agent = await defineAgent(rt, scripted(callsOf(["wait_forever", {}])), {
      tools: [forever],
      toolTimeoutMs: null,
    });
    const controller = new AbortController();
    const run = collect(agent.query("go", { signal: controller.signal }));
    await toolStarted;
    controller.abort();
    const responses = await run;
    const last = responses.at(-1);
    assert.equal(last.type, "error");
    assert.ok(last.error instanceof RequestCancelledError);
    assert.equal(aborted, true);
    assert.deepEqual(agent.getMessages(), []); // a cancelled run keeps nothing
    await agent.delete();
  });

  test("breaking out of the loop closes the model's stream", async () => {
    const agent = await defineAgent(rt, scripted({ text: "word ".repeat(200), delay: 1.0 }));
    let seen = 0;
    for await (const resp of agent.query("go")) {
      assert.equal(resp.type, "output_text");
      if (++seen === 2) break;
    }
    assert.equal(seen, 2);
    await agent.delete(); // a model still streaming would hold this for 200 s
  });

  test("a tool that takes too long times out into an error result", async () => {
    const slow = { name: "slow", timeoutMs: 50, run: () => new Promise(() => {}) };
    const agent = await defineAgent(rt, scripted(callsOf(["slow", {}]), { text: "ok" }), {
      tools: [slow],
    });
    const result = (await collect(agent.query("go"))).find((r) => r.type === "tool_call_result");
    assert.equal(result.content.error, 'the tool "slow" did not finish within 0.05 s');
    await agent.delete();
  });

  test("a failing model ends the stream with one typed error response", async () => {
    const agent = await defineAgent(rt, scripted({ text: "half an", error: "the model broke" }));
    const responses = await collect(agent.query("go"));
    assert.equal(text(responses), "half an");
    const last = responses.at(-1);
    assert.deepEqual([last.type, last.role, last.is_type_switched], ["error", "assistant", true]);
    assert.ok(last.error instanceof ModelError);
    assert.match(last.content, /the model broke/);
    assert.deepEqual(agent.getMessages(), []);
    await agent.delete();
  });

  test("agent.print writes what a terminal shows", async () => {
    const agent = await defineAgent(rt, scripted(callsOf(["add", { a: 1, b: 2 }]), { text: "It is 3." }), {
      tools: [ADD],
    });
    let printed = "";
    const out = new Writable({
      write(chunk, _encoding, done) {
        printed += chunk;
        done();
      },
    });
    for await (const resp of agent.query("1 + 2?")) agent.print(resp, out);
    assert.equal(
      printed,
      '\n[tool call] {"id":"call_1","type":"function","function":{"name":"add","arguments":{"a":1,"b":2}}}\n' +
        '\n[tool result] {"tool_call_id":"call_1","name":"add","result":3}\n' +
        "\nIt is 3.",
    );
    await agent.delete();
  });
});

describe("content and models", () => {
  test("images and audio go to the model as the content plugins' parts", async () => {
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==",
      "base64",
    );
    const image = ImageContent.fromBytes(png);
    assert.ok(image instanceof ImageContent); // Ailoy 0.1's class, its instance the wire's part
    assert.deepEqual({ ...image }, {
      type: "image_url",
      image_url: { url: `data:image/png;base64,${png.toString("base64")}` },
    });
    const url = ImageContent.fromUrl("https://example.org/a.jpg");
    assert.deepEqual({ ...url }, { type: "image_url", image_url: { url: "https://example.org/a.jpg" } });
    const audio = await AudioContent.fromBytes(Buffer.from("RIFF....WAVE"), "WAV");
    assert.deepEqual({ ...audio }, {
      type: "input_audio",
      input_audio: { data: Buffer.from("RIFF....WAVE").toString("base64"), format: "wav" },
    });
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    const responses = await collect(agent.query(["What is in this image?", image, url, audio]));
    assert.equal(text(responses), "What is in this image?");
    assert.deepEqual(
      agent.getMessages()[0].content.map((p) => p.type),
      ["text", "image_url", "image_url", "input_audio"],
    );
    await agent.delete();
  });

  test("bad content is refused at once, naming the field", async () => {
    const field = (f) => (e) => e instanceof InvalidInputError && e.field === f;
    assert.throws(() => ImageContent.fromUrl("file:///etc/passwd"), field("url"));
    assert.throws(() => ImageContent.fromBytes(Buffer.from("not an image")), field("data"));
    assert.throws(() => ImageContent.fromBytes(Buffer.from([0xff, 0xd8, 0xff, 0]), "image/png"), field("mime_type"));
    await assert.rejects(AudioContent.fromBytes(Buffer.alloc(0), "wav"), field("data"));
    await assert.rejects(ImageContent.fromSharp({}), field("image"));
    const agent = await defineAgent(rt, LocalModel({ id: "test" }));
    const [error] = await collect(agent.query(["hi", 42]));
    assert.equal(error.type, "error");
    assert.ok(field("message[1]")(error.error));
    await agent.delete();
  });

  test("bad agents are refused, naming the field", async () => {
    await assert.rejects(defineAgent(rt, "test"), (e) => e instanceof InvalidInputError && e.field === "model");
    await assert.rejects(
      defineAgent(rt, LocalModel({ id: "test" }), { tools: [{ name: "has space", run() {} }] }),
      (e) => e instanceof InvalidInputError && e.field === "tools[0].name",
    );
    await assert.rejects(
      defineAgent(rt, LocalModel({ id: "test" }), { tools: [{ name: "x" }] }),
      (e) => e instanceof InvalidInputError && e.field === "tools[0].run",
    );
    assert.throws(() => APIModel({}), (e) => e instanceof InvalidInputError && e.field === "id");
    await assert.rejects(defineAgent(rt, APIModel({ id: "no-such-model" })), UnknownModelError);
  });

  test("an API key is sent to the server only, never shown", async () => {
    const key = "sk-node-test-secret-0123456789";
    const model = APIModel({ id: "gpt-4o", apiKey: key });
    assert.ok(!inspect(model).includes(key));
    assert.ok(!JSON.stringify(model).includes(key));
    assert.ok(!String(model).includes(key));
    const agent = await defineAgent(rt, model);
    // Nothing reaches the internet here: the provider call fails, its error has no key.
    const responses = await collect(agent.query(`say ${key}`));
    const last = responses.at(-1);
    assert.equal(last.type, "error");
    assert.ok(!last.content.includes(key));
    assert.ok(!JSON.stringify(last.error.details).includes(key));
    await agent.delete();
  });
});
