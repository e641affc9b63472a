// The official `@anthropic-ai/sdk` Node package against ferrule serve's /v1/messages,
// as its README uses it (the token is its API key, sent as x-api-key).
import assert from "node:assert/strict";
import { test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";

const client = new Anthropic({
  baseURL: process.env.FERRULE_URL,
  apiKey: process.env.FERRULE_KEY,
  maxRetries: 0,
});
const user = (content) => ({ role: "user", content });
const weather = {
  name: "get_weather",
  description: "The weather in a city.",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

test("chat", async () => {
  const message = await client.messages.create({
    model: "test", max_tokens: 256, messages: [user("Hello there")],
  });
  assert.equal(message.content[0].text, "Hello there");
});

test("streaming", async () => {
  const pieces = [];
  const stream = client.messages
    .stream({ model: "test", max_tokens: 256, messages: [user("Hello there")] })
    .on("text", (text) => pieces.push(text));
  const final = await stream.finalMessage();
  assert.ok(pieces.length > 1);
  assert.equal(pieces.join(""), final.content[0].text);
});

test("multi-turn with thinking put back", async () => {
  const thinking = { type: "enabled", budget_tokens: 1024 };
  const messages = [user("first question")];
  const first = await client.messages.create({ model: "test", max_tokens: 2048, messages, thinking });
  assert.equal(first.content[0].type, "thinking");
  messages.push({ role: "assistant", content: first.content }, user("second question"));
  const second = await client.messages.create({ model: "test", max_tokens: 2048, messages, thinking });
  assert.equal(second.content.at(-1).text, "second question");
});

for (const streamed of [false, true]) {
  test(`tools round trip${streamed ? " (streamed)" : ""}`, async () => {
    const options = { model: "tool-bot", max_tokens: 256, tools: [weather] };
    const ask = (messages) =>
      streamed
        ? client.messages.stream({ ...options, messages }).finalMessage()
        : client.messages.create({ ...options, messages });
    const messages = [user("Oslo")];
    const first = await ask(messages);
    const call = first.content.find((block) => block.type === "tool_use");
    messages.push(
      { role: "assistant", content: first.content },
      user([{ type: "tool_result", tool_use_id: call.id, content: `3 degrees in ${call.input.city}` }]),
    );
    const final = await ask(messages);
    assert.equal(final.content.at(-1).text, "The tool said: 3 degrees in Oslo");
  });
}

test("structured output", async () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, population: { type: "integer" } },
    required: ["name", "population"],
    additionalProperties: false,
  };
  const message = await client.messages.create({
    model: "test",
    max_tokens: 256,
    messages: [user("Oslo")],
    output_config: { format: { type: "json_schema", schema } },
  });
  assert.deepEqual(JSON.parse(message.content[0].text), { name: "Oslo", population: 0 });
});

test("count tokens", async () => {
  const counted = await client.messages.countTokens({ model: "test", messages: [user("three words here")] });
  assert.equal(counted.input_tokens, 3);
});
