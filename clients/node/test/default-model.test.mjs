// The offline default model (SmolLM2-135M-Instruct on llama.cpp, shipped by ferrule-smollm2):
// real weights, no network, through both the runtime and the agent API.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { LocalModel, defineAgent, startRuntime } from "ferrule";

import { collect } from "./helpers.mjs";

let rt;
before(async () => {
  rt = await startRuntime();
});
after(async () => {
  await rt.stop();
});

test("an agent on LocalModel() answers offline, streaming", async () => {
  const agent = await defineAgent(rt, LocalModel(), {
    systemMessage: "You are a helpful assistant.",
    options: { max_tokens: 24, temperature: 0 },
  });
  const responses = await collect(agent.query("What is the capital of France?"));
  assert.ok(responses.length > 1, JSON.stringify(responses));
  assert.ok(responses.every((r) => r.type === "output_text"), JSON.stringify(responses));
  const answer = responses.map((r) => r.content).join("");
  assert.ok(answer.trim().length > 0);
  const messages = agent.getMessages();
  assert.equal(messages.at(-1).role, "assistant");
  assert.equal(messages.at(-1).content[0].text, answer);
  await agent.delete();
});

test("callIterMethod streams the default model's infer", async () => {
  await rt.define("local_language_model", "smol", {});
  const items = await collect(
    rt.callIterMethod("smol", "infer", {
      messages: [{ role: "user", content: [{ type: "text", text: "Say hello." }] }],
      max_tokens: 8,
      temperature: 0,
    }),
  );
  const last = items.at(-1);
  assert.ok(["stop", "length"].includes(last.finish_reason), JSON.stringify(last));
  assert.ok(items.map((i) => i.message.content[0]?.text ?? "").join("").length > 0);
  await rt.delete("smol");
});
