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
  type TextPart,
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
  MessageDeltaOutputIterator,
  type MessageOutput,
  MessageOutputIterator,
  type Messages,
  endDelta,
  finishReason,
  fromAgentMessages,
  textDelta,
  toAgentMessage,
} from "./messages.js";
import {
  type DocumentPolyfill,
  type Knowledge,
  type KnowledgeConfig,
  type LangModel,
  getDocumentPolyfill,
  placeDocuments,
} from "./models.js";
import type { JsonObject } from "./runtime.js";
import { Runtime } from "./runtime.js";
import {
  type ToolAuthenticator,
  type ToolDefinition,
  type ToolDefinitionBuiltin,
  type ToolDefinitionRESTAPI,
  builtinTool,
  restApiTool,
} from "./restapi.js";
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

/** Ailoy 0.1's API model ids by provider (an id of these lists needs no `provider`). */
export const openAIModelIds = [
  "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-chat-latest", "o4-mini", "o3", "o3-pro", "o3-mini",
  "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano",
] as const;
export const geminiModelIds = ["gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.0-flash", "gemini-1.5-flash", "gemini-1.5-pro"] as const;
export const claudeModelIds = [
  "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20240620",
  "claude-opus-4-1-20250805", "claude-opus-4-20250514", "claude-3-opus-20240229", "claude-3-5-haiku-20241022",
  "claude-3-haiku-20240307",
] as const;
export const grokModelIds = [
  "grok-4", "grok-4-0709", "grok-3", "grok-3-fast", "grok-3-mini", "grok-3-mini-fast", "grok-2", "grok-2-1212",
  "grok-2-vision-1212", "grok-2-image-1212",
] as const;

/** An API model id: one of Ailoy 0.1's lists, or any other the provider serves. */
export type APIModelId =
  | (typeof openAIModelIds)[number]
  | (typeof geminiModelIds)[number]
  | (typeof claudeModelIds)[number]
  | (typeof grokModelIds)[number]
  | (string & {});
export type APIModelProvider = "openai" | "gemini" | "claude" | "grok";

/** `APIModel`'s arguments (Ailoy 0.1's `apiKey`; `options` are passed to the model's `infer`). */
export interface APIModelArgs {
  id: APIModelId;
  provider?: APIModelProvider | (string & {});
  apiKey?: string;
  options?: JsonObject;
}

/** Ailoy 0.1's local model ids (run offline on the model they alias, `$FERRULE_MODEL_ALIASES`). */
export type LocalModelId =
  | "Qwen/Qwen3-0.6B"
  | "Qwen/Qwen3-1.7B"
  | "Qwen/Qwen3-4B"
  | "Qwen/Qwen3-8B"
  | "Qwen/Qwen3-14B"
  | "Qwen/Qwen3-32B"
  | "Qwen/Qwen3-30B-A3B"
  | (string & {});
export type LocalModelBackend = "tvm";
export type Quantization = "q4f16_1";

/** `LocalModel`'s arguments: Ailoy 0.1's (`backend`, `quantization` and `device` take only what ferrule runs). */
export interface LocalModelArgs {
  id?: LocalModelId;
  backend?: LocalModelBackend;
  quantization?: Quantization;
  device?: number;
  options?: JsonObject;
}

const PROVIDER_OF_ID: Array<[readonly string[], APIModelProvider]> = [
  [openAIModelIds, "openai"],
  [geminiModelIds, "gemini"],
  [claudeModelIds, "claude"],
  [grokModelIds, "grok"],
];

/** What `APIModel({...})` makes (Ailoy 0.1's class of that name): a `ModelSpec` with Ailoy's fields. */
export class _APIModel extends ModelSpec {
  /** The Ailoy 0.1 raw component type of this provider (`"openai"`, `"claude"`, ...). */
  readonly componentType: string;
  readonly #key: string | undefined;

