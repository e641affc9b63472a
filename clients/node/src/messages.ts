/**
 * Ailoy 0.2's message shapes (`{ role, contents, thinking, tool_calls, id }`, parts of
 * type text / function / value / image, and their streamed deltas) and their conversion
 * from and to the messages ferrule's agent step speaks (`{ role, content, reasoning,
 * tool_calls, tool_call_id }`, OpenAI's part shapes).
 */

import type { Message as StepMessage } from "./agent.js";
import { type ContentPart, ImageContent } from "./content.js";
import { InvalidInputError } from "./errors.js";

export type Role = "system" | "user" | "assistant" | "tool";

/** An image's colour space (Ailoy 0.2's, for binary images). */
export type PartImageColorspace = "grayscale" | "rgb" | "rgba";

/** Bytes, as Ailoy 0.2 types them. */
export type Bytes = Buffer;

/** An image in a part: ferrule sends images by URL (a public one, or a `data:` URL of the bytes). */
export type PartImage = { type: "url"; url: string };

/** A function call in a part. */
export interface PartFunction {
  name: string;
  arguments: any;
}

export type Part =
  | { type: "text"; text: string }
  | { type: "function"; id?: string; function: PartFunction }
  | { type: "value"; value: any }
  | { type: "image"; image: PartImage };

export type PartDeltaFunction =
  | { type: "verbatim"; text: string }
  | { type: "with_string_args"; name: string; arguments: string }
  | { type: "with_parsed_args"; name: string; arguments: any };

export type PartDelta =
  | { type: "text"; text: string }
  | { type: "function"; id?: string; function: PartDeltaFunction }
  | { type: "value"; value: any }
  | { type: "null" };

/** A whole message (Ailoy 0.2's `Message`). */
export interface AgentMessage {
  role: Role;
  contents: Part[];
  id?: string;
  thinking?: string;
  tool_calls?: Part[];
  signature?: string;
}

/** A message as the caller may write it: `contents` as a string is one text part. */
export interface SingleTextMessage {
  role: Role;
  contents: string;
}

export type Messages = string | Array<AgentMessage | SingleTextMessage>;

export interface MessageDelta {
  role?: Role;
  contents: PartDelta[];
  id?: string;
  thinking?: string;
  tool_calls: PartDelta[];
  signature?: string;
}

export type FinishReason = { type: "stop" } | { type: "length" } | { type: "tool_call" } | { type: "refusal"; reason: string };

export interface MessageOutput {
  message: AgentMessage;
  finish_reason: FinishReason;
}

export interface MessageDeltaOutput {
  delta: MessageDelta;
  finish_reason?: FinishReason;
}

/** A tool call of a step (`{ id, function: { name, arguments } }`, arguments parsed). */
interface StepCall {
  id: string;
  function: { name: string; arguments: any };
}

/** Why a step ended, in Ailoy 0.2's words (a step that calls tools ends with `tool_call`). */
export function finishReason(reason: string | undefined, calls: StepCall[]): FinishReason {
  if (calls.length > 0 || reason === "tool_calls" || reason === "tool_call") return { type: "tool_call" };
  if (reason === "length") return { type: "length" };
  return { type: "stop" };
}

/** A streamed piece of a step's text or thinking, as Ailoy 0.2's delta. */
export function textDelta(type: "output_text" | "reasoning", content: string): MessageDeltaOutput {
  return {
    delta:
      type === "output_text"
        ? { role: "assistant", contents: [{ type: "text", text: content }], tool_calls: [] }
        : { role: "assistant", contents: [], thinking: content, tool_calls: [] },
  };
}

/** The end of a step: its tool calls (arguments parsed) and why it ended. */
export function endDelta(calls: StepCall[], reason: string | undefined): MessageDeltaOutput {
  const tool_calls: PartDelta[] = calls.map((call) => ({
    type: "function",
    id: call.id,
    function: { type: "with_parsed_args", name: call.function.name, arguments: call.function.arguments },
  }));
  return { delta: { role: "assistant", contents: [], tool_calls }, finish_reason: finishReason(reason, calls) };
}

export interface MessageOutputIteratorResult {
  value: MessageOutput;
  done: boolean;
}

export interface MessageDeltaOutputIteratorResult {
  value: MessageDeltaOutput;
  done: boolean;
}

