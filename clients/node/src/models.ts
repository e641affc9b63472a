/**
 * Ailoy 0.2's model and store objects over `ferrule serve`: `LangModel` (a model
 * component, shared by the agents made on it), `EmbeddingModel` (an embedder
 * component) and `VectorStore` (a vector-store component: FAISS, or any store
 * plugin the server has). They live on one runtime of this process, `defaultRuntime()`,
 * whose server is started on first use and stopped at exit (or by `stopDefaultRuntime()`).
 */

import { randomUUID } from "node:crypto";

import { type Message as StepMessage, ModelSpec } from "./agent.js";
import { InvalidInputError } from "./errors.js";
import {
  type FinishReason,
  type MessageDelta,
  type MessageDeltaOutput,
  MessageDeltaOutputIterator,
  type MessageOutput,
  type Messages,
  accumulateMessageDelta,
  endDelta,
  finishMessageDelta,
  fromAgentMessages,
  textDelta,
} from "./messages.js";
import type { NDArray } from "./ndarray.js";
import { type JsonObject, Runtime } from "./runtime.js";
import type { ToolDesc } from "./tools.js";

let shared: Runtime | undefined;

/** The runtime Ailoy 0.2's objects use: one `ferrule serve` of this process, started on first use. */
export function defaultRuntime(): Runtime {
  shared ??= new Runtime();
  return shared;
}

/** Stop the default runtime's server (a later object starts a fresh one). */
export async function stopDefaultRuntime(): Promise<void> {
  const rt = shared;
  shared = undefined;
  await rt?.stop();
}

/** Ailoy 0.2's API names (`LangModel.newStreamAPI`): `ChatCompletion` and `Responses` are OpenAI's. */
export type APISpecification = "ChatCompletion" | "OpenAI" | "Gemini" | "Claude" | "Responses" | "Grok";

/** Ailoy 0.2's API names, as ferrule's providers. */
const PROVIDERS: Record<APISpecification, string> = {
  OpenAI: "openai",
  ChatCompletion: "openai",
  Responses: "openai",
  Claude: "anthropic",
  Gemini: "gemini",
  Grok: "xai",
};

/** A step of making a local model ready (Ailoy's): `current` of `total`, `comment` saying which. */
export interface CacheProgress {
  comment: string;
  current: number;
  total: number;
}

/** Ailoy 0.2's KV-cache settings: llama.cpp's context window (`n_ctx`) and prefill batch (`n_batch`). */
export interface KVCacheConfig {
  contextWindowSize?: number;
  prefillChunkSize?: number;
  /** Refused: the model's file sets its sliding window. */
  slidingWindowSize?: number;
}

/** `EmbeddingModel.newLocal`'s settings (Ailoy 0.2's). */
export interface LocalEmbeddingModelConfig {
  /** Only 0 (the CPU): ferrule's local embedders run on the CPU. */
  deviceId?: number;
  /** Check the weights against their published SHA-256 before loading (default: yes, as Ailoy's). */
  validateChecksum?: boolean;
  progressCallback?: (progress: CacheProgress) => void;
  runtime?: Runtime;
}

/** `getDocumentPolyfill`'s kinds. */
export type DocumentPolyfillKind = "Qwen3";

export interface LocalLangModelConfig {
  /** Only 0 (the CPU): ferrule's local models run on the CPU. */
  deviceId?: number;
  /** llama.cpp has no published checksums: true is refused; false or unset checks nothing. */
  validateChecksum?: boolean;
  kvCache?: KVCacheConfig;
  /**
   * Told what happens as the server makes the model ready: the bytes of each weights file
   * as it downloads (`"Downloading <file>"`, `current` of `total` bytes), the file ready
   * (step 1 of 2), then the model loaded (`"Initialized"`, the last step). A model whose
   * backend finds its files when it is defined has that one step.
   */
  progressCallback?: (progress: CacheProgress) => void;
  /** Passed to the model's `infer`: `temperature`, `max_tokens`, ... */
  options?: JsonObject;
  runtime?: Runtime;
}

function checkDevice(deviceId: number | undefined): void {
  if (deviceId !== undefined && deviceId !== null && deviceId !== 0) {
    throw InvalidInputError.forField("ferrule's local models run on the CPU: only device 0 (the default) is taken", "deviceId");
  }
}

