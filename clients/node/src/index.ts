/**
 * ferrule for Node: the seeds' runtime and agent API over `ferrule serve`, with Ailoy's
 * JavaScript APIs on the same objects: 0.1's `Runtime` / `Agent` (presets, JavaScript
 * function tools, MCP servers) and 0.2's `LangModel` / `Agent(model)` / `run` /
 * `runDelta` / `Tool` / `MCPClient` / `EmbeddingModel` / `VectorStore`.
 */

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
  RunConfig,
  ToolCallRequest,
  ToolContext,
  ToolSpec,
} from "./agent.js";
export { Tool, FunctionTool, MCPClient, PRESETS, FRANKFURTER_URL, presetTools } from "./tools.js";
export type { BuiltinToolKind, McpServerParams, ToolDesc } from "./tools.js";
export { LangModel, EmbeddingModel, VectorStore, Knowledge, getDocumentPolyfill, defaultRuntime, stopDefaultRuntime } from "./models.js";
export type {
  CacheProgress,
  Document,
  DocumentPolyfill,
  Embedding,
  KnowledgeConfig,
  LocalLangModelConfig,
  VectorStoreAddInput,
  VectorStoreGetResult,
  VectorStoreMetadata,
  VectorStoreRetrieveResult,
} from "./models.js";
export { accumulateMessageDelta, finishMessageDelta, imageFromBase64, imageFromBytes, imageFromUrl } from "./messages.js";
export type {
  AgentMessage,
  FinishReason,
  MessageDelta,
  MessageDeltaOutput,
  MessageOutput,
  Messages,
  Part,
  PartDelta,
  PartDeltaFunction,
  Role,
  SingleTextMessage,
} from "./messages.js";
export { ImageContent, AudioContent } from "./content.js";
export type { AudioPart, ContentPart, ImagePart, TextPart } from "./content.js";
export * from "./errors.js";
export { NDArray } from "./ndarray.js";
export type { NDArrayData, NDArrayDtype } from "./ndarray.js";
