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
import {
  type MessageDeltaOutput,
  type MessageOutput,
  type Messages,
  fromAgentMessages,
  toAgentMessage,
} from "./messages.js";
import { type DocumentPolyfill, type Knowledge, type KnowledgeConfig, type LangModel, getDocumentPolyfill, renderDocuments } from "./models.js";
import type { JsonObject } from "./runtime.js";
import { Runtime } from "./runtime.js";
import { FunctionTool, MCPClient, type McpServerParams, type ToolDesc, presetTools } from "./tools.js";

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
  /** The agent's runtime (operator tools run there). */
  runtime: Runtime;
  /** Aborted when the run is cancelled (the consumer stopped, or the query's signal). */
  signal: AbortSignal;
}

/** A tool the model may call, run in this process (exported as the type `Tool`). */
export interface ToolSpec {
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
  tools?: Array<ToolSpec | FunctionTool>;
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

function checkTool(given: ToolSpec | FunctionTool, index: number): ToolSpec {
  const tool = given instanceof FunctionTool ? given.toSpec() : given;
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
  finish_reason?: string;
}

function finishReason(reason: string | undefined, calls: ToolCallRequest[]): MessageOutput["finish_reason"] {
  if (calls.length > 0 || reason === "tool_calls" || reason === "tool_call") return { type: "tool_call" };
  if (reason === "length") return { type: "length" };
  return { type: "stop" };
}

/** What one step of the loop produced (the public streams are views of these). */
type LoopEvent =
  | { kind: "delta"; type: "output_text" | "reasoning"; content: string }
  | { kind: "assistant"; message: Message; calls: ToolCallRequest[]; finishReason: string | undefined }
  | { kind: "tool"; call: ToolCallRequest; outcome: ToolOutcome; message: Message };

/** Options of Ailoy 0.2's `run` / `runDelta`. */
export interface RunConfig {
  inference?: {
    thinkEffort?: string;
    /** How the knowledge's documents reach the model (default: the Qwen3 polyfill). */
    documentPolyfill?: DocumentPolyfill;
    [key: string]: unknown;
  };
  knowledge?: KnowledgeConfig;
  signal?: AbortSignal;
}

/**
 * An agent: a model on the server, tools in this process, and the conversation so far.
 * `new Agent(rt, model, options)` (after `defineAgent`'s definition) is the seeds' and
 * Ailoy 0.1's; `new Agent(langModel, tools?)` is Ailoy 0.2's, on the model's runtime.
 */
export class Agent {
  readonly rt: Runtime;
  readonly model: ModelSpec;
  /** The model's component on the server. */
  readonly component: string;
  systemMessage: string | undefined;
  #tools = new Map<string, ToolSpec>();
  #mcp = new Map<string, { client: MCPClient; names: string[] }>();
  #confirm: Confirm | undefined;
  #toolTimeoutMs: number | null;
  #options: JsonObject;
  #history: Message[] = [];
  #ownsModel: boolean;
  #knowledge: Knowledge | undefined;
  #deleted = false;

  constructor(rt: Runtime, model: ModelSpec, options?: AgentOptions);
  constructor(lm: LangModel, tools?: Array<ToolSpec | FunctionTool> | null, knowledge?: Knowledge | null);
  constructor(
    first: Runtime | LangModel,
    second?: ModelSpec | Array<ToolSpec | FunctionTool> | null,
    third: AgentOptions | Knowledge | null = {},
  ) {
    let options = (third ?? {}) as AgentOptions;
    if (first instanceof Runtime) {
      this.rt = first;
      this.model = second as ModelSpec;
      this.component = `agent-${randomUUID().slice(0, 12)}`;
      this.#ownsModel = true;
    } else if (typeof first === "object" && first !== null && "component" in first && first.rt instanceof Runtime) {
      // Ailoy 0.2: the model is already defined; agents share it and never delete it.
      this.rt = first.rt;
      this.model = first.spec;
      this.component = first.component;
      this.#ownsModel = false;
      options = { tools: (second as Array<ToolSpec | FunctionTool> | null | undefined) ?? [] };
      if (third !== null && third !== undefined && "store" in third) this.#knowledge = third;
    } else {
      throw InvalidInputError.forField("expected a Runtime (then a model) or a LangModel", "lm");
    }
    this.systemMessage = options.systemMessage;
    this.#confirm = options.confirm;
    this.#toolTimeoutMs = options.toolTimeoutMs === undefined ? 60_000 : options.toolTimeoutMs;
    this.#options = options.options ?? {};
    (options.tools ?? []).forEach((tool, index) => this.addTool(tool, index));
  }

