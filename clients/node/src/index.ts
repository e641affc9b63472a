/**
 * ferrule for Node: the seeds' runtime and agent API over `ferrule serve`, with Ailoy's
 * JavaScript APIs on the same objects: 0.1's `Runtime` / `Agent` (presets, tool
 * definitions, JavaScript function tools, MCP servers) / `defineVectorStore` and 0.2's
 * `LangModel` / `Agent(model)` / `run` / `runDelta` / `Tool` / `MCPClient` /
 * `EmbeddingModel` / `VectorStore` (every export of ailoy-node 0.1.0 and 0.2.5; see
 * docs/coming-from-ailoy.md for the few that differ).
 */

export {
  startRuntime,
  Runtime,
  ItemStream,
  KERNEL_API,
  BrokerClient,
  generateUUID,
  startThreads,
  stopThreads,
} from "./runtime.js";
export type {
  InstructionType,
  JsonObject,
  OwnedServer,
  Packet,
  PacketType,
  RequestOptions,
  StartRuntimeOptions,
} from "./runtime.js";
export {
  defineAgent,
  Agent,
  LocalModel,
  APIModel,
  ModelSpec,
  _APIModel,
  _LocalModel,
  openAIModelIds,
  geminiModelIds,
  claudeModelIds,
  grokModelIds,
} from "./agent.js";
export type {
  AgentConfig,
  AgentOptions,
  AgentResponse,
  AgentResponseError,
  AgentResponseText,
  AgentResponseToolCall,
  AgentResponseToolResult,
  AiloyModel,
  APIModelArgs,
  APIModelId,
  APIModelProvider,
  AssistantMessage,
  Confirm,
  FunctionData,
  Grammar,
  LangModelInferConfig,
  LocalModelArgs,
  LocalModelBackend,
  LocalModelId,
  Message,
  QueryInput,
  QueryOptions,
  Quantization,
  ResponseType,
  RunConfig,
  SystemMessage,
  ThinkEffort,
  Tool01,
  ToolCallRequest,
  ToolContext,
  ToolMessage,
  ToolSpec,
  UserMessage,
} from "./agent.js";
export { bearerAutenticator } from "./restapi.js";
export type {
  JsonSchemaTypes,
  ToolAuthenticator,
  ToolDefinition,
  ToolDefinitionBuiltin,
  ToolDefinitionRESTAPI,
  ToolDescription,
} from "./restapi.js";
export { Tool, FunctionTool, MCPClient, PRESETS, FRANKFURTER_URL, presetTools } from "./tools.js";
export type { BuiltinToolKind, McpServerParams, ToolDesc } from "./tools.js";
export {
  LangModel,
  EmbeddingModel,
  VectorStore,
  Knowledge,
  defineVectorStore,
  getDocumentPolyfill,
  defaultRuntime,
  stopDefaultRuntime,
} from "./models.js";
export type {
  APISpecification,
  CacheProgress,
  Document,
  DocumentPolyfill,
  DocumentPolyfillKind,
  Embedding,
  EmbeddingModelName,
  KnowledgeConfig,
  KVCacheConfig,
  LocalEmbeddingModelConfig,
  LocalLangModelConfig,
  VectorStoreAddInput,
  VectorStoreGetResult,
  VectorStoreInsertItem,
  VectorStoreMetadata,
  VectorStoreName,
  VectorStoreRetrieveItem,
  VectorStoreRetrieveResult,
} from "./models.js";
export {
  accumulateMessageDelta,
  finishMessageDelta,
  imageFromBase64,
  imageFromBytes,
  imageFromUrl,
  MessageDeltaOutputIterator,
  MessageOutputIterator,
} from "./messages.js";
export type {
  AgentMessage,
  Bytes,
  FinishReason,
  MessageDelta,
  MessageDeltaOutput,
  MessageDeltaOutputIteratorResult,
  MessageOutput,
  MessageOutputIteratorResult,
  Messages,
  Part,
  PartDelta,
  PartDeltaFunction,
  PartFunction,
  PartImage,
  PartImageColorspace,
  Role,
  SingleTextMessage,
} from "./messages.js";
export { ImageContent, AudioContent, TextContent } from "./content.js";
export type { AudioPart, ContentPart, ImagePart, TextPart } from "./content.js";
export * from "./errors.js";
export { NDArray } from "./ndarray.js";
export type { NDArrayData, NDArrayDtype } from "./ndarray.js";