/** Ailoy's local-model settings as the model's attributes; what it cannot take is refused, named. */
function localModelSettings(config: LocalLangModelConfig): JsonObject {
  checkDevice(config.deviceId);
  if (config.validateChecksum === true) {
    throw InvalidInputError.forField("llama.cpp's weights have no published checksums to validate: leave it unset or false", "validateChecksum");
  }
  const settings: JsonObject = {};
  const kv = config.kvCache ?? {};
  if (kv.slidingWindowSize !== undefined) throw InvalidInputError.forField("the model's file sets its sliding window", "kvCache.slidingWindowSize");
  if (kv.contextWindowSize !== undefined) settings["n_ctx"] = kv.contextWindowSize;
  if (kv.prefillChunkSize !== undefined) settings["n_batch"] = kv.prefillChunkSize;
  return settings;
}

/** An event of the server's `prepare_model`: a file's bytes so far, or the file ready. */
type PrepareEvent = { event: "download"; filename: string; current: number; total: number | null } | { event: "ready"; filename: string };

/** A language model defined on a runtime (Ailoy 0.2's `LangModel`). */
export class LangModel {
  readonly rt: Runtime;
  readonly spec: ModelSpec;
  /** The model's component on the server. */
  readonly component: string;

  private constructor(rt: Runtime, spec: ModelSpec) {
    this.rt = rt;
    this.spec = spec;
    this.component = `lm-${randomUUID().slice(0, 12)}`;
  }

  static async #define(spec: ModelSpec, rt: Runtime): Promise<LangModel> {
    const model = new LangModel(rt, spec);
    await rt.request("define_model", spec.toRequest(model.component));
    rt.adopt(model.component);
    return model;
  }

  /** A model run by the server's machine (`"Qwen/Qwen3-0.6B"`; `$FERRULE_MODEL_ALIASES` may map it). */
  static async newLocal(modelName: string, config: LocalLangModelConfig = {}): Promise<LangModel> {
    if (typeof modelName !== "string" || !modelName) throw InvalidInputError.forField("name the model", "modelName");
    const init: { local: boolean; id: string; options?: JsonObject } = { local: true, id: modelName };
    const options = { ...config.options, ...localModelSettings(config) };
    if (Object.keys(options).length > 0) init.options = options;
    const report = config.progressCallback;
    if (report === undefined) return LangModel.#define(new ModelSpec(init), config.runtime ?? defaultRuntime());
    if (typeof report !== "function") throw InvalidInputError.forField("must be a function", "progressCallback");
    const rt = config.runtime ?? defaultRuntime();
    const prepare: JsonObject = { model: modelName };
    if (init.options !== undefined) prepare["options"] = init.options;
    // Any event means the server fetches this model's weights first: two steps, else one.
    let steps = 1;
    for await (const event of rt.stream("prepare_local_model", prepare) as AsyncIterable<PrepareEvent>) {
      steps = 2;
      report(
        event.event === "download"
          ? { comment: `Downloading ${event.filename}`, current: event.current, total: event.total ?? 0 }
          : { comment: `${event.filename} ready`, current: 1, total: steps },
      );
    }
    const model = await LangModel.#define(new ModelSpec(init), rt);
    report({ comment: "Initialized", current: steps, total: steps });
    return model;
  }

  /** A model behind a provider's streaming API: `("OpenAI" | "Claude" | "Gemini" | "Grok", model, apiKey)`. */
  static async newStreamAPI(spec: APISpecification, modelName: string, apiKey: string, config: { runtime?: Runtime } = {}): Promise<LangModel> {
    const provider = Object.hasOwn(PROVIDERS, spec) ? PROVIDERS[spec] : undefined;
    if (provider === undefined) {
      throw InvalidInputError.forField(`unknown API ${JSON.stringify(spec)}; APIs: ${Object.keys(PROVIDERS).join(", ")}`, "spec");
    }
    if (typeof modelName !== "string" || !modelName) throw InvalidInputError.forField("name the model", "modelName");
    return LangModel.#define(new ModelSpec({ local: false, id: modelName, provider, apiKey }), config.runtime ?? defaultRuntime());
  }

  /**
   * Ailoy 0.2: the model's reply to `messages` as it streams, one step (a tool call is
   * returned, not run): text and thinking deltas, then the calls and why it ended.
   * `documents` reach it as the Qwen3 document polyfill places them.
   */
  inferDelta(messages: Messages, tools: ToolDesc[] | null = null, documents: Document[] | null = null): MessageDeltaOutputIterator {
    return new MessageDeltaOutputIterator(this.#step(messages, tools ?? [], documents ?? []));
  }

  /** Ailoy 0.2: the whole reply to `messages` (`{ message, finish_reason }`), as `inferDelta` streams it. */
  async infer(messages: Messages, tools: ToolDesc[] | null = null, documents: Document[] | null = null): Promise<MessageOutput> {
    let acc: MessageDelta = { contents: [], tool_calls: [] };
    let reason: FinishReason = { type: "stop" };
    for await (const out of this.inferDelta(messages, tools, documents)) {
      acc = accumulateMessageDelta(acc, out.delta);
      if (out.finish_reason !== undefined) reason = out.finish_reason;
    }
    return { message: finishMessageDelta(acc), finish_reason: reason };
  }

  async *#step(messages: Messages, tools: ToolDesc[], documents: Document[]): AsyncGenerator<MessageDeltaOutput, void, undefined> {
    const steps = placeDocuments(fromAgentMessages(messages), documents, getDocumentPolyfill("Qwen3"));
    const body: JsonObject = { name: this.component, messages: steps, options: this.spec.options };
    if (tools.length > 0) {
      body["tools"] = tools.map((t, i) => {
        if (typeof t?.name !== "string") throw InvalidInputError.forField("a tool needs a name", `tools[${i}].name`);
        return { type: "function", function: { name: t.name, description: t.description ?? "", parameters: t.parameters } };
      });
    }
    type StepItem = { type: "output_text" | "reasoning" | "step"; content?: string; tool_requests?: Array<{ id: string; function: { name: string; arguments: any } }>; finish_reason?: string };
    for await (const item of this.rt.stream("agent_step", body) as AsyncIterable<StepItem>) {
      if (item.type === "step") yield endDelta(item.tool_requests ?? [], item.finish_reason);
      else yield textDelta(item.type, item.content ?? "");
    }
  }

  /** Delete the model's component (agents made on it stop working). */
  async delete(): Promise<void> {
    await this.rt.delete(this.component);
  }
}

