/**
 * `defineAgent`, `LocalModel`, `APIModel` and `Agent`: the seeds' agent API. The agent
 * loop runs here, one stateless step at a time on the server (`POST /ferrule/v1/agent_step`,
 * execute-agent-step-api): the server streams the model's text and reasoning and returns
 * the assistant message with the tool calls it requests; this process runs those tools
 * (JavaScript functions, concurrently), appends their results and asks for the next step,
 * until the model answers without tools.
 */

import { randomUUID } from "node:crypto";

import {
  type AudioPart,
  type ContentPart,
  type ImagePart,
  ImageContent,
  isSharpImage,
} from "./content.js";
import {
  FerruleError,
  InvalidInputError,
  RemoteError,
  RequestCancelledError,
  ToolError,
} from "./errors.js";
import type { JsonObject, Runtime } from "./runtime.js";

// -- models ------------------------------------------------------------------------------

/** A model to define on the server: routed there as Python's `LocalModel` / `APIModel`. */
export class ModelSpec {
  readonly local: boolean;
  readonly id: string | undefined;
  readonly provider: string | undefined;
  readonly options: JsonObject;
  readonly #apiKey: string | undefined;

  constructor(init: {
    local: boolean;
    id?: string;
    provider?: string;
    apiKey?: string;
    options?: JsonObject;
  }) {
    this.local = init.local;
    this.id = init.id;
    this.provider = init.provider;
    this.options = init.options ?? {};
    this.#apiKey = init.apiKey;
  }

