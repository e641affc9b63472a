// The official `openai` Node package against ferrule serve, as its README uses it.
import assert from "node:assert/strict";
import { test } from "node:test";
import OpenAI from "openai";

const client = new OpenAI({
  baseURL: `${process.env.FERRULE_URL}/v1`,
  apiKey: process.env.FERRULE_KEY,
  maxRetries: 0,
});
const user = (content) => ({ role: "user", content });
const weather = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const runTool = (call) => `3 degrees in ${JSON.parse(call.function.arguments).city}`;

test("chat", async () => {
  const reply = await client.chat.completions.create({ model: "test", messages: [user("Hello there")] });
  assert.equal(reply.choices[0].message.content, "Hello there");
});

test("streaming", async () => {
  const stream = await client.chat.completions.create({
    model: "test", messages: [user("Hello there")], stream: true,
  });
  const pieces = [];
  for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta?.content ?? "");
  assert.equal(pieces.join(""), "Hello there");
});

test("multi-turn with reasoning put back", async () => {
  const messages = [user("first question")];
  const first = await client.chat.completions.create({
    model: "test", messages, reasoning_effort: "low",
  });
  assert.ok(first.choices[0].message.reasoning_content);
  messages.push(first.choices[0].message, user("second question"));
  const second = await client.chat.completions.create({
    model: "test", messages, reasoning_effort: "low",
  });
  assert.equal(second.choices[0].message.content, "second question");
});

test("tools round trip", async () => {
  const messages = [user("Oslo")];
  const first = await client.chat.completions.create({ model: "tool-bot", messages, tools: [weather] });
  const [call] = first.choices[0].message.tool_calls;
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: runTool(call) });
  const final = await client.chat.completions.create({ model: "tool-bot", messages, tools: [weather] });
  assert.equal(final.choices[0].message.content, "The tool said: 3 degrees in Oslo");
});

test("streamed tools round trip", async () => {
  const messages = [user("Oslo")];
  const first = await client.chat.completions
    .stream({ model: "tool-bot", messages, tools: [weather] })
    .finalMessage();
  const [call] = first.tool_calls;
  messages.push(first, { role: "tool", tool_call_id: call.id, content: runTool(call) });
  const final = await client.chat.completions
    .stream({ model: "tool-bot", messages, tools: [weather] })
    .finalContent();
  assert.equal(final, "The tool said: 3 degrees in Oslo");
});

test("structured output", async () => {
  const schema = {
    type: "object",
    properties: { name: { type: "string" }, population: { type: "integer" } },
    required: ["name", "population"],
    additionalProperties: false,
  };
  const reply = await client.chat.completions.parse({
    model: "test",
    messages: [user("Oslo")],
    response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
  });
  assert.deepEqual(reply.choices[0].message.parsed, { name: "Oslo", population: 0 });
});

test("embeddings", async () => {
  const reply = await client.embeddings.create({ model: "all-MiniLM-L6-v2", input: ["a cat", "a dog"] });
  assert.deepEqual(reply.data.map((d) => d.embedding.length), [384, 384]);
});

test("responses API", async () => {
  const reply = await client.responses.create({ model: "test", input: "Hello there" });
  assert.equal(reply.output_text, "Hello there");
  const tool = { type: "function", ...weather.function };
  const first = await client.responses.stream({ model: "tool-bot", input: "Oslo", tools: [tool] }).finalResponse();
  const [call] = first.output;
  const answer = await client.responses.create({
    model: "tool-bot",
    tools: [tool],
    input: [user("Oslo"), call, { type: "function_call_output", call_id: call.call_id, output: "3 degrees" }],
  });
  assert.equal(answer.output_text, "The tool said: 3 degrees");
});
