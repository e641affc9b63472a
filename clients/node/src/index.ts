/** ferrule for Node: the seeds' runtime and agent API over `ferrule serve`. */

export { startRuntime, Runtime, ItemStream, KERNEL_API } from "./runtime.js";
export type { JsonObject, OwnedServer, RequestOptions, StartRuntimeOptions } from "./runtime.js";
export { defineAgent, Agent, LocalModel, APIModel, ModelSpec } from "./agent.js";
export type {
  AgentOptions,
  AgentResponse,
  Confirm,
  Message,
  QueryInput,
  QueryOptions,
  ResponseType,
  Tool,
  ToolCallRequest,
  ToolContext,
} from "./agent.js";
export { ImageContent, AudioContent } from "./content.js";
export type { AudioPart, ContentPart, ImagePart, TextPart } from "./content.js";
export * from "./errors.js";
