/**
 * Tools by name and from elsewhere, in Ailoy's two spellings: 0.1's presets
 * (`agent.addToolsFromPreset("calculator")`), JavaScript functions
 * (`addJSFunctionTool`) and MCP servers (`addToolsFromMcpServer`); 0.2's `Tool.newBuiltin`,
 * `Tool.newFunction` and `MCPClient`. Every tool runs from this process: an operator
 * tool asks the agent's server (`rt.call`), a REST or terminal tool runs here, an MCP
 * tool asks its server through the official MCP client.
 */

import { execFile } from "node:child_process";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import type { ToolContext, ToolSpec } from "./agent.js";
import { InvalidInputError, ToolError } from "./errors.js";
import type { JsonObject } from "./runtime.js";

/** A tool's description as Ailoy 0.2 writes it (`tool.description.name`). */
export interface ToolDesc {
  name: string;
  description?: string;
  /** JSON schema of the arguments object. */
  parameters: JsonObject;
  /** JSON schema of the result (informative: models are not shown it). */
  returns?: JsonObject;
  /** Ailoy 0.1's spelling of `returns`. */
  return?: JsonObject;
}

/** A tool object (Ailoy 0.2's `Tool`): its description and how it runs. */
export class FunctionTool {
  readonly description: ToolDesc;
  readonly #run: (args: any, context: ToolContext | undefined) => unknown;

  constructor(description: ToolDesc, run: (args: any, context: ToolContext | undefined) => unknown) {
    if (typeof description !== "object" || description === null || typeof description.name !== "string") {
      throw InvalidInputError.forField("a tool description needs a name", "desc.name");
    }
    if (typeof run !== "function") throw InvalidInputError.forField("must be a function", "func");
    this.description = description;
    this.#run = run;
  }

  /** Run it as the agent would (`context` carries the agent's runtime for operator tools). */
  async run(args: any, context?: ToolContext): Promise<unknown> {
    return this.#run(args, context);
  }

  /** The shape agents keep (the seeds' tool object). */
  toSpec(): ToolSpec {
    const spec: ToolSpec = {
      name: this.description.name,
      parameters: this.description.parameters ?? { type: "object", properties: {} },
      run: (args, context) => this.#run(args, context),
    };
    if (this.description.description !== undefined) spec.description = this.description.description;
    return spec;
  }
}

function operatorTool(
  operator: string,
  description: ToolDesc,
  inputs: (args: any) => JsonObject = (a) => a,
  output: (result: any) => unknown = (r) => r,
): FunctionTool {
  return new FunctionTool(description, async (args, context) => {
    if (context?.runtime === undefined) {
      throw new ToolError(`the ${description.name} tool runs on the agent's server: add it to an agent`);
    }
    return output(await context.runtime.call(operator, inputs(args), { signal: context.signal }));
  });
}

/** A builtin's settings (`Tool.newBuiltin(kind, config)`): the known keys, without nulls; an unknown key is refused, named. */
function builtinSettings(kind: string, config: JsonObject, known: string[]): JsonObject {
  const unknown = Object.keys(config).filter((key) => !known.includes(key)).sort();
  if (unknown.length > 0) {
    throw InvalidInputError.forField(
      `the builtin tool ${JSON.stringify(kind)} has no setting ${JSON.stringify(unknown[0])}; its settings: ${known.join(", ") || "none"}`,
      unknown[0] as string,
    );
  }
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== null && value !== undefined));
}

const EXPRESSION: JsonObject = {
  type: "object",
  properties: { expression: { type: "string", description: "The expression to evaluate, e.g. 'floor(ln(exp(e)) + cos(2*pi))'." } },
  required: ["expression"],
};

/** Where `frankfurter` asks, unless `$FERRULE_FRANKFURTER_URL` says otherwise (as in Python). */
export const FRANKFURTER_URL = "https://api.frankfurter.dev/v1/latest";