export type Embedding = Float32Array;

/** An embedder component on a runtime and how many `EmbeddingModel`s use it. */
interface SharedEmbedder {
  component: string;
  dimension: number;
  users: number;
}

/**
 * The embedder components of each runtime, by model id: `EmbeddingModel.newLocal` of an id
 * already defined there shares that component (one copy of the weights in the server,
 * one load: embedding is stateless), and the last `delete()` deletes it.
 */
const embedders = new WeakMap<Runtime, Map<string, Promise<SharedEmbedder>>>();

/**
 * An embedding model the server runs (Ailoy 0.2's `EmbeddingModel`): the embedder
 * component its id routes to (`define_embedder`; an aliased id such as Ailoy's
 * `BAAI/bge-m3` keeps its own model's dimension, 1024, so stores sized for it work).
 * Models of the same id on the same runtime share one component.
 */
export class EmbeddingModel {
  readonly rt: Runtime;
  readonly model: string;
  /** The embedder's component on the server. */
  readonly component: string;
  /** How many numbers each embedding has. */
  readonly dimension: number;
  #deleted = false;

  private constructor(rt: Runtime, model: string, component: string, dimension: number) {
    this.rt = rt;
    this.model = model;
    this.component = component;
    this.dimension = dimension;
  }

  static async newLocal(modelName: string, config: LocalEmbeddingModelConfig = {}): Promise<EmbeddingModel> {
    if (typeof modelName !== "string" || !modelName) throw InvalidInputError.forField("name the model", "modelName");
    checkDevice(config.deviceId);
    if (config.validateChecksum === true) {
      throw InvalidInputError.forField(
        "the server's define_embedder loads the embedder as its plugin ships it (Python's EmbeddingModel.new_local checks MiniLM's weights): leave it unset or false",
        "validateChecksum",
      );
    }
    const report = config.progressCallback;
    if (report !== undefined && typeof report !== "function") throw InvalidInputError.forField("must be a function", "progressCallback");
    const rt = config.runtime ?? defaultRuntime();
    let shared = embedders.get(rt);
    if (shared === undefined) embedders.set(rt, (shared = new Map()));
    let defined = shared.get(modelName);
    if (defined === undefined) {
      const component = `embedding-model-${randomUUID().slice(0, 12)}`;
      defined = rt.request("define_embedder", { name: component, model: modelName }).then(({ dimension }: { dimension: number }) => {
        rt.adopt(component);
        return { component, dimension, users: 0 };
      });
      shared.set(modelName, defined);
      defined.catch(() => shared.delete(modelName)); // a later newLocal tries again
    }
    const embedder = await defined;
    embedder.users++;
    report?.({ comment: "Initialized", current: 1, total: 1 }); // the weights come with the plugin: nothing to download
    return new EmbeddingModel(rt, modelName, embedder.component, embedder.dimension);
  }