  /** Add a tool: the seeds' `{ name, run, ... }` or a `Tool.newFunction(...)` / builtin / MCP tool. */
  addTool(tool: ToolSpec | FunctionTool, index = this.#tools.size): void {
    const spec = checkTool(tool, index);
    if (this.#tools.has(spec.name)) {
      throw InvalidInputError.forField(`two tools are named ${JSON.stringify(spec.name)}`, `tools[${index}].name`);
    }
    this.#tools.set(spec.name, spec);
  }

  addTools(tools: Array<ToolSpec | FunctionTool>): void {
    tools.forEach((tool) => this.addTool(tool));
  }

  /** Remove the tool named `name`; an unknown name is an InvalidInputError. */
  removeTool(name: string): void {
    if (!this.#tools.delete(name)) {
      throw InvalidInputError.forField(`there is no tool named ${JSON.stringify(name)}`, "tool_name");
    }
  }

  removeTools(names: string[]): void {
    names.forEach((name) => this.removeTool(name));
  }

  /** Ailoy 0.2: documents each `run` retrieves for the user's last message and shows the model. */
  setKnowledge(knowledge: Knowledge): void {
    if (typeof knowledge?.retrieve !== "function") throw InvalidInputError.forField("expected a Knowledge", "knowledge");
    this.#knowledge = knowledge;
  }

  removeKnowledge(): void {
    this.#knowledge = undefined;
  }

  /** Remove every tool (MCP servers stay connected until `removeMcpServer` or `delete`). */
  clearTools(): void {
    this.#tools.clear();
  }

  /** Ailoy 0.1: a preset's tools (`"calculator"`, `"frankfurter"`, `"http_request"`). */
  addToolsFromPreset(presetName: string): void {
    this.addTools(presetTools(presetName));
  }

  /** Ailoy 0.1: a JavaScript function as a tool, described by `desc` (`name`, `description`, `parameters`). */
  addJSFunctionTool(f: (args: any) => unknown, desc: ToolDesc): void {
    if (typeof f !== "function") throw InvalidInputError.forField("must be a function", "f");
    this.addTool(new FunctionTool(desc, (args) => f(args)));
  }