  constructor(args: APIModelArgs) {
    if (!args || typeof args.id !== "string" || !args.id) {
      throw InvalidInputError.forField("an API model needs its id", "id");
    }
    const provider = args.provider ?? PROVIDER_OF_ID.find(([ids]) => ids.includes(args.id))?.[1];
    super({ local: false, id: args.id, ...(provider === undefined ? {} : { provider }), ...pick(args, "apiKey", "options") });
    this.componentType = provider ?? "";
    this.#key = args.apiKey;
  }

  /** The key (never shown by `toString`, `toJSON` or `console.log`). */
  get apiKey(): string | undefined {
    return this.#key;
  }

  /** Ailoy 0.1's attributes of its raw component (`rt.define(model.componentType, name, model.toAttrs())`). */
  toAttrs(): JsonObject {
    if (this.#key === undefined) throw InvalidInputError.forField("Ailoy's raw API-model components need the key", "apiKey");
    return { model: this.id as string, api_key: this.#key };
  }
}

/** What `LocalModel({...})` makes (Ailoy 0.1's class of that name): a `ModelSpec` with Ailoy's fields. */
export class _LocalModel extends ModelSpec {
  readonly backend: LocalModelBackend = "tvm";
  readonly quantization: Quantization = "q4f16_1";
  readonly device: number = 0;
  /** The raw component type (`rt.define(model.componentType, name, model.toAttrs())`). */
  readonly componentType = "tvm_language_model";

  constructor(args: LocalModelArgs = {}) {
    if ((args.backend ?? "tvm") !== "tvm") throw InvalidInputError.forField('the only local backend name is "tvm" (llama.cpp runs it)', "backend");
    if ((args.quantization ?? "q4f16_1") !== "q4f16_1") throw InvalidInputError.forField('only "q4f16_1" (the default) is taken', "quantization");
    if ((args.device ?? 0) !== 0) throw InvalidInputError.forField("ferrule's local models run on the CPU: only device 0 is taken", "device");
    super({ local: true, ...pick(args, "id", "options") });
  }

  /** Ailoy 0.1's default system message for the model (Qwen's, for a Qwen id). */
  defaultSystemMessage(): string | undefined {
    return this.id?.startsWith("Qwen") ? "You are Qwen, created by Alibaba Cloud. You are a helpful assistant." : undefined;
  }

  /** Ailoy 0.1's attributes of the raw `tvm_language_model`. */
  toAttrs(): JsonObject {
    return { model: this.id ?? "SmolLM2-135M-Instruct", quantization: this.quantization, device: this.device };
  }
}

function pick<T extends object, K extends keyof T>(from: T, ...keys: K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((k) => from[k] !== undefined).map((k) => [k, from[k]])) as Partial<Pick<T, K>>;
}

/** Ailoy 0.1's model union. */
export type AiloyModel = _APIModel | _LocalModel;

/** A model run by the server's machine: `LocalModel({ id: "Qwen/Qwen3-0.6B" })`; no id: the offline default. */
export function LocalModel(init: LocalModelArgs = {}): _LocalModel {
  return new _LocalModel(init);
}

/** A model behind a provider's API: `APIModel({ id: "gpt-4o", apiKey })`; `provider` for ids without a known prefix. */
export function APIModel(init: APIModelArgs): _APIModel {
  return new _APIModel(init);
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

/** Ailoy 0.1's message shapes (what `getMessages()` holds, each a `Message`). */
export interface FunctionData {
  type: "function";
  id?: string;
  function: { name: string; arguments: any };
}
export interface SystemMessage {
  role: "system";
  content: string | TextPart[];
}
export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
}
export interface AssistantMessage {
  role: "assistant";
  content?: string | TextPart[];
  name?: string;
  tool_calls?: FunctionData[] | ToolCallRequest[];
  reasoning?: { type: "text"; text: string }[];
}
export interface ToolMessage {
  role: "tool";
  content: TextPart[];
  tool_call_id?: string;
}

export type ResponseType = "output_text" | "reasoning" | "tool_call" | "tool_call_result" | "error";

/** Ailoy 0.1's names of the `AgentResponse` kinds. */
export type AgentResponseText = AgentResponse & { type: "output_text" | "reasoning"; role: "assistant"; content: string };
export type AgentResponseToolCall = AgentResponse & { type: "tool_call"; role: "assistant" };
export type AgentResponseToolResult = AgentResponse & { type: "tool_call_result"; role: "tool" };
export type AgentResponseError = AgentResponse & { type: "error"; role: "assistant"; content: string };

/** One streamed piece of a query (agent-guide, "Agent Responses"). */
export interface AgentResponse {
  type: ResponseType;
  role: "assistant" | "tool";
  /** True on the first response of a new type: time for a new message box. */
  is_type_switched: boolean;
  /** Ailoy 0.1's spelling of `is_type_switched` (the same value). */
  isTypeSwitched: boolean;
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

/** Ailoy 0.1's tool object: its description and the function the agent calls. */
export interface Tool01 {
  desc: ToolDesc;
  call: (input: any) => unknown;
}

function isTool01(value: unknown): value is Tool01 {
  return typeof value === "object" && value !== null && "desc" in value && "call" in value && !("run" in value);
}

function checkTool(given: ToolSpec | FunctionTool | Tool01, index: number): ToolSpec {
  const tool = given instanceof FunctionTool ? given.toSpec() : isTool01(given) ? new FunctionTool(given.desc, (args) => given.call(args)).toSpec() : given;
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

/** What one step of the loop produced (the public streams are views of these). */
type LoopEvent =
  | { kind: "delta"; type: "output_text" | "reasoning"; content: string }
  | { kind: "assistant"; message: Message; calls: ToolCallRequest[]; finishReason: string | undefined }
  | { kind: "tool"; call: ToolCallRequest; outcome: ToolOutcome; message: Message };

export type ThinkEffort = "disable" | "enable" | "low" | "medium" | "high";

/**
 * What shape a reply must have (Ailoy 0.2's): any text, a JSON object (JSON mode), or JSON
 * valid against `schema` (JSON text). `regex` and `cfg` are refused: ferrule constrains a
 * reply by JSON schema only.
 */
export type Grammar =
  | { type: "plain" }
  | { type: "json" }
  | { type: "jsonschema"; schema: string }
  | { type: "regex"; regex: string }
  | { type: "cfg"; cfg: string };

/** Ailoy 0.2's inference settings of a run (each passed to the model's `infer`; an unknown one is refused). */
export interface LangModelInferConfig {
  /** How the knowledge's documents reach the model (default: the Qwen3 polyfill). */
  documentPolyfill?: DocumentPolyfill;
  thinkEffort?: ThinkEffort;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  grammar?: Grammar;
}

/** Options of Ailoy 0.2's `run` / `runDelta` (`AgentConfig` is its name there). */
export interface RunConfig {
  inference?: LangModelInferConfig;
  knowledge?: KnowledgeConfig;
  signal?: AbortSignal;
}

export type AgentConfig = RunConfig;

/** `inference`'s settings as the model's `infer` options; what ferrule cannot do is refused, named. */
function inferOptions(inference: LangModelInferConfig | undefined): JsonObject {
  const options: JsonObject = {};
  const known = ["documentPolyfill", "thinkEffort", "temperature", "topP", "maxTokens", "grammar"];
  for (const [key, value] of Object.entries(inference ?? {})) {
    if (value === undefined || value === null) continue;
    if (!known.includes(key)) {
      throw InvalidInputError.forField(`no inference setting ${JSON.stringify(key)}; the settings: ${known.join(", ")}`, `inference.${key}`);
    }
    if (key === "temperature") options["temperature"] = value;
    else if (key === "topP") options["top_p"] = value;
    else if (key === "maxTokens") options["max_tokens"] = value;
  }
  const grammar = inference?.grammar;
  if (grammar === undefined || grammar === null || grammar.type === "plain") return options;
  if (grammar.type === "json") options["output_schema"] = { type: "object" };
  else if (grammar.type === "jsonschema") {
    try {
      options["output_schema"] = JSON.parse(grammar.schema);
    } catch {
      throw InvalidInputError.forField("must be a JSON schema as JSON text", "inference.grammar.schema");
    }
  } else {
    throw InvalidInputError.forField(
      `ferrule constrains a reply by JSON schema only: use { type: "json" } or { type: "jsonschema", schema }, not ${JSON.stringify(grammar.type)}`,
      "inference.grammar",
    );
  }
  return options;
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

  /**
   * Add a tool: the seeds' `{ name, run, ... }`, a `Tool.newFunction(...)` / builtin / MCP
   * tool, or Ailoy 0.1's `{ desc, call }`. Returns true (Ailoy 0.1's); a second tool of
   * one name is refused with an InvalidInputError naming it.
   */
  addTool(tool: ToolSpec | FunctionTool | Tool01, index = this.#tools.size): true {
    const spec = checkTool(tool, index);
    if (this.#tools.has(spec.name)) {
      throw InvalidInputError.forField(`two tools are named ${JSON.stringify(spec.name)}`, `tools[${index}].name`);
    }
    this.#tools.set(spec.name, spec);
    return true;
  }

  /** Ailoy 0.1: an operator of the server as a tool, called by its description's name (`outputPath`: JMESPath over its output). */
  addBuiltinTool(tool: ToolDefinitionBuiltin): true {
    return this.addTool(builtinTool(tool));
  }

  /** Ailoy 0.1: a REST API as a tool, requested through the server's `http_request` (`auth` may change each request). */
  addRESTAPITool(tool: ToolDefinitionRESTAPI, auth?: ToolAuthenticator): true {
    return this.addTool(restApiTool(tool, auth));
  }

  /** Ailoy 0.1: the descriptions of the agent's tools, as the model sees them. */
  getAvailableTools(): ToolDesc[] {
    return this.tools.map((t) => ({ name: t.name, description: t.description ?? "", parameters: t.parameters ?? { type: "object", properties: {} } }));
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

  /**
   * Ailoy 0.1: a preset's tools (`"calculator"`, `"frankfurter"`, `"http_request"`), or a
   * list of tool definitions (`{name: ToolDefinition}`, a preset file's content) with
   * `authenticator` applied to its REST tools' requests.
   */
  addToolsFromPreset(preset: string | Record<string, ToolDefinition>, args: { authenticator?: ToolAuthenticator } = {}): true {
    if (typeof preset === "string") {
      if (args.authenticator !== undefined) {
        throw InvalidInputError.forField(`the preset ${JSON.stringify(preset)} needs no authenticator`, "authenticator");
      }
      this.addTools(presetTools(preset));
      return true;
    }
    for (const [name, definition] of Object.entries(preset ?? {})) {
      if (definition?.type === "restapi") this.addRESTAPITool(definition, args.authenticator);
      else if (definition?.type === "builtin") this.addBuiltinTool(definition);
      else throw InvalidInputError.forField('a tool definition\'s type is "builtin" or "restapi"', `${name}.type`);
    }
    return true;
  }

  /** Ailoy 0.1: a JavaScript function as a tool, described by `desc` (`name`, `description`, `parameters`). */
  addJSFunctionTool(f: (args: any) => unknown, desc: ToolDesc): true {
    if (typeof f !== "function") throw InvalidInputError.forField("must be a function", "f");
    return this.addTool(new FunctionTool(desc, (args) => f(args)));
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
      const switched = type !== last;
      const response: AgentResponse = { type, role, is_type_switched: switched, isTypeSwitched: switched, content };
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
  run(messages: Messages, config: RunConfig = {}): MessageOutputIterator {
    return new MessageOutputIterator(this.#outputs(messages, config));
  }

  async *#outputs(messages: Messages, config: RunConfig): AsyncGenerator<MessageOutput, void, undefined> {
    for await (const event of this.#run02(messages, config)) {
      if (event.kind === "assistant") {
        yield { message: toAgentMessage(event.message), finish_reason: finishReason(event.finishReason, event.calls) };
      } else if (event.kind === "tool") {
        yield { message: toAgentMessage(event.message), finish_reason: { type: "stop" } };
      }
    }
  }

  /** Ailoy 0.2: as `run`, as it streams: text and thinking deltas, then tool calls and results. */
  runDelta(messages: Messages, config: RunConfig = {}): MessageDeltaOutputIterator {
    return new MessageDeltaOutputIterator(this.#deltas(messages, config));
  }

  async *#deltas(messages: Messages, config: RunConfig): AsyncGenerator<MessageDeltaOutput, void, undefined> {
    for await (const event of this.#run02(messages, config)) {
      if (event.kind === "delta") {
        yield textDelta(event.type, event.content);
      } else if (event.kind === "assistant") {
        yield endDelta(event.calls, event.finishReason);
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
    const extra = inferOptions(config.inference);
    try {
      yield* this.#loop(await this.#withDocuments(fromAgentMessages(messages), config), options, controller, extra);
    } finally {
      controller.abort();
    }
  }

  /** `messages` with the knowledge's documents for the last user message (a system message, per the polyfill). */
  async #withDocuments(messages: Message[], config: RunConfig): Promise<Message[]> {
    const lastUser = messages.map((m) => m.role).lastIndexOf("user");
    if (this.#knowledge === undefined || lastUser < 0) return messages;
    const query = (messages[lastUser] as Message).content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
    const documents = await this.#knowledge.retrieve(query, config.knowledge);
    return placeDocuments(messages, documents, config.inference?.documentPolyfill ?? getDocumentPolyfill("Qwen3"));
  }

  /** The agent loop on `messages` (appended to as it goes): steps until no tool is called. */
  async *#loop(
    messages: Message[],
    options: QueryOptions,
    controller: AbortController,
    extra: JsonObject = {},
  ): AsyncGenerator<LoopEvent, void, undefined> {
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
          options: { ...this.#options, ...extra },
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
   * calls and results as JSON, errors in red (colours only on a terminal). An agent made
   * on a `LangModel` (Ailoy 0.2's) prints what its `run` gives, a whole `MessageOutput`;
   * any other prints `query`'s `AgentResponse`s.
   */
  print(response: AgentResponse | MessageOutput, out: NodeJS.WritableStream = process.stdout): void {
    const color = (out as { isTTY?: boolean }).isTTY === true;
    const paint = (text: string, code: string) => (color ? `\x1b[${code}m${text}\x1b[0m` : text);
    if (!this.#ownsModel) {
      // an agent made on a LangModel (Ailoy 0.2's) prints what its run gives: a whole message
      const { message } = response as MessageOutput;
      if (message?.contents === undefined) throw InvalidInputError.forField("expected what run() gives (a MessageOutput)", "response");
      const text = message.contents.map((p) => (p.type === "text" ? p.text : JSON.stringify(p))).join("");
      if (message.thinking) out.write(paint(`[thinking] ${message.thinking}\n`, "2"));
      if (text) out.write(`${message.role === "tool" ? paint("[tool result] ", "36") : ""}${text}\n`);
      for (const call of message.tool_calls ?? []) out.write(`${paint("[tool call] ", "36")}${JSON.stringify(call)}\n`);
      return;
    }
    const { type, content } = response as AgentResponse;
    const switched = (response as AgentResponse).is_type_switched;
    if (type === "output_text") {
      out.write((switched ? "\n" : "") + content);
    } else if (type === "reasoning") {
      out.write((switched ? paint("\n[reasoning]\n", "2") : "") + paint(content, "2"));
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