  async infer(text: string): Promise<Embedding> {
    return (await this.inferMany([text]))[0] as Embedding;
  }

  async inferMany(texts: string[]): Promise<Embedding[]> {
    const { vectors } = (await this.rt.callMethod(this.component, "embed", { texts })) as { vectors: number[][] };
    return vectors.map((vector) => Float32Array.from(vector));
  }

  /** Let go of the embedder (its component is deleted with the last model using it). Idempotent. */
  async delete(): Promise<void> {
    if (this.#deleted) return;
    this.#deleted = true;
    const shared = embedders.get(this.rt);
    const defined = shared?.get(this.model);
    const embedder = defined === undefined ? undefined : await defined;
    if (embedder === undefined || embedder.component !== this.component || --embedder.users > 0) return;
    shared?.delete(this.model);
    await this.rt.delete(this.component);
  }
}

export type VectorStoreMetadata = Record<string, any>;

export interface VectorStoreAddInput {
  embedding: Embedding | number[];
  document: string;
  metadata?: VectorStoreMetadata | null;
}

export interface VectorStoreGetResult {
  id: string;
  document: string;
  metadata?: VectorStoreMetadata;
  embedding: Embedding;
}

export interface VectorStoreRetrieveResult {
  id: string;
  document: string;
  metadata?: VectorStoreMetadata;
  /** The store's distance (FAISS: cosine, 1 - similarity; Chroma: L2); nearest first. */
  distance: number;
}

/** Every vector this object adds belongs to this document, so `clear()` deletes them all. */
const ALL = "ailoy-vector-store";

interface Chunk {
  id: string;
  text: string;
  metadata?: VectorStoreMetadata;
  vector?: number[];
  distance?: number;
}

/** Ailoy 0.1's embedding model names (`defineVectorStore`). */
export type EmbeddingModelName = "BAAI/bge-m3";

/** Ailoy 0.1's store names (`defineVectorStore`): FAISS in memory, or a Chroma server. */
export type VectorStoreName = "faiss" | "chromadb";

/** A document Ailoy 0.1's `VectorStore.insert` takes (it embeds the text itself). */
export interface VectorStoreInsertItem {
  document: string;
  metadata?: Record<string, any> | null;
}

/** What Ailoy 0.1's `VectorStore.retrieve(query, topK)` gives: the cosine similarity, nearest first. */
export interface VectorStoreRetrieveItem extends VectorStoreInsertItem {
  id: string;
  similarity: number;
}

/** Ailoy 0.1's raw component types its `VectorStore` defines (ferrule-ailoy's, on the server). */
const AILOY_V01_STORES: Record<VectorStoreName, string> = {
  faiss: "faiss_vector_store",
  chromadb: "chromadb_vector_store",
};
const AILOY_V01_EMBEDDERS: Record<EmbeddingModelName, { componentType: string; dimension: number }> = {
  "BAAI/bge-m3": { componentType: "tvm_embedding_model", dimension: 1024 },
};

/** Which API made a store: it decides what `retrieve` takes. */
type Made = { api: "0.1"; embedder: string; store: string; defined: boolean } | { api: "0.2"; store: string };

/**
 * A vector store, in Ailoy's two APIs; which one is decided by how it was made, never by
 * the arguments:
 *
 * - Ailoy 0.2: `VectorStore.newFaiss(dim)` / `newChroma(url, collection)` (ferrule's own
 *   store components): `addVector(s)`, `getById(s)`, `retrieve(embedding, topK)`,
 *   `batchRetrieve`, `removeVector(s)`, `count`, `clear`.
 * - Ailoy 0.1: `new VectorStore(runtime)` then `define(...)`, or
 *   `defineVectorStore(runtime, "BAAI/bge-m3", "faiss")`: Ailoy's raw
 *   `tvm_embedding_model` and `faiss_vector_store` / `chromadb_vector_store` components
 *   (ferrule-ailoy on the server): `insert({document, metadata})` (embedded for you),
 *   `retrieve(query, topK = 5)` with a text, `embedding(text)`, `clear`.
 *
 * A method of the other API is refused, saying which to use.
 */
export class VectorStore {
  readonly rt: Runtime;
  #made: Made;