  /** The `define_model` request's fields (with the API key: only ever sent to the server). */
  toRequest(name: string): JsonObject {
    const body: JsonObject = { name, local: this.local, options: this.options };
    if (this.id !== undefined) body["model"] = this.id;
    if (this.provider !== undefined) body["provider"] = this.provider;
    if (this.#apiKey !== undefined) body["api_key"] = this.#apiKey;
    return body;
  }

  toString(): string {
    const kind = this.local ? "LocalModel" : "APIModel";
    return `${kind}(${JSON.stringify(this.id ?? "default")}${this.provider ? `, provider=${this.provider}` : ""})`;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  toJSON(): JsonObject {
    return { local: this.local, id: this.id, provider: this.provider };
  }
}

/** A model run by the server's machine: `LocalModel({ id: "Qwen/Qwen3-0.6B" })`; no id: the offline default. */
export function LocalModel(init: { id?: string; options?: JsonObject } = {}): ModelSpec {
  return new ModelSpec({ local: true, ...init });
}

/** A model behind a provider's API: `APIModel({ id: "gpt-4o", apiKey })`; `provider` for ids without a known prefix. */
export function APIModel(init: {
  id: string;
  apiKey?: string;
  provider?: string;
  options?: JsonObject;
}): ModelSpec {
  if (!init || typeof init.id !== "string" || !init.id) {
    throw InvalidInputError.forField("an API model needs its id", "id");
  }
  return new ModelSpec({ local: false, ...init });
}

// -- messages and responses ----------------------------------------------------------------

export interface ToolCallRequest {
  id: string;
  type: "function";
  function: { name: string; arguments: any };
}

export interface Message {
  role: "system" | "user" | "assistant" | "tool";
  content: ContentPart[];
  reasoning?: { type: "text"; text: string }[];
  tool_calls?: ToolCallRequest[];
  tool_call_id?: string;
}

export type ResponseType = "output_text" | "reasoning" | "tool_call" | "tool_call_result" | "error";

/** One streamed piece of a query (agent-guide, "Agent Responses"). */
export interface AgentResponse {
  type: ResponseType;
  role: "assistant" | "tool";
  /** True on the first response of a new type: time for a new message box. */
  is_type_switched: boolean;
  /** A string for output_text, reasoning and error; an object for tool_call and tool_call_result. */
  content: any;
  /** The typed error of an `error` response. */
  error?: FerruleError;
}

// -- tools ---------------------------------------------------------------------------------

export interface ToolContext {
  toolCallId: string;
  /** Aborted when the run is cancelled (the consumer stopped, or the query's signal). */
  signal: AbortSignal;
}

/** A tool the model may call, run in this process. */
export interface Tool {
  name: string;
  description?: string;
  /** JSON schema of the arguments object. */
  parameters?: JsonObject;
  run: (args: any, context: ToolContext) => unknown;
  /** Ask the agent's (or the query's) `confirm` before each call; without one the call is declined. */
  requiresConfirmation?: boolean;
  /** Milliseconds a call may take (default: the agent's `toolTimeoutMs`, 60 000). */
  timeoutMs?: number;
}

/** Decides whether a tool call that needs confirmation runs. */
export type Confirm = (call: ToolCallRequest) => boolean | Promise<boolean>;

export interface AgentOptions {
  systemMessage?: string;
  tools?: Tool[];
  confirm?: Confirm;
  /** Default milliseconds per tool call (null: none). */
  toolTimeoutMs?: number | null;
  /** Passed to the model's `infer`: `temperature`, `max_tokens`, `top_p`, `stop`. */
  options?: JsonObject;
}

export interface QueryOptions {
  /** Ask the model to reason first (true, or an effort such as "high"). */
  reasoning?: boolean | string;
  /** Aborting it cancels the run: its model stream and its running tools. */
  signal?: AbortSignal;
  /** Overrides the agent's `confirm` for this query. */
  confirm?: Confirm;
}

export type QueryInput = string | Array<string | ContentPart | unknown>;

function checkTool(tool: Tool, index: number): Tool {
  if (typeof tool !== "object" || tool === null) {
    throw InvalidInputError.forField("a tool is an object with a name and a run function", `tools[${index}]`);
  }
  if (typeof tool.name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) {
    throw InvalidInputError.forField("a tool name is 1-64 letters, digits, _ or -", `tools[${index}].name`);
  }
  if (typeof tool.run !== "function") {
    throw InvalidInputError.forField("must be a function", `tools[${index}].run`);
  }
  return tool;
}

/** Define an agent: its model becomes a component of `rt` (deleted by `agent.delete()` or `rt.stop()`). */
export async function defineAgent(rt: Runtime, model: ModelSpec, options: AgentOptions = {}): Promise<Agent> {
  if (!(model instanceof ModelSpec)) {
    throw InvalidInputError.forField("expected LocalModel({...}) or APIModel({...})", "model");
  }
  const agent = new Agent(rt, model, options);
  await rt.request("define_model", model.toRequest(agent.component));
  rt.adopt(agent.component);
  return agent;
}

async function userMessage(input: QueryInput): Promise<Message> {
  const items = Array.isArray(input) ? input : [input];
  const content: ContentPart[] = [];
  for (const [index, item] of items.entries()) {
    if (typeof item === "string") {
      content.push({ type: "text", text: item });
    } else if (isSharpImage(item)) {
      content.push(await ImageContent.fromSharp(item));
    } else if (typeof item === "object" && item !== null && typeof (item as { type?: unknown }).type === "string") {
      content.push(item as ImagePart | AudioPart);
    } else {
      throw InvalidInputError.forField(
        "expected a string, ImageContent, AudioContent or a sharp image",
        Array.isArray(input) ? `message[${index}]` : "message",
      );
    }
  }
  if (content.length === 0) throw InvalidInputError.forField("must not be empty", "message");
  return { role: "user", content };
}

interface StepItem {
  type: "output_text" | "reasoning" | "step";
  content?: string;
  message?: Message;
  tool_requests?: ToolCallRequest[];
}

/** An agent: a model on the server, tools in this process, and the conversation so far. */
export class Agent {
  readonly rt: Runtime;
  readonly model: ModelSpec;
  /** The model's component on the server. */
  readonly component: string;
  systemMessage: string | undefined;
  #tools = new Map<string, Tool>();
  #confirm: Confirm | undefined;
  #toolTimeoutMs: number | null;
  #options: JsonObject;
  #history: Message[] = [];
  #deleted = false;

  constructor(rt: Runtime, model: ModelSpec, options: AgentOptions = {}) {
    this.rt = rt;
    this.model = model;
    this.component = `agent-${randomUUID().slice(0, 12)}`;
    this.systemMessage = options.systemMessage;
    this.#confirm = options.confirm;
    this.#toolTimeoutMs = options.toolTimeoutMs === undefined ? 60_000 : options.toolTimeoutMs;
    this.#options = options.options ?? {};
    (options.tools ?? []).forEach((tool, index) => this.addTool(tool, index));
  }

  addTool(tool: Tool, index = this.#tools.size): void {
    checkTool(tool, index);
    if (this.#tools.has(tool.name)) {
      throw InvalidInputError.forField(`two tools are named ${JSON.stringify(tool.name)}`, `tools[${index}].name`);
    }
    this.#tools.set(tool.name, tool);
  }

  get tools(): Tool[] {
    return [...this.#tools.values()];
  }

  #system(): Message[] {
    return this.systemMessage ? [{ role: "system", content: [{ type: "text", text: this.systemMessage }] }] : [];
  }

  /** The conversation so far (the system message first, if any). */
  getMessages(): Message[] {
    return [...this.#system(), ...this.#history];
  }

  /** Forget the conversation (the system message stays). */
  clearMessages(): void {
    this.#history = [];
  }

  /**
   * Ask the agent: streams `AgentResponse`s as the model writes, calls tools and reads
   * their results. A failure ends the stream with one `error` response. Stopping the
   * iteration, or aborting `signal`, cancels the run. The conversation is kept when the
   * run completes.
   */
  async *query(input: QueryInput, options: QueryOptions = {}): AsyncGenerator<AgentResponse, void, undefined> {
    const controller = new AbortController();
    const outer = options.signal;
    const onAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onAbort, { once: true });
    if (outer?.aborted) onAbort();
    const signal = controller.signal;
    let last: ResponseType | undefined;
    const respond = (type: ResponseType, role: "assistant" | "tool", content: unknown, error?: FerruleError): AgentResponse => {
      const response: AgentResponse = { type, role, is_type_switched: type !== last, content };
      if (error !== undefined) response.error = error;
      last = type;
      return response;
    };
    const confirm = options.confirm ?? this.#confirm;
    const tools = this.tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        description: t.description ?? "",
        parameters: t.parameters ?? { type: "object", properties: {} },
      },
    }));
    try {
      if (this.#deleted) throw new RemoteError("this agent was deleted");
      const messages = [...this.#history, await userMessage(input)];
      for (;;) {
        const body: JsonObject = {
          name: this.component,
          messages: [...this.#system(), ...messages],
          options: this.#options,
        };
        if (tools.length) body["tools"] = tools;
        if (options.reasoning) body["reasoning"] = options.reasoning;
        let step: StepItem | undefined;
        for await (const item of this.rt.stream("agent_step", body, { signal }) as AsyncIterable<StepItem>) {
          if (item.type === "step") step = item;
          else yield respond(item.type, "assistant", item.content);
        }
        if (step?.message === undefined) throw new RemoteError("the agent step ended without its message");
        messages.push(step.message);
        const calls = step.tool_requests ?? [];
        for (const call of calls) yield respond("tool_call", "assistant", call);
        if (calls.length === 0) break;
        // Concurrently; results go back in the calls' order.
        const outcomes = await Promise.all(calls.map((call) => this.#runTool(call, signal, confirm)));
        if (signal.aborted) throw new RequestCancelledError("the run was cancelled");
        for (const [index, call] of calls.entries()) {
          const outcome = outcomes[index] as ToolOutcome;
          messages.push({ role: "tool", content: [{ type: "text", text: outcome.text }], tool_call_id: call.id });
          yield respond("tool_call_result", "tool", outcome.content);
        }
      }
      this.#history = messages;
    } catch (error) {
      const typed =
        error instanceof FerruleError
          ? error
          : signal.aborted
            ? new RequestCancelledError("the run was cancelled")
            : new FerruleError(`the agent run failed: ${String(error)}`);
      yield respond("error", "assistant", typed.message, typed);
    } finally {
      controller.abort(); // a consumer that stopped early cancels the model and the tools
      outer?.removeEventListener("abort", onAbort);
    }
  }

  async #runTool(call: ToolCallRequest, signal: AbortSignal, confirm: Confirm | undefined): Promise<ToolOutcome> {
    const name = call.function.name;
    const content: JsonObject = { tool_call_id: call.id, name };
    let error: string;
    try {
      const tool = this.#tools.get(name);
      if (tool === undefined) {
        throw new ToolError(`there is no tool named ${JSON.stringify(name)}; the tools are: ${[...this.#tools.keys()].join(", ") || "none"}`);
      }
      if (tool.requiresConfirmation && !(confirm !== undefined && (await confirm(call)))) {
        throw new ToolError(confirm === undefined ? "the user declined this tool call: no one was asked (give the agent a confirm function)" : "the user declined this tool call");
      }
      const args = call.function.arguments;
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        throw new ToolError("the arguments must be a JSON object");
      }
      const timeoutMs = tool.timeoutMs ?? this.#toolTimeoutMs;
      const result = await settle(Promise.resolve().then(() => tool.run(args, { toolCallId: call.id, signal })), timeoutMs, signal, name);
      content["result"] = result === undefined ? null : result;
      return { content, text: typeof result === "string" ? result : JSON.stringify(result ?? null) };
    } catch (caught) {
      if (caught instanceof RequestCancelledError) throw caught;
      if (caught instanceof ToolError) error = caught.message;
      else if (caught instanceof FerruleError) error = `${caught.kind}: ${caught.message}`;
      else if (caught instanceof Error) error = `${caught.name}: ${caught.message}`;
      else error = String(caught);
    }
    content["error"] = error;
    return { content, text: JSON.stringify({ error }) };
  }

  /**
   * Print a response as a terminal shows it: text as it streams, reasoning dimmed, tool
   * calls and results as JSON, errors in red (colours only on a terminal).
   */
  print(response: AgentResponse, out: NodeJS.WritableStream = process.stdout): void {
    const color = (out as { isTTY?: boolean }).isTTY === true;
    const paint = (text: string, code: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
    const { type, content } = response;
    if (type === "output_text") {
      out.write((response.is_type_switched ? "\n" : "") + content);
    } else if (type === "reasoning") {
      out.write((response.is_type_switched ? paint("\n[reasoning]\n", "2") : "") + paint(content, "2"));
    } else if (type === "tool_call" || type === "tool_call_result") {
      const label = type === "tool_call" ? "tool call" : "tool result";
      out.write(`${paint(`\n[${label}] `, "36")}${JSON.stringify(content)}\n`);
    } else {
      out.write(paint(`\n[error] ${content}\n`, "31"));
    }
  }

  /** Delete the agent's model component. Idempotent. */
  async delete(): Promise<void> {
    if (this.#deleted) return;
    this.#deleted = true;
    try {
      await this.rt.delete(this.component);
    } catch (error) {
      if (!(error instanceof FerruleError)) throw error; // already gone, or the runtime is
    }
  }
}

interface ToolOutcome {
  content: JsonObject;
  text: string;
}

/** `work`'s result, or a ToolError when it outlives `timeoutMs`, or a cancellation. */
async function settle(work: Promise<unknown>, timeoutMs: number | null, signal: AbortSignal, name: string): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const limits = new Promise<never>((_, reject) => {
    if (timeoutMs !== null) {
      timer = setTimeout(() => reject(new ToolError(`the tool ${JSON.stringify(name)} did not finish within ${timeoutMs / 1000} s`)), timeoutMs);
    }
    onAbort = () => reject(new RequestCancelledError("the run was cancelled"));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([work, limits]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener("abort", onAbort);
  }
}