  /**
   * Ailoy 0.1: start (or connect to) the MCP server `name` and add its tools, named
   * `name-tool`; `toolsToAdd` keeps only those (by the server's names).
   */
  async addToolsFromMcpServer(name: string, params: McpServerParams, options: { toolsToAdd?: string[] } = {}): Promise<void> {
    if (typeof name !== "string" || !/^[A-Za-z0-9_]{1,32}$/.test(name)) {
      throw InvalidInputError.forField("an MCP server's name is 1-32 letters, digits or _", "name");
    }
    if (this.#mcp.has(name)) throw InvalidInputError.forField(`an MCP server named ${JSON.stringify(name)} was added already`, "name");
    const client = await MCPClient.connect(params);
    const names: string[] = [];
    try {
      for (const tool of client.tools) {
        if (options.toolsToAdd !== undefined && !options.toolsToAdd.includes(tool.description.name)) continue;
        const spec = tool.toSpec();
        spec.name = `${name}-${spec.name}`;
        this.addTool(spec);
        names.push(spec.name);
      }
    } catch (error) {
      names.forEach((added) => this.#tools.delete(added));
      await client.close();
      throw error;
    }
    this.#mcp.set(name, { client, names });
  }

  /** Remove an MCP server's tools and stop its connection. */
  async removeMcpServer(name: string): Promise<void> {
    const server = this.#mcp.get(name);
    if (server === undefined) throw InvalidInputError.forField(`there is no MCP server named ${JSON.stringify(name)}`, "name");
    this.#mcp.delete(name);
    server.names.forEach((tool) => this.#tools.delete(tool));
    await server.client.close();
  }

  get tools(): ToolSpec[] {
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
    let last: ResponseType | undefined;
    const respond = (type: ResponseType, role: "assistant" | "tool", content: unknown, error?: FerruleError): AgentResponse => {
      const response: AgentResponse = { type, role, is_type_switched: type !== last, content };
      if (error !== undefined) response.error = error;
      last = type;
      return response;
    };
    const controller = new AbortController();
    try {
      if (this.#deleted) throw new RemoteError("this agent was deleted");
      const messages = [...this.#history, await userMessage(input)];
      for await (const event of this.#loop(messages, options, controller)) {
        if (event.kind === "delta") yield respond(event.type, "assistant", event.content);
        else if (event.kind === "assistant") for (const call of event.calls) yield respond("tool_call", "assistant", call);
        else yield respond("tool_call_result", "tool", event.outcome.content);
      }
      this.#history = messages;
    } catch (error) {
      const typed =
        error instanceof FerruleError
          ? error
          : controller.signal.aborted
            ? new RequestCancelledError("the run was cancelled")
            : new FerruleError(`the agent run failed: ${String(error)}`);
      yield respond("error", "assistant", typed.message, typed);
    } finally {
      controller.abort(); // a consumer that stopped early cancels the model and the tools
    }
  }

  /**
   * Ailoy 0.2: run `messages` (a string is one user message) to the end, yielding each
   * whole message (the assistant's, then each tool result) with its finish reason. Runs
   * are independent: the agent keeps no conversation between them. Failures raise.
   */
  async *run(messages: Messages, config: RunConfig = {}): AsyncGenerator<MessageOutput, void, undefined> {
    for await (const event of this.#run02(messages, config)) {
      if (event.kind === "assistant") {
        yield { message: toAgentMessage(event.message), finish_reason: finishReason(event.finishReason, event.calls) };
      } else if (event.kind === "tool") {
        yield { message: toAgentMessage(event.message), finish_reason: { type: "stop" } };
      }
    }
  }

  /** Ailoy 0.2: as `run`, as it streams: text and thinking deltas, then tool calls and results. */
  async *runDelta(messages: Messages, config: RunConfig = {}): AsyncGenerator<MessageDeltaOutput, void, undefined> {
    for await (const event of this.#run02(messages, config)) {
      if (event.kind === "delta") {
        yield {
          delta:
            event.type === "output_text"
              ? { role: "assistant", contents: [{ type: "text", text: event.content }], tool_calls: [] }
              : { role: "assistant", contents: [], thinking: event.content, tool_calls: [] },
        };
      } else if (event.kind === "assistant") {
        const delta: MessageDeltaOutput["delta"] = {
          role: "assistant",
          contents: [],
          tool_calls: event.calls.map((call) => ({
            type: "function",
            id: call.id,
            function: { type: "with_parsed_args", name: call.function.name, arguments: call.function.arguments },
          })),
        };
        yield { delta, finish_reason: finishReason(event.finishReason, event.calls) };
      } else {
        const message = toAgentMessage(event.message);
        const delta: MessageDeltaOutput["delta"] = { role: "tool", contents: message.contents as any[], tool_calls: [] };
        if (message.id !== undefined) delta.id = message.id;
        yield { delta, finish_reason: { type: "stop" } };
      }
    }
  }

  async *#run02(messages: Messages, config: RunConfig): AsyncGenerator<LoopEvent, void, undefined> {
    if (this.#deleted) throw new RemoteError("this agent was deleted");
    const controller = new AbortController();
    const options: QueryOptions = {};
    if (config.signal !== undefined) options.signal = config.signal;
    if (config.inference?.thinkEffort !== undefined && config.inference.thinkEffort !== "disable") {
      options.reasoning = config.inference.thinkEffort === "enable" ? true : config.inference.thinkEffort;
    }
    try {
      yield* this.#loop(await this.#withDocuments(fromAgentMessages(messages), config), options, controller);
    } finally {
      controller.abort();
    }
  }

  /** `messages` with the knowledge's documents for the last user message (a system message, per the polyfill). */
  async #withDocuments(messages: Message[], config: RunConfig): Promise<Message[]> {
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    if (this.#knowledge === undefined || lastUser < 0) return messages;
    const user = messages[lastUser] as Message;
    const query = user.content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
    const documents = renderDocuments(await this.#knowledge.retrieve(query, config.knowledge));
    if (!documents) return messages;
    const polyfill = config.inference?.documentPolyfill ?? getDocumentPolyfill("Qwen3");
    const out = [...messages];
    if (polyfill.queryMessageTemplate !== undefined) {
      const text = polyfill.queryMessageTemplate.replaceAll("{{query}}", query).replaceAll("{{documents}}", documents);
      out[lastUser] = { ...user, content: [{ type: "text", text }, ...user.content.filter((p) => p.type !== "text")] };
    }
    if (polyfill.systemMessageTemplate !== undefined) {
      const text = polyfill.systemMessageTemplate.replaceAll("{{documents}}", documents);
      const system = out[0]?.role === "system" ? (out.shift() as Message) : undefined;
      const before = system ? system.content.map((p) => (p.type === "text" ? p.text : "")).join("") + "\n\n" : "";
      out.unshift({ role: "system", content: [{ type: "text", text: before + text }] });
    }
    return out;
  }

  /** The agent loop on `messages` (appended to as it goes): steps until no tool is called. */
  async *#loop(messages: Message[], options: QueryOptions, controller: AbortController): AsyncGenerator<LoopEvent, void, undefined> {
    const outer = options.signal;
    const onAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onAbort, { once: true });
    if (outer?.aborted) onAbort();
    const signal = controller.signal;
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
          else yield { kind: "delta", type: item.type, content: item.content as string };
        }
        if (step?.message === undefined) throw new RemoteError("the agent step ended without its message");
        messages.push(step.message);
        const calls = step.tool_requests ?? [];
        yield { kind: "assistant", message: step.message, calls, finishReason: step.finish_reason };
        if (calls.length === 0) break;
        // Concurrently; results go back in the calls' order.
        const outcomes = await Promise.all(calls.map((call) => this.#runTool(call, signal, confirm)));
        if (signal.aborted) throw new RequestCancelledError("the run was cancelled");
        for (const [index, call] of calls.entries()) {
          const outcome = outcomes[index] as ToolOutcome;
          const message: Message = { role: "tool", content: [{ type: "text", text: outcome.text }], tool_call_id: call.id };
          messages.push(message);
          yield { kind: "tool", call, outcome, message };
        }
      }
    } finally {
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
      const result = await settle(Promise.resolve().then(() => tool.run(args, { toolCallId: call.id, signal, runtime: this.rt })), timeoutMs, signal, name);
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

  /** Stop its MCP servers and delete the agent's model component (not a shared LangModel's). Idempotent. */
  async delete(): Promise<void> {
    if (this.#deleted) return;
    this.#deleted = true;
    for (const name of [...this.#mcp.keys()]) await this.removeMcpServer(name);
    if (!this.#ownsModel) return; // a LangModel's component outlives its agents
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
