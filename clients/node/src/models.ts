/**
 * Ailoy 0.2's model and store objects over `ferrule serve`: `LangModel` (a model
 * component, shared by the agents made on it), `EmbeddingModel` (an embedder
 * component) and `VectorStore` (a vector-store component: FAISS, or any store
 * plugin the server has). They live on one runtime of this process, `defaultRuntime()`,
 * whose server is started on first use and stopped at exit (or by `stopDefaultRuntime()`).
 */

import { randomUUID } from "node:crypto";

import { ModelSpec } from "./agent.js";
import { InvalidInputError } from "./errors.js";
import { type JsonObject, Runtime } from "./runtime.js";

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

/** Ailoy 0.2's API names, as ferrule's providers. */
const PROVIDERS: Record<string, string> = {
  OpenAI: "openai",
  ChatCompletion: "openai",
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

export interface LocalLangModelConfig {
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
    if (config.options !== undefined) init.options = config.options;
    const report = config.progressCallback;
    if (report === undefined) return LangModel.#define(new ModelSpec(init), config.runtime ?? defaultRuntime());
    if (typeof report !== "function") throw InvalidInputError.forField("must be a function", "progressCallback");
    const rt = config.runtime ?? defaultRuntime();
    const prepare: JsonObject = { model: modelName };
    if (config.options !== undefined) prepare["options"] = config.options;
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
  static async newStreamAPI(spec: string, modelName: string, apiKey: string, config: { runtime?: Runtime } = {}): Promise<LangModel> {
    const provider = Object.hasOwn(PROVIDERS, spec) ? PROVIDERS[spec] : undefined;
    if (provider === undefined) {
      throw InvalidInputError.forField(`unknown API ${JSON.stringify(spec)}; APIs: ${Object.keys(PROVIDERS).join(", ")}`, "spec");
    }
    if (typeof modelName !== "string" || !modelName) throw InvalidInputError.forField("name the model", "modelName");
    return LangModel.#define(new ModelSpec({ local: false, id: modelName, provider, apiKey }), config.runtime ?? defaultRuntime());
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

  static async newLocal(modelName: string, config: { runtime?: Runtime } = {}): Promise<EmbeddingModel> {
    if (typeof modelName !== "string" || !modelName) throw InvalidInputError.forField("name the model", "modelName");
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

/** A vector-store component (Ailoy 0.2's `VectorStore`). */
export class VectorStore {
  readonly rt: Runtime;
  readonly component: string;

  private constructor(rt: Runtime, component: string) {
    this.rt = rt;
    this.component = component;
  }

  /** Define a store of `componentType` (`"faiss_vector_store"`, `"chromadb_vector_store"`, ...). */
  static async define(componentType: string, attrs: JsonObject, config: { runtime?: Runtime } = {}): Promise<VectorStore> {
    const rt = config.runtime ?? defaultRuntime();
    const store = new VectorStore(rt, `vs-${randomUUID().slice(0, 12)}`);
    await rt.define(componentType, store.component, attrs);
    return store;
  }

  /** An in-memory FAISS index of `dim` dimensions (cosine distance), from the ferrule-faiss plugin. */
  static async newFaiss(dim: number, config: { runtime?: Runtime } = {}): Promise<VectorStore> {
    if (!Number.isInteger(dim) || dim <= 0) throw InvalidInputError.forField("must be a positive integer", "dim");
    return VectorStore.define("faiss_vector_store", { dimension: dim }, config);
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
    return VectorStore.define("chromadb_vector_store", { collection: collectionName, distance: "l2" }, config);
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
    await this.rt.callMethod(this.component, "upsert", { chunks });
    return chunks.map((c) => c["id"] as string);
  }

  async getById(id: string): Promise<VectorStoreGetResult | null> {
    return (await this.getByIds([id]))[0] ?? null;
  }

  async getByIds(ids: string[]): Promise<VectorStoreGetResult[]> {
    const { chunks } = (await this.rt.callMethod(this.component, "get", { ids, include_vectors: true })) as { chunks: Chunk[] };
    return chunks.map((c) => withMetadata({ id: c.id, document: c.text, embedding: Float32Array.from(c.vector ?? []) }, c.metadata));
  }

  /** The `topK` nearest vectors to `queryEmbedding`, nearest first. */
  async retrieve(queryEmbedding: Embedding | number[], topK: number): Promise<VectorStoreRetrieveResult[]> {
    const { matches } = (await this.rt.callMethod(this.component, "search", { vector: Array.from(queryEmbedding), top_k: topK })) as {
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
    await this.rt.callMethod(this.component, "delete", { ids });
  }

  /** Remove every vector this store holds that was added through this class. */
  async clear(): Promise<void> {
    await this.rt.callMethod(this.component, "delete", { document_ids: [ALL] });
  }

  async count(): Promise<number> {
    return ((await this.rt.callMethod(this.component, "count", {})) as { count: number }).count;
  }

  /** Delete the store's component (its vectors with it, for an in-memory store). */
  async delete(): Promise<void> {
    await this.rt.delete(this.component);
  }
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

/** `documents` as the text that replaces `{{documents}}`. */
export function renderDocuments(documents: Document[]): string {
  return documents.map((d, i) => `[${i + 1}]${d.title ? ` ${d.title}` : ""}\n${d.text}`).join("\n\n");
}