async function getJson(url: URL, signal: AbortSignal | undefined): Promise<unknown> {
  const response = await fetch(url, { headers: { accept: "application/json" }, signal: signal ?? null });
  const text = await response.text();
  if (!response.ok) throw new ToolError(`${url.origin}${url.pathname} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** The presets of `addToolsFromPreset`, by name (the Python SDK's presets). */
export const PRESETS: Record<string, () => FunctionTool[]> = {
  calculator: () => [
    operatorTool("calculator", {
      name: "calculator",
      description: "Evaluate an arithmetic expression and return its value.",
      parameters: EXPRESSION,
    }),
  ],
  http_request: () => [
    operatorTool("http_request", {
      name: "http_request",
      description: "Send an HTTP request and return the reply's status, headers and body.",
      parameters: {
        type: "object",
        properties: {
          url: { type: "string", description: "The URL to request." },
          method: { enum: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] },
          headers: { type: "object", additionalProperties: { type: "string" } },
          body: { type: "string" },
        },
        required: ["url"],
      },
    }),
  ],
  frankfurter: () => [
    new FunctionTool(
      {
        name: "frankfurter",
        description: "Get the latest exchange rates of currencies against a base currency.",
        parameters: {
          type: "object",
          properties: {
            base: { type: "string", description: "The ISO 4217 code of the currency the rates are against." },
            symbols: { type: "string", description: "ISO 4217 codes of the currencies wanted, comma-separated (default: all)." },
          },
          required: ["base"],
        },
      },
      async (args: { base: string; symbols?: string }, context) => {
        const url = new URL(process.env["FERRULE_FRANKFURTER_URL"] || FRANKFURTER_URL);
        url.searchParams.set("base", String(args.base));
        if (args.symbols !== undefined) url.searchParams.set("symbols", String(args.symbols));
        return getJson(url, context?.signal);
      },
    ),
  ],
};

/** A preset's tools by name; an unknown name is an InvalidInputError listing the presets. */
export function presetTools(name: string): FunctionTool[] {
  const make = Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined;
  if (make === undefined) {
    throw InvalidInputError.forField(`unknown tool preset ${JSON.stringify(name)}; presets: ${Object.keys(PRESETS).sort().join(", ")}`, "preset_name");
  }
  return make();
}

/** The kinds of `Tool.newBuiltin` (Ailoy 0.2's). */
export type BuiltinToolKind = "terminal" | "web_search_duckduckgo" | "web_fetch" | "calculator";

const TERMINAL_LIMIT = 64 * 1024;

function terminal(config: { cwd?: string; timeoutMs?: number } = {}): FunctionTool {
  return new FunctionTool(
    {
      name: "terminal",
      description: "Run a shell command and return its exit code, stdout and stderr.",
      parameters: { type: "object", properties: { command: { type: "string", description: "The shell command." } }, required: ["command"] },
    },
    (args: { command: string }, context) =>
      new Promise((resolve, reject) => {
        if (typeof args.command !== "string" || !args.command) {
          reject(new ToolError("the terminal tool needs a command"));
          return;
        }
        execFile(
          "/bin/sh",
          ["-c", args.command],
          { cwd: config.cwd, timeout: config.timeoutMs ?? 30_000, maxBuffer: TERMINAL_LIMIT, signal: context?.signal },
          (error, stdout, stderr) => {
            const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
            resolve({ exit_code: code, stdout: String(stdout), stderr: String(stderr) });
          },
        );
      }),
  );
}

const BUILTINS: Record<BuiltinToolKind, (config: any) => FunctionTool> = {
  terminal,
  calculator: () => (PRESETS["calculator"] as () => FunctionTool[])()[0] as FunctionTool,
  web_search_duckduckgo: () =>
    operatorTool("duckduckgo_search", {
      name: "web_search_duckduckgo",
      description: "Search the web with DuckDuckGo; returns titles, snippets and URLs.",
      parameters: {
        type: "object",
        properties: { query: { type: "string" }, max_results: { type: "integer", description: "At most this many results (default 5)." } },
        required: ["query"],
      },
    }),
  web_fetch: (config: JsonObject) => {
    // proxy_url is not among them: the server takes it from its own $FERRULE_WEB_FETCH_PROXY only.
    const settings = builtinSettings("web_fetch", config, ["max_chars", "format", "timeout"]);
    return operatorTool(
      "web_fetch",
      {
        name: "web_fetch",
        description: "Fetch and parse content from a webpage URL.",
        parameters: {
          type: "object",
          properties: { url: { type: "string", description: "The webpage URL to fetch content from." } },
          required: ["url"],
        },
      },
      (args: { url: string }) => ({ ...settings, url: args.url }),
      (fetched: { content: string }) => ({ results: fetched.content }),
    );
  },
};

/**
 * Ailoy 0.2's `Tool` factory (`Tool.newBuiltin("terminal")`, `Tool.newFunction(desc, fn)`);
 * as a type, the seeds' tool object (`{ name, description, parameters, run }`).
 */
export const Tool = {
  newBuiltin(kind: BuiltinToolKind, config?: any): FunctionTool {
    const make = Object.hasOwn(BUILTINS, kind) ? BUILTINS[kind] : undefined;
    if (make === undefined) {
      throw InvalidInputError.forField(`unknown builtin tool ${JSON.stringify(kind)}; builtins: ${Object.keys(BUILTINS).sort().join(", ")}`, "kind");
    }
    return make(config ?? {});
  },
  newFunction(desc: ToolDesc, func: (args: any) => unknown): FunctionTool {
    return new FunctionTool(desc, (args) => func(args));
  },
};
export type Tool = ToolSpec;

function mcpResult(result: any): unknown {
  if (result?.isError) {
    const text = (result.content ?? []).map((p: any) => p.text ?? "").join("\n");
    throw new ToolError(text || "the MCP tool failed");
  }
  if (result?.structuredContent !== undefined) return result.structuredContent;
  const parts = (result?.content ?? []) as any[];
  if (parts.every((p) => p.type === "text")) return parts.map((p) => p.text).join("\n");
  return parts;
}

/** Where an MCP server is: a command to start (stdio) or a URL (streamable HTTP). */
export interface McpServerParams {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
}

/** A connection to one MCP server (Ailoy 0.2's `MCPClient`): its tools, and `close()`. */
export class MCPClient {
  readonly #client: Client;
  #tools: FunctionTool[] = [];

  private constructor(client: Client) {
    this.#client = client;
  }

  static async newStdio(command: string, args: string[] = [], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<MCPClient> {
    if (typeof command !== "string" || !command) throw InvalidInputError.forField("name the server's program", "command");
    const params: ConstructorParameters<typeof StdioClientTransport>[0] = { command, args, stderr: "ignore" };
    if (options.env !== undefined) params.env = options.env;
    if (options.cwd !== undefined) params.cwd = options.cwd;
    return MCPClient.#connect(new StdioClientTransport(params));
  }

  static async newStreamableHttp(url: string): Promise<MCPClient> {
    return MCPClient.#connect(new StreamableHTTPClientTransport(new URL(url)));
  }

  /** Connect to a server given as Ailoy 0.1 does (`{ command, args }`) or by `url`. */
  static async connect(params: McpServerParams): Promise<MCPClient> {
    if (params.url !== undefined) return MCPClient.newStreamableHttp(params.url);
    const options: { env?: Record<string, string>; cwd?: string } = {};
    if (params.env !== undefined) options.env = params.env;
    if (params.cwd !== undefined) options.cwd = params.cwd;
    return MCPClient.newStdio(params.command as string, params.args ?? [], options);
  }

  static async #connect(transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<MCPClient> {
    const client = new Client({ name: "ferrule-node", version: "0.1.0" });
    await client.connect(transport);
    const mcp = new MCPClient(client);
    try {
      const { tools } = await client.listTools();
      mcp.#tools = tools.map((tool) => mcp.#tool(tool));
    } catch (error) {
      await client.close();
      throw error;
    }
    return mcp;
  }

  #tool(tool: { name: string; description?: string | undefined; inputSchema: unknown }): FunctionTool {
    const desc: ToolDesc = { name: tool.name, parameters: tool.inputSchema as JsonObject };
    if (tool.description !== undefined) desc.description = tool.description;
    return new FunctionTool(desc, async (args, context) => {
      const options = context?.signal === undefined ? {} : { signal: context.signal };
      return mcpResult(await this.#client.callTool({ name: tool.name, arguments: args }, undefined, options));
    });
  }

  /** The server's tools, named as the server names them. */
  get tools(): FunctionTool[] {
    return [...this.#tools];
  }

  /** The server's tool named `name` (Ailoy 0.2's `getTool`); an unknown name is an InvalidInputError listing the tools. */
  getTool(name: string): FunctionTool {
    const tool = this.#tools.find((t) => t.description.name === name);
    if (tool === undefined) {
      const names = this.#tools.map((t) => t.description.name).join(", ") || "none";
      throw InvalidInputError.forField(`the MCP server has no tool ${JSON.stringify(name)}; its tools: ${names}`, "name");
    }
    return tool;
  }

  /** Stop the server (a stdio one) and close the connection. Idempotent. */
  async close(): Promise<void> {
    await this.#client.close();
  }
}