  /** Ailoy 0.1: a store on `runtime`, defined by `define(...)` (or use `defineVectorStore`). */
  constructor(runtime: Runtime) {
    if (!(runtime instanceof Runtime)) throw InvalidInputError.forField("expected a Runtime", "runtime");
    this.rt = runtime;
    const id = randomUUID().slice(0, 12);
    this.#made = { api: "0.1", embedder: `embedding-${id}`, store: `vs-${id}`, defined: false };
  }

  /** The store's component on the server. */
  get component(): string {
    return this.#made.store;
  }

  /** Which of Ailoy's APIs made this store (and so what its `retrieve` takes). */
  get api(): "0.1" | "0.2" {
    return this.#made.api;
  }

  /** Define a store of `componentType` (ferrule's: `"faiss_store"`, `"chroma_vector_store"`, ...), Ailoy 0.2's way. */
  static async define(componentType: string, attrs: JsonObject, config: { runtime?: Runtime } = {}): Promise<VectorStore> {
    const rt = config.runtime ?? defaultRuntime();
    const store = new VectorStore(rt);
    store.#made = { api: "0.2", store: `vs-${randomUUID().slice(0, 12)}` };
    await rt.define(componentType, store.component, attrs);
    return store;
  }

  /** An in-memory FAISS index of `dim` dimensions (cosine distance), from the ferrule-faiss plugin. */
  static async newFaiss(dim: number, config: { runtime?: Runtime } = {}): Promise<VectorStore> {
    if (!Number.isInteger(dim) || dim <= 0) throw InvalidInputError.forField("must be a positive integer", "dim");
    return VectorStore.define("faiss_store", { dimension: dim }, config);
  }

  /**
   * A collection of a running Chroma server, through the ferrule-chroma plugin. Which
   * server is the ferrule server's to say (`$FERRULE_CHROMA_URL` there, default
   * `http://localhost:8000`: a URL from the wire is never connected to); `url` must be
   * that one as this process sees it (a runtime this process started inherits it).
   */
  static async newChroma(url: string | null = null, collectionName = "ailoy", config: { runtime?: Runtime } = {}): Promise<VectorStore> {
    const configured = (process.env["FERRULE_CHROMA_URL"] || "http://localhost:8000").replace(/\/+$/, "");
    if (url !== null && url.replace(/\/+$/, "") !== configured) {
      throw InvalidInputError.forField(
        `the server connects to the Chroma at $FERRULE_CHROMA_URL (${configured}), not ${url}: set it before the runtime starts`,
        "url",
      );
    }
    // L2, as Ailoy's Chroma store: a cosine Chroma space keeps vectors renormalised, not as given.
    return VectorStore.define("chroma_vector_store", { collection: collectionName, distance: "l2" }, config);
  }