/** An async iterator over a run's outputs (`for await`, or `next()`); leaving it early cancels the run. */
class OutputIterator<T> implements AsyncIterableIterator<T> {
  readonly #source: AsyncGenerator<T, void, undefined>;

  constructor(source: AsyncGenerator<T, void, undefined>) {
    this.#source = source;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, void>> {
    return this.#source.next();
  }

  return(): Promise<IteratorResult<T, void>> {
    return this.#source.return(undefined);
  }

  throw(error?: unknown): Promise<IteratorResult<T, void>> {
    return this.#source.throw(error);
  }
}

/** What Ailoy 0.2's `agent.run(...)` returns: whole messages, as each is done. */
export class MessageOutputIterator extends OutputIterator<MessageOutput> {}

/** What Ailoy 0.2's `agent.runDelta(...)` returns: the deltas as they stream. */
export class MessageDeltaOutputIterator extends OutputIterator<MessageDeltaOutput> {}

// -- images ----------------------------------------------------------------------------------

/** An image part from base64 bytes (PNG, JPEG, WEBP or GIF; the type is read from them). */
export function imageFromBase64(data: string): Part {
  if (typeof data !== "string" || !data) throw InvalidInputError.forField("expected base64 image bytes", "data");
  return imageFromBytes(Buffer.from(data, "base64"));
}

export function imageFromBytes(data: Uint8Array): Part {
  return { type: "image", image: { type: "url", url: ImageContent.fromBytes(data).image_url.url } };
}

/** An image part at a public http(s) URL (the provider fetches it). */
export function imageFromUrl(url: string): Part {
  return { type: "image", image: { type: "url", url: ImageContent.fromUrl(url).image_url.url } };
}

// -- conversion --------------------------------------------------------------------------------

function stepPart(part: Part, where: string): ContentPart {
  if (part?.type === "text" && typeof part.text === "string") return { type: "text", text: part.text };
  if (part?.type === "image" && typeof part.image?.url === "string") return { type: "image_url", image_url: { url: part.image.url } };
  if (part?.type === "value") return { type: "text", text: typeof part.value === "string" ? part.value : JSON.stringify(part.value) };
  throw InvalidInputError.forField("expected a text, image or value part", where);
}

/** Ailoy 0.2 messages (or one user string) as the agent step's messages. */
export function fromAgentMessages(messages: Messages): StepMessage[] {
  if (typeof messages === "string") return [{ role: "user", content: [{ type: "text", text: messages }] }];
  if (!Array.isArray(messages) || messages.length === 0) {
    throw InvalidInputError.forField("expected a string or a non-empty list of messages", "messages");
  }
  return messages.map((message, i) => {
    const where = `messages[${i}]`;
    if (!["system", "user", "assistant", "tool"].includes(message?.role)) {
      throw InvalidInputError.forField("role must be system, user, assistant or tool", `${where}.role`);
    }
    const contents = typeof message.contents === "string" ? [{ type: "text" as const, text: message.contents }] : message.contents;
    if (!Array.isArray(contents)) throw InvalidInputError.forField("expected a string or a list of parts", `${where}.contents`);
    const out: StepMessage = { role: message.role, content: contents.map((p, j) => stepPart(p, `${where}.contents[${j}]`)) };
    const full = message as AgentMessage;
    if (full.thinking) out.reasoning = [{ type: "text", text: full.thinking }];
    if (full.tool_calls?.length) {
      out.tool_calls = full.tool_calls.map((call, j) => {
        if (call.type !== "function") throw InvalidInputError.forField("a tool call is a function part", `${where}.tool_calls[${j}]`);
        return { id: call.id ?? "", type: "function", function: { name: call.function.name, arguments: call.function.arguments } };
      });
    }
    if (message.role === "tool" && full.id !== undefined) out.tool_call_id = full.id;
    return out;
  });
}

