/**
 * Ailoy 0.1's tool definitions: a builtin (an operator of the agent's server, called by
 * its description's name) or a REST API (a request through the server's `http_request`,
 * which keeps the host's address policy), each with an optional JMESPath `outputPath`
 * that picks what the model sees; `bearerAutenticator` adds a bearer token to a REST
 * tool's requests. `Agent.addBuiltinTool`, `addRESTAPITool` and `addToolsFromPreset(name,
 * { authenticator })` take them.
 */

import jmespath from "jmespath";

import type { ToolContext } from "./agent.js";
import { InvalidInputError, ToolError } from "./errors.js";
import type { JsonObject } from "./runtime.js";
import { FunctionTool } from "./tools.js";

export type JsonSchemaTypes = "string" | "integer" | "number" | "boolean" | "object" | "array" | "null";

/** Ailoy 0.1's tool description (the model sees `name`, `description`, `parameters`). */
export interface ToolDescription {
  name: string;
  description: string;
  parameters: {
    type: "object";
    properties: { [key: string]: { type: JsonSchemaTypes | JsonSchemaTypes[]; description?: string; [key: string]: any } };
    required?: string[];
  };
  return?: { type: JsonSchemaTypes; description?: string; [key: string]: any };
}

export interface ToolDefinitionBuiltin {
  type: "builtin";
  description: ToolDescription;
  behavior: { outputPath?: string };
}

export interface ToolDefinitionRESTAPI {
  type: "restapi";
  description: ToolDescription;
  behavior: {
    /** The URL; `${name}` in it is filled from the call's arguments (the rest go in the query). */
    baseURL: string;
    method: "GET" | "POST" | "PUT" | "DELETE";
    headers: { [key: string]: string };
    /** The body; `${name}` in it is filled from the call's arguments. */
    body?: string;
    outputPath?: string;
  };
}

export type ToolDefinition = ToolDefinitionBuiltin | ToolDefinitionRESTAPI;

/** A request a REST tool is about to send, and what it sends instead. */
export type ToolAuthenticator = (request: { url: string; headers: { [k: string]: string }; [k: string]: any }) => {
  url: string;
  headers: { [k: string]: string };
  [k: string]: any;
};

/** Ailoy 0.1's (spelled so): a `ToolAuthenticator` adding `Authorization: <bearerFormat> <token>`. */
export function bearerAutenticator(token: string, bearerFormat = "Bearer"): ToolAuthenticator {
  if (typeof token !== "string" || !token) throw InvalidInputError.forField("must be a non-empty token", "token");
  return (request) => ({ ...request, headers: { ...request.headers, Authorization: `${bearerFormat} ${token}` } });
}

/** `outputPath` (JMESPath) applied to `value`; an invalid expression is the tool's error. */
function picked(value: unknown, outputPath: string | undefined): unknown {
  if (!outputPath) return value;
  try {
    return jmespath.search(value as any, outputPath);
  } catch (error) {
    throw new ToolError(`outputPath ${JSON.stringify(outputPath)} is not JMESPath: ${(error as Error).message}`);
  }
}

function needsRuntime(name: string, context: ToolContext | undefined): NonNullable<ToolContext["runtime"]> {
  if (context?.runtime === undefined) throw new ToolError(`the ${name} tool runs on the agent's server: add it to an agent`);
  return context.runtime;
}

function checkRequired(description: ToolDescription, args: JsonObject): void {
  const missing = (description.parameters?.required ?? []).filter((name) => !(name in (args ?? {})));
  if (missing.length > 0) throw new ToolError(`${description.name} needs ${missing.join(", ")}`);
}

function checkDescription(description: ToolDescription | undefined): ToolDescription {
  if (typeof description?.name !== "string" || !description.name) throw InvalidInputError.forField("a tool needs a name", "description.name");
  return description;
}

/** An operator of the agent's server, called by the description's name, as a tool. */
export function builtinTool(tool: ToolDefinitionBuiltin): FunctionTool {
  const description = checkDescription(tool?.description);
  return new FunctionTool(description, async (args: JsonObject, context) => {
    checkRequired(description, args);
    const output = await needsRuntime(description.name, context).call(description.name, args, { signal: context?.signal });
    return picked(output, tool.behavior?.outputPath);
  });
}

/** `${name}` in `template` from `args`: the text, and the names it used. */
function rendered(template: string, args: JsonObject): { text: string; used: Set<string> } {
  const used = new Set<string>();
  const text = template.replace(/\$\{\s*([^}\s]+)\s*\}/g, (_, name: string) => {
    used.add(name);
    return name in args ? String(args[name]) : `{${name}}`;
  });
  return { text, used };
}

/** A REST API as a tool: the request goes through the server's `http_request`; the JSON answer, picked by `outputPath`, is the result. */
export function restApiTool(tool: ToolDefinitionRESTAPI, auth?: ToolAuthenticator): FunctionTool {
  const description = checkDescription(tool?.description);
  const { baseURL, method, headers, body, outputPath } = tool.behavior ?? ({} as ToolDefinitionRESTAPI["behavior"]);
  if (typeof baseURL !== "string") throw InvalidInputError.forField("must be a URL", "behavior.baseURL");
  return new FunctionTool(description, async (args: JsonObject, context) => {
    const given = args ?? {};
    const path = rendered(baseURL, given);
    const sent = body === undefined ? undefined : rendered(body, given);
    const url = new URL(path.text);
    for (const [key, value] of Object.entries(given)) {
      if (!path.used.has(key) && !sent?.used.has(key)) url.searchParams.append(key, String(value));
    }
    const plain = { url: url.toString(), method, headers: { ...(headers ?? {}) }, ...(sent === undefined ? {} : { body: sent.text }) };
    const request = auth ? auth(plain) : plain;
    const answer = (await needsRuntime(description.name, context).call("http_request", request as JsonObject, { signal: context?.signal })) as {
      status?: number;
      body: string;
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      throw new ToolError(`${url.origin}${url.pathname} answered ${answer.status ?? "?"} with no JSON: ${String(answer.body).slice(0, 200)}`);
    }
    return picked(parsed, outputPath);
  });
}