  /**
   * Ailoy 0.1: define the embedding model and the store on the runtime (a no-op once
   * defined). `embeddingModelAttrs` and `vectorStoreAttrs` are the raw components'
   * attributes (`device`; `url`, `collection`); a FAISS store is sized for the model.
   */
  async define(
    embeddingModelName: EmbeddingModelName,
    embeddingModelAttrs: Record<string, any>,
    vectorStoreName: VectorStoreName,
    vectorStoreAttrs: Record<string, any>,
  ): Promise<void> {
    const made = this.#v01("define");
    if (made.defined) return;
    const model = Object.hasOwn(AILOY_V01_EMBEDDERS, embeddingModelName) ? AILOY_V01_EMBEDDERS[embeddingModelName] : undefined;
    if (model === undefined) {
      throw InvalidInputError.forField(`unknown embedding model ${JSON.stringify(embeddingModelName)}; Ailoy 0.1 has "BAAI/bge-m3"`, "embeddingModelName");
    }
    const storeType = Object.hasOwn(AILOY_V01_STORES, vectorStoreName) ? AILOY_V01_STORES[vectorStoreName] : undefined;
    if (storeType === undefined) {
      throw InvalidInputError.forField(`unknown vector store ${JSON.stringify(vectorStoreName)}; use "faiss" or "chromadb"`, "vectorStoreName");
    }
    await this.rt.define(model.componentType, made.embedder, { model: embeddingModelName, ...embeddingModelAttrs });
    try {
      const attrs = vectorStoreName === "faiss" ? { dimension: model.dimension, ...vectorStoreAttrs } : { ...vectorStoreAttrs };
      await this.rt.define(storeType, made.store, attrs);
    } catch (error) {
      await this.rt.delete(made.embedder);
      throw error;
    }
    made.defined = true;
  }

  /** Ailoy 0.1: embed `item.document` and store it with its metadata. */
  async insert(item: VectorStoreInsertItem): Promise<void> {
    const made = this.#v01("insert", true);
    if (typeof item?.document !== "string") throw InvalidInputError.forField("must be a string", "item.document");
    const embedding = await this.embedding(item.document);
    await this.rt.callMethod(made.store, "insert", { embedding, document: item.document, metadata: item.metadata ?? null });
  }

  /** Ailoy 0.1: the vector of `text`, from the store's embedding model. */
  async embedding(text: string): Promise<NDArray> {
    const made = this.#v01("embedding", true);
    return ((await this.rt.callMethod(made.embedder, "infer", { prompt: text })) as { embedding: NDArray }).embedding;
  }

  /** Ailoy 0.1's methods need a store it made (and defined). */
  #v01(method: string, defined = false): Extract<Made, { api: "0.1" }> {
    const made = this.#made;
    if (made.api !== "0.1") {
      throw InvalidInputError.forField(
        `${method} is Ailoy 0.1's (new VectorStore(runtime) / defineVectorStore); this store was made by VectorStore.newFaiss/newChroma (Ailoy 0.2): use addVector(s) and retrieve(embedding, topK)`,
        method,
      );
    }
    if (defined && !made.defined) throw InvalidInputError.forField("the store is not defined yet: await store.define(...) first", method);
    return made;
  }