function parsedOrText(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A step's message in Ailoy 0.2's shape (a tool result as a value part). */
export function toAgentMessage(message: StepMessage): AgentMessage {
  const contents: Part[] = message.content.map((part) => {
    if (part.type === "text") return message.role === "tool" ? { type: "value", value: parsedOrText(part.text) } : { type: "text", text: part.text };
    if (part.type === "image_url") return { type: "image", image: { type: "url", url: part.image_url.url } };
    return { type: "value", value: part };
  });
  const out: AgentMessage = { role: message.role, contents };
  const thinking = (message.reasoning ?? []).map((r) => r.text).join("");
  if (thinking) out.thinking = thinking;
  if (message.tool_calls?.length) {
    out.tool_calls = message.tool_calls.map((call) => ({
      type: "function",
      id: call.id,
      function: { name: call.function.name, arguments: call.function.arguments },
    }));
  }
  if (message.tool_call_id !== undefined) out.id = message.tool_call_id;
  return out;
}

// -- deltas ----------------------------------------------------------------------------------

function mergeParts(parts: PartDelta[], incoming: PartDelta[]): PartDelta[] {
  const out = [...parts];
  for (const part of incoming) {
    const last = out[out.length - 1];
    if (last?.type === "text" && part.type === "text") {
      out[out.length - 1] = { type: "text", text: last.text + part.text };
    } else if (
      last?.type === "function" &&
      part.type === "function" &&
      (part.id === undefined || part.id === last.id) &&
      last.function.type !== "with_parsed_args" &&
      part.function.type !== "with_parsed_args"
    ) {
      // Streamed arguments: fragments of one call's JSON text.
      const text = (f: PartDeltaFunction) => (f.type === "verbatim" ? f.text : f.arguments);
      const name = last.function.type === "with_string_args" ? last.function.name : part.function.type === "with_string_args" ? part.function.name : undefined;
      const merged: PartDeltaFunction =
        name === undefined ? { type: "verbatim", text: text(last.function) + text(part.function) } : { type: "with_string_args", name, arguments: text(last.function) + text(part.function) };
      out[out.length - 1] = last.id === undefined ? { type: "function", function: merged } : { type: "function", id: last.id, function: merged };
    } else if (part.type !== "null") {
      out.push(part);
    }
  }
  return out;
}

/** `a` followed by `b` (text joined, a call's argument fragments joined); two roles are an error. */
export function accumulateMessageDelta(a: MessageDelta, b: MessageDelta): MessageDelta {
  if (a.role !== undefined && b.role !== undefined && a.role !== b.role) {
    throw InvalidInputError.forField(`cannot join a ${a.role} delta with a ${b.role} delta`, "role");
  }
  const out: MessageDelta = { contents: mergeParts(a.contents ?? [], b.contents ?? []), tool_calls: mergeParts(a.tool_calls ?? [], b.tool_calls ?? []) };
  const role = b.role ?? a.role;
  if (role !== undefined) out.role = role;
  const thinking = (a.thinking ?? "") + (b.thinking ?? "");
  if (thinking) out.thinking = thinking;
  const id = b.id ?? a.id;
  if (id !== undefined) out.id = id;
  const signature = b.signature ?? a.signature;
  if (signature !== undefined) out.signature = signature;
  return out;
}

function finishPart(part: PartDelta, where: string): Part {
  if (part.type === "text" || part.type === "value") return part;
  if (part.type === "function") {
    const f = part.function;
    let call: { name: string; arguments: any };
    if (f.type === "with_parsed_args") call = { name: f.name, arguments: f.arguments };
    else if (f.type === "with_string_args") call = { name: f.name, arguments: f.arguments ? JSON.parse(f.arguments) : {} };
    else {
      const parsed = JSON.parse(f.text) as { name?: string; arguments?: unknown };
      if (typeof parsed.name !== "string") throw InvalidInputError.forField("a function call without a name", where);
      call = { name: parsed.name, arguments: parsed.arguments ?? {} };
    }
    return part.id === undefined ? { type: "function", function: call } : { type: "function", id: part.id, function: call };
  }
  throw InvalidInputError.forField("an empty part cannot be finished", where);
}

/** The message the accumulated `delta` describes; it needs a role. */
export function finishMessageDelta(delta: MessageDelta): AgentMessage {
  if (delta.role === undefined) throw InvalidInputError.forField("the delta has no role yet", "role");
  const message: AgentMessage = { role: delta.role, contents: (delta.contents ?? []).map((p, i) => finishPart(p, `contents[${i}]`)) };
  if (delta.thinking) message.thinking = delta.thinking;
  if (delta.tool_calls?.length) message.tool_calls = delta.tool_calls.map((p, i) => finishPart(p, `tool_calls[${i}]`));
  if (delta.id !== undefined) message.id = delta.id;
  if (delta.signature !== undefined) message.signature = delta.signature;
  return message;
}