  /** Ailoy 0.2's methods need a store `newFaiss` / `newChroma` made. */
  #v02(method: string): string {
    if (this.#made.api !== "0.2") {
      throw InvalidInputError.forField(
        `${method} is Ailoy 0.2's (VectorStore.newFaiss/newChroma); this store was made by new VectorStore(runtime) (Ailoy 0.1): use insert({document}) and retrieve(query, topK)`,
        method,
      );
    }
    return this.#made.store;
  }

  async addVector(input: VectorStoreAddInput): Promise<string> {
    return (await this.addVectors([input]))[0] as string;
  }

  async addVectors(inputs: VectorStoreAddInput[]): Promise<string[]> {
    const chunks = inputs.map((input, i) => {
      if (typeof input?.document !== "string") throw InvalidInputError.forField("must be a string", `inputs[${i}].document`);
      const chunk: JsonObject = { id: randomUUID(), vector: Array.from(input.embedding ?? []), text: input.document, document_id: ALL };
      if (input.metadata != null) chunk["metadata"] = input.metadata;
      return chunk;
    });
    await this.rt.callMethod(this.#v02("addVectors"), "upsert", { chunks });
    return chunks.map((c) => c["id"] as string);
  }

  async getById(id: string): Promise<VectorStoreGetResult | null> {
    return (await this.getByIds([id]))[0] ?? null;
  }

  async getByIds(ids: string[]): Promise<VectorStoreGetResult[]> {
    const { chunks } = (await this.rt.callMethod(this.#v02("getByIds"), "get", { ids, include_vectors: true })) as { chunks: Chunk[] };
    return chunks.map((c) => withMetadata({ id: c.id, document: c.text, embedding: Float32Array.from(c.vector ?? []) }, c.metadata));
  }

  /**
   * The nearest documents, nearest first. Ailoy 0.2 (a store `newFaiss` / `newChroma` made):
   * `retrieve(queryEmbedding, topK)`, each with its `distance`. Ailoy 0.1 (`new
   * VectorStore(runtime)`): `retrieve(query, topK = 5)` with a text, embedded by the store's
   * model, each with its `similarity`.
   */
  retrieve(queryEmbedding: Embedding | number[], topK: number): Promise<VectorStoreRetrieveResult[]>;
  retrieve(query: string, topK?: number): Promise<VectorStoreRetrieveItem[]>;
  async retrieve(query: Embedding | number[] | string, topK?: number): Promise<VectorStoreRetrieveResult[] | VectorStoreRetrieveItem[]> {
    if (this.#made.api === "0.1") {
      const made = this.#v01("retrieve", true);
      if (typeof query !== "string") throw InvalidInputError.forField("Ailoy 0.1's retrieve takes the query's text (this store embeds it)", "query");
      const embedding = await this.embedding(query);
      const { results } = (await this.rt.callMethod(made.store, "retrieve", { query_embedding: embedding, top_k: topK ?? 5 })) as {
        results: VectorStoreRetrieveItem[];
      };
      return results;
    }
    if (typeof query === "string") throw InvalidInputError.forField("Ailoy 0.2's retrieve takes an embedding (EmbeddingModel.infer gives one)", "queryEmbedding");
    const { matches } = (await this.rt.callMethod(this.#made.store, "search", { vector: Array.from(query), top_k: topK })) as {
      matches: Chunk[];
    };
    return matches.map((c) => withMetadata({ id: c.id, document: c.text, distance: c.distance as number }, c.metadata));
  }

  async batchRetrieve(queryEmbeddings: Array<Embedding | number[]>, topK: number): Promise<VectorStoreRetrieveResult[][]> {
    return Promise.all(queryEmbeddings.map((query) => this.retrieve(query, topK)));
  }

  async removeVector(id: string): Promise<void> {
    await this.removeVectors([id]);
  }

  async removeVectors(ids: string[]): Promise<void> {
    await this.rt.callMethod(this.#v02("removeVectors"), "delete", { ids });
  }

  /** Remove every vector this store holds that was added through this class. */
  async clear(): Promise<void> {
    if (this.#made.api === "0.1") {
      await this.rt.callMethod(this.#v01("clear", true).store, "clear", null);
      return;
    }
    await this.rt.callMethod(this.#made.store, "delete", { document_ids: [ALL] });
  }

  async count(): Promise<number> {
    return ((await this.rt.callMethod(this.#v02("count"), "count", {})) as { count: number }).count;
  }

  /** Delete the store's components (its vectors with them, for an in-memory store); Ailoy 0.1's is a no-op once deleted. */
  async delete(): Promise<void> {
    const made = this.#made;
    if (made.api === "0.2") {
      await this.rt.delete(made.store);
      return;
    }
    if (!made.defined) return;
    made.defined = false;
    await this.rt.delete(made.embedder);
    await this.rt.delete(made.store);
  }
}

/** Ailoy 0.1: define a store of `vectorStoreName` embedding with `modelName` on `runtime`. */
export async function defineVectorStore(
  runtime: Runtime,
  modelName: EmbeddingModelName,
  vectorStoreName: VectorStoreName,
  args: { device?: number; url?: string; collection?: string } = {},
): Promise<VectorStore> {
  const store = new VectorStore(runtime);
  const embeddingAttrs: Record<string, any> = args.device === undefined ? {} : { device: args.device };
  const storeAttrs: Record<string, any> = {};
  if (args.url !== undefined) storeAttrs["url"] = args.url;
  if (args.collection !== undefined) storeAttrs["collection"] = args.collection;
  await store.define(modelName, embeddingAttrs, vectorStoreName, storeAttrs);
  return store;
}

/** Ailoy leaves `metadata` out when there is none; the stores keep `{}`. */
function withMetadata<T extends object>(result: T, metadata: VectorStoreMetadata | undefined): T & { metadata?: VectorStoreMetadata } {
  return metadata === undefined || Object.keys(metadata).length === 0 ? result : { ...result, metadata };
}

/** A retrieved document (Ailoy 0.2's `Document`). */
export interface Document {
  id: string;
  title?: string;
  text: string;
}

export interface KnowledgeConfig {
  /** How many documents a run retrieves (default 1). */
  topK?: number;
}

/** Documents a model reads: an embedding model and a vector store (Ailoy 0.2's `Knowledge`). */
export class Knowledge {
  readonly store: VectorStore;
  readonly embeddingModel: EmbeddingModel;

  private constructor(store: VectorStore, embeddingModel: EmbeddingModel) {
    this.store = store;
    this.embeddingModel = embeddingModel;
  }

  static newVectorStore(store: VectorStore, embeddingModel: EmbeddingModel): Knowledge {
    if (!(store instanceof VectorStore)) throw InvalidInputError.forField("expected a VectorStore", "store");
    if (store.api !== "0.2") throw InvalidInputError.forField("expected a store VectorStore.newFaiss / newChroma made (Ailoy 0.2's)", "store");
    if (!(embeddingModel instanceof EmbeddingModel)) throw InvalidInputError.forField("expected an EmbeddingModel", "embeddingModel");
    return new Knowledge(store, embeddingModel);
  }

  /** The `topK` documents nearest to `query`, nearest first. */
  async retrieve(query: string, config: KnowledgeConfig = {}): Promise<Document[]> {
    const topK = config.topK ?? 1;
    if (!Number.isInteger(topK) || topK < 1) throw InvalidInputError.forField("must be a positive integer", "topK");
    const found = await this.store.retrieve(await this.embeddingModel.infer(query), topK);
    return found.map((r) => ({ id: r.id, text: r.document }));
  }
}

/**
 * How documents reach a model that has no document input of its own: `{{documents}}` in
 * `systemMessageTemplate` becomes the documents (one per paragraph, numbered), `{{query}}`
 * and `{{documents}}` in `queryMessageTemplate` the user's question and the documents.
 */
export interface DocumentPolyfill {
  systemMessageTemplate?: string;
  queryMessageTemplate?: string;
}

const DOCUMENT_POLYFILLS: Record<string, DocumentPolyfill> = {
  Qwen3: {
    systemMessageTemplate:
      "Answer the user's question using the documents below where they are relevant; say so when they do not answer it.\n\n{{documents}}",
  },
};

/** The document polyfill for a model family (Ailoy 0.2 names `"Qwen3"`). */
export function getDocumentPolyfill(kind: string): DocumentPolyfill {
  const polyfill = Object.hasOwn(DOCUMENT_POLYFILLS, kind) ? DOCUMENT_POLYFILLS[kind] : undefined;
  if (polyfill === undefined) {
    throw InvalidInputError.forField(`unknown document polyfill ${JSON.stringify(kind)}; kinds: ${Object.keys(DOCUMENT_POLYFILLS).join(", ")}`, "kind");
  }
  return { ...polyfill };
}

/**
 * `messages` with `documents` placed as `polyfill` says, for the last user message: its
 * `queryMessageTemplate` rewrites that message's text, its `systemMessageTemplate` becomes
 * (or extends) the system message. No documents: `messages` as they are.
 */
export function placeDocuments(messages: StepMessage[], documents: Document[], polyfill: DocumentPolyfill): StepMessage[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf("user");
  const rendered = renderDocuments(documents);
  if (lastUser < 0 || !rendered) return messages;
  const user = messages[lastUser] as StepMessage;
  const query = user.content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
  const out = [...messages];
  if (polyfill.queryMessageTemplate !== undefined) {
    const text = polyfill.queryMessageTemplate.replaceAll("{{query}}", query).replaceAll("{{documents}}", rendered);
    out[lastUser] = { ...user, content: [{ type: "text", text }, ...user.content.filter((p) => p.type !== "text")] };
  }
  if (polyfill.systemMessageTemplate !== undefined) {
    const text = polyfill.systemMessageTemplate.replaceAll("{{documents}}", rendered);
    const system = out[0]?.role === "system" ? (out.shift() as StepMessage) : undefined;
    const before = system ? system.content.map((p) => (p.type === "text" ? p.text : "")).join("") + "\n\n" : "";
    out.unshift({ role: "system", content: [{ type: "text", text: before + text }] });
  }
  return out;
}

/** `documents` as the text that replaces `{{documents}}`. */
export function renderDocuments(documents: Document[]): string {
  return documents.map((d, i) => `[${i + 1}]${d.title ? ` ${d.title}` : ""}\n${d.text}`).join("\n\n");
}
