/**
 * `startRuntime` and `Runtime`: the kernel's requests over `ferrule serve`'s protocol
 * (docs/serve.md, "The kernel protocol"), as Python's `Runtime(url=...)` speaks it.
 *
 * `startRuntime()` with no `url` starts `ferrule serve` as a child process on a free
 * loopback port with a fresh token, and stops it in `rt.stop()` or when this process
 * exits; `startRuntime({ url, token })` connects to a running server.
 */

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

import {
  FerruleError,
  InvalidInputError,
  RemoteError,
  RequestCancelledError,
  errorFromDict,
} from "./errors.js";
import { NDArray, ndarrayOutputs } from "./ndarray.js";

/** Where the kernel's requests live, below the server's URL. */
export const KERNEL_API = "/ferrule/v1";

export type JsonObject = { [key: string]: unknown };

/** A JSON.stringify replacer: a typed array (`Float32Array`, ...) is sent as a list of its
 * numbers (JSON.stringify alone writes it as an object keyed "0", "1", ...): Ailoy's code
 * passes embeddings as Float32Array. */
function typedArraysAsLists(_key: string, value: unknown): unknown {
  return ArrayBuffer.isView(value) && !(value instanceof DataView) ? Array.from(value as unknown as ArrayLike<number>) : value;
}

export interface StartRuntimeOptions {
  /** A running server (`http://127.0.0.1:8080`); without it `ferrule serve` is started. */
  url?: string;
  /** The server's bearer token (a started server gets a fresh one). */
  token?: string;
  /**
   * The command that starts the server, before its `serve` arguments. Default:
   * `$FERRULE_SERVE_COMMAND` (split on spaces), else `ferrule` from PATH, else
   * `python3 -m ferrule.cli` (`$FERRULE_PYTHON` names another Python).
   */
  command?: string[];
  /** More arguments for `ferrule serve` (`["--plugin", "mod:obj"]`). */
  serveArgs?: string[];
  /** The started server's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** How long a started server may take to listen, in ms (default 120 000). */
  startTimeoutMs?: number;
}

export interface RequestOptions {
  /** Aborting it cancels the request (and a stream's producer on the server). */
  signal?: AbortSignal;
}

/** Start `ferrule serve` (no `url`) or connect to a running one. */
export async function startRuntime(options: StartRuntimeOptions = {}): Promise<Runtime> {
  if (options.url !== undefined) {
    return new Runtime(options.url, options.token);
  }
  const server = await ServerProcess.start(options);
  return new Runtime(server.url, server.token, server);
}

function serveCommand(options: StartRuntimeOptions): string[] {
  if (options.command !== undefined) {
    if (options.command.length === 0) {
      throw InvalidInputError.forField("must name a program", "command");
    }
    return options.command;
  }
  const fromEnv = process.env["FERRULE_SERVE_COMMAND"]?.trim();
  if (fromEnv) {
    return fromEnv.split(/\s+/);
  }
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, "ferrule"))) {
      return [join(dir, "ferrule")];
    }
  }
  return [process.env["FERRULE_PYTHON"] ?? "python3", "-m", "ferrule.cli"];
}

const LISTENING = /listening on (http:\/\/[^\s]+)/;

/** A server a runtime started, which its `stop()` stops. */
export interface OwnedServer {
  stop(): Promise<void>;
}

/** A `ferrule serve` child process of this one. */
class ServerProcess implements OwnedServer {
  private exited: Promise<void>;
  private readonly onExit: () => void;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    readonly token: string,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    // At exit only synchronous work runs: a signal is all the server needs to stop.
    this.onExit = () => {
      child.kill("SIGTERM");
    };
    process.once("exit", this.onExit);
    // The server never keeps this process alive: forgetting `stop()` ends it at exit, and
    // a killed process (no exit handler runs) closes the stdin pipe the server watches.
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
    }
  }

  static async start(options: StartRuntimeOptions): Promise<ServerProcess> {
    const [program, ...prefix] = serveCommand(options);
    const token = randomBytes(32).toString("base64url");
    const args = [...prefix, "serve", "--host", "127.0.0.1", "--port", "0", "--stop-on-stdin-eof"];
    args.push(...(options.serveArgs ?? []));
    // The token goes by environment, never on the command line (`ps` shows arguments).
    const env = { ...(options.env ?? process.env), FERRULE_TOKEN: token };
    const child = spawn(program as string, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    const timeoutMs = options.startTimeoutMs ?? 120_000;
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const fail = (why: string) => {
        cleanup();
        child.kill("SIGKILL");
        reject(
          new RemoteError(`ferrule serve (${program}) ${why}${output ? `:\n${tail(output)}` : ""}`),
        );
      };
      const timer = setTimeout(() => fail(`did not listen within ${timeoutMs} ms`), timeoutMs);
      const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        const found = LISTENING.exec(output);
        if (found) {
          cleanup();
          resolve(found[1] as string);
        }
      };
      const onError = (error: Error) => fail(`could not start: ${error.message}`);
      const onExit = (code: number | null) => fail(`exited with code ${code} before listening`);
      const cleanup = () => {
        clearTimeout(timer);
        child.off("error", onError);
        child.off("exit", onExit);
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.once("error", onError);
      child.once("exit", onExit);
    });
    // Keep draining the pipes so a chatty server never blocks on a full one.
    child.stdout?.resume();
    child.stderr?.resume();
    return new ServerProcess(child, url, token);
  }

  /** SIGTERM, then SIGKILL if it is still running after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    process.off("exit", this.onExit);
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill("SIGTERM");
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.child.kill("SIGKILL");
          resolve();
        }, graceMs);
      });
      await Promise.race([this.exited, late]);
      clearTimeout(timer);
    }
  }
}

/**
 * The items of one NDJSON stream (`{"item": ...}` lines, then `{"end": true}` or one
 * `{"error": ...}`). A hand-written iterator rather than an async generator: the items of
 * one network read are handed out from a queue, one resolved promise each, which keeps
 * the per-item cost near that of reading the stream bare (bench/bench_node.py).
 */
export class ItemStream implements AsyncIterableIterator<any> {
  readonly #runtime: Runtime;
  readonly #open: (signal: AbortSignal | undefined) => Promise<Response>;
  readonly #controller = new AbortController();
  readonly #outer: AbortSignal | undefined;
  readonly #onAbort: () => void;
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  #decoder = new TextDecoder();
  #buffer = "";
  #queue: unknown[] = [];
  #head = 0;
  #failure: FerruleError | undefined;
  #ended = false;
  #closed = false;

  constructor(runtime: Runtime, open: (signal: AbortSignal | undefined) => Promise<Response>, signal?: AbortSignal) {
    this.#runtime = runtime;
    this.#open = open;
    this.#outer = signal;
    this.#onAbort = () => {
      this.#controller.abort(signal?.reason);
      this.#reader?.cancel().catch(() => undefined);
    };
    if (signal?.aborted) this.#onAbort();
    else signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  [Symbol.asyncIterator](): ItemStream {
    return this;
  }

  next(): Promise<IteratorResult<any>> {
    if (this.#head < this.#queue.length) {
      return Promise.resolve({ value: this.#queue[this.#head++], done: false });
    }
    return this.#fill();
  }

  async return(): Promise<IteratorResult<any>> {
    this.#close();
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<any>> {
    this.#close();
    throw error;
  }

  async #fill(): Promise<IteratorResult<any>> {
    const signal = this.#controller.signal;
    try {
      for (;;) {
        if (this.#head < this.#queue.length) return { value: this.#queue[this.#head++], done: false };
        if (this.#failure !== undefined) throw this.#failure;
        if (this.#ended) {
          this.#close();
          return { value: undefined, done: true };
        }
        if (this.#closed) return { value: undefined, done: true };
        if (this.#reader === undefined) {
          // A signal makes undici slower per read: only a caller's signal is passed, and
          // closing cancels the body instead, which closes the connection just the same.
          const response = await this.#open(this.#outer === undefined ? undefined : signal);
          this.#reader = (response.body as ReadableStream<Uint8Array>).getReader();
        }
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await this.#reader.read();
        } catch (error) {
          throw this.#runtime.failed(error, signal);
        }
        if (chunk.done) {
          throw new RemoteError(`ferrule server at ${this.#runtime.url} ended a stream before its end`, {
            url: this.#runtime.url,
          });
        }
        this.#parse(this.#decoder.decode(chunk.value, { stream: true }));
      }
    } catch (error) {
      this.#close();
      throw error instanceof FerruleError ? error : this.#runtime.failed(error, signal);
    }
  }

  /** Queue the items of the complete lines so far; note the stream's end or error. */
  #parse(text: string): void {
    const lines = (this.#buffer + text).split("\n");
    this.#buffer = lines.pop() as string;
    this.#queue = [];
    this.#head = 0;
    for (const line of lines) {
      const frame = JSON.parse(line) as { item?: unknown; error?: unknown };
      if ("item" in frame) {
        this.#queue.push(frame.item);
      } else {
        // The items before an error are still handed out, then the error raises.
        if ("error" in frame) this.#failure = errorFromDict(frame.error);
        this.#ended = true;
        return;
      }
    }
  }

  /** Close the connection (the server then closes the producer). Idempotent. */
  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue = [];
    this.#head = 0;
    this.#outer?.removeEventListener("abort", this.#onAbort);
    this.#controller.abort();
    this.#reader?.cancel().catch(() => undefined);
  }
}

const NOT_STARTED = "(not started)";

/**
 * The servers of named runtimes (`new Runtime("inproc://name")`): every runtime of one name
 * in this process shares one, as Ailoy's runtimes of one URL share its threads; it stops
 * when the last of them (and `stopThreads`) lets go.
 */
const namedServers = new Map<string, { server: Promise<ServerProcess>; users: number }>();

function useNamedServer(name: string, options: Omit<StartRuntimeOptions, "url" | "token">): Promise<ServerProcess> {
  let entry = namedServers.get(name);
  if (entry === undefined) {
    const started = { server: ServerProcess.start(options), users: 0 };
    started.server.catch(() => {
      if (namedServers.get(name) === started) namedServers.delete(name); // a later start tries again
    });
    namedServers.set(name, (entry = started));
  }
  entry.users++;
  return entry.server;
}

async function leaveNamedServer(name: string): Promise<void> {
  const entry = namedServers.get(name);
  if (entry === undefined || --entry.users > 0) return;
  namedServers.delete(name);
  await (await entry.server).stop();
}

function inprocName(url: string): string {
  if (typeof url !== "string" || !url.startsWith("inproc://")) {
    throw InvalidInputError.forField(`expected an "inproc://name" URL, got ${JSON.stringify(url)}`, "url");
  }
  return url.slice("inproc://".length);
}

/**
 * Ailoy 0.1's `startThreads(url)`: start the server that runtimes of the URL
 * `"inproc://name"` share (here a `ferrule serve` of this process), and keep it until
 * `stopThreads(url)`. A Promise (starting a server takes a moment; Ailoy's returned
 * nothing); runtimes of the name start it themselves when needed.
 */
export async function startThreads(url: string): Promise<void> {
  await useNamedServer(inprocName(url), {});
}

/** Ailoy 0.1's `stopThreads(url)`: let go of what `startThreads(url)` started (it stops once no runtime of the name uses it). */
export async function stopThreads(url: string): Promise<void> {
  await leaveNamedServer(inprocName(url));
}

/** Ailoy 0.1's `generateUUID()`: a random (version 4) UUID. */
export function generateUUID(): string {
  return randomUUID();
}

/** Ailoy 0.1's broker packets (the wire of its native addon). */
export type PacketType = "connect" | "disconnect" | "subscribe" | "unsubscribe" | "execute" | "respond" | "respond_execute";
export type InstructionType = "call_function" | "call_method" | "define_compoennt" | "delete_component";
export interface Packet {
  packet_type: PacketType;
  instruction_type: InstructionType | undefined;
  headers: Array<string | boolean | number>;
  body: Record<string, any>;
}

/**
 * Ailoy 0.1's `BrokerClient` was its runtime's connection to the native broker (packets
 * in-process). ferrule's `Runtime` speaks `ferrule serve`'s HTTP protocol instead, so there
 * is no broker to connect to: constructing one is refused, saying what to use.
 */
export class BrokerClient {
  constructor(url: string) {
    throw InvalidInputError.forField(
      `BrokerClient(${JSON.stringify(url)}) is Ailoy 0.1's native broker connection, which ferrule has not: use new Runtime(url) (its define, call, callMethod, callIterMethod are the broker's requests)`,
      "url",
    );
  }
}

function tail(text: string): string {
  return text.length > 2000 ? text.slice(-2000) : text;
}

/**
 * The kernel's requests on one server: `call`, `callIter`, `define`, `delete`,
 * `callMethod`, `callIterMethod`, introspection and `stop`. Results and typed errors are
 * those of the Python runtime. The token never appears in its string form.
 *
 * `new Runtime()` starts its own `ferrule serve` on `await rt.start()`, or on its first
 * request, as `startRuntime()` does. Ailoy's `new Runtime("inproc://name")` does the same,
 * but every runtime of one name in this process shares that server (and so its components),
 * which stops with the last of them.
 */
export class Runtime {
  /** The server's URL (`"(not started)"` until a runtime of its own has started it). */
  url = NOT_STARTED;
  #headers: Record<string, string> = { "Content-Type": "application/json" };
  #server: OwnedServer | undefined;
  #starting: Promise<void> | undefined;
  #components: string[] = [];
  /** The name of an `"inproc://name"` runtime, whose server runtimes of the name share. */
  #name: string | undefined;
  /** The component type of each component this runtime defined (see `ndarrayOutputs`). */
  #types = new Map<string, string>();
  #stopped = false;

  constructor(url?: string, token?: string, server?: OwnedServer) {
    if (url === undefined) return; // a server of its own, started by start()
    if (typeof url === "string" && url.startsWith("inproc://")) {
      this.#name = inprocName(url); // the name's server, started (or shared) by start()
      return;
    }
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
      throw InvalidInputError.forField(
        `url must start with http:// or https:// (or be left out to start a server), got ${JSON.stringify(url)}`,
        "url",
      );
    }
    this.#connect(url, token);
    this.#server = server;
  }

  #connect(url: string, token: string | undefined): void {
    this.url = url.replace(/\/+$/, "");
    if (token) this.#headers["Authorization"] = `Bearer ${token}`;
  }

  /**
   * Start this runtime's own `ferrule serve` (a runtime made with a URL is already
   * connected: then this does nothing). Idempotent; requests call it themselves.
   */
  start(options: Omit<StartRuntimeOptions, "url" | "token"> = {}): Promise<void> {
    this.#checkRunning();
    if (this.url !== NOT_STARTED) return Promise.resolve();
    const name = this.#name;
    this.#starting ??= (name === undefined ? ServerProcess.start(options) : useNamedServer(name, options)).then(
      (server) => {
        this.#server = name === undefined ? server : { stop: () => leaveNamedServer(name) };
        this.#connect(server.url, server.token);
      },
      (error: unknown) => {
        this.#starting = undefined; // a later start() tries again
        throw error;
      },
    );
    return this.#starting;
  }

  toString(): string {
    return `Runtime(${this.url})`;
  }

  /** Node's `console.log` / `util.inspect` show this, never the token. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  /** Whether this runtime started the server it talks to. */
  get ownsServer(): boolean {
    return this.#server !== undefined;
  }

  /** Run an operator: `await rt.call("echo", { text: "Hello world" })`. */
  async call(operator: string, inputs: JsonObject = {}, options: RequestOptions = {}): Promise<any> {
    return this.request("call", { operator, inputs }, options);
  }

  /** Stream an operator's outputs. */
  callIter(operator: string, inputs: JsonObject = {}, options: RequestOptions = {}): ItemStream {
    return this.stream("iter", { operator, inputs }, options);
  }

  /** Define a component `name` of `componentType` with `attrs` (resolves `true`, as Ailoy's does); `stop()` deletes it. */
  async define(componentType: string, name: string, attrs: JsonObject = {}, options: RequestOptions = {}): Promise<true> {
    await this.request("define", { component_type: componentType, name, attrs }, options);
    this.#components.push(name);
    this.#types.set(name, componentType);
    return true;
  }

  async delete(name: string, options: RequestOptions = {}): Promise<true> {
    await this.request("delete", { name }, options);
    this.#forget(name);
    return true;
  }

  /** Call a component method. `inputs` is an object, or what a method of another runtime's
   * protocol takes: a list (Ailoy 0.1's `insert_many`) or null (its `clear`). */
  async callMethod(name: string, method: string, inputs: JsonObject | unknown[] | null = {}, options: RequestOptions = {}): Promise<any> {
    const output = await this.request("call_method", { name, method, inputs }, options);
    // Ailoy 0.1's protocol answers some fields as NDArrays (a tvm_embedding_model's embedding)
    const fields = ndarrayOutputs[this.#types.get(name) ?? ""]?.[method] ?? [];
    for (const field of fields) {
      if (Array.isArray(output?.[field])) output[field] = NDArray.float32(output[field]);
    }
    return output;
  }

  /** Stream a component method's outputs: `for await (const resp of rt.callIterMethod(...))`. */
  callIterMethod(name: string, method: string, inputs: JsonObject = {}, options: RequestOptions = {}): ItemStream {
    return this.stream("iter", { name, method, inputs }, options);
  }

  async plugins(): Promise<any> {
    return this.get("plugins");
  }

  async operators(): Promise<any> {
    return this.get("operators");
  }

  async componentTypes(): Promise<any> {
    return this.get("component_types");
  }

  /**
   * Delete the components this runtime defined (only those: the server may be shared),
   * and stop the server if this runtime started it. Afterwards every request raises.
   * Idempotent.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    if (this.#starting !== undefined) await this.#starting.catch(() => undefined);
    try {
      for (const name of [...this.#components]) {
        try {
          await this.delete(name);
        } catch (error) {
          if (!(error instanceof FerruleError)) throw error;
          this.#forget(name); // already gone, or the server is
        }
      }
    } finally {
      this.#stopped = true;
      await this.#server?.stop();
    }
  }

  // -- the wire -------------------------------------------------------------------------

  /** Remember a component defined through another route (an agent's model). */
  adopt(name: string): void {
    this.#components.push(name);
  }

  #forget(name: string): void {
    const index = this.#components.indexOf(name);
    if (index >= 0) this.#components.splice(index, 1);
    this.#types.delete(name);
  }

  #checkRunning(): void {
    if (this.#stopped) {
      throw new RemoteError("this runtime was stopped", { url: this.url });
    }
  }

  /** POST a kernel request and answer its `output`. */
  async request(route: string, body: JsonObject, options: RequestOptions = {}): Promise<any> {
    const response = await this.#post(route, body, options.signal);
    let answer: { output?: unknown };
    try {
      answer = (await response.json()) as { output?: unknown };
    } catch (error) {
      throw this.#failed(error, options.signal);
    }
    // an output may be null (Ailoy 0.1's get_by_id of an unknown id): kept, not made {}
    return answer !== null && typeof answer === "object" && "output" in answer ? answer.output : {};
  }

  async get(what: string): Promise<any> {
    await this.start();
    let response: Response;
    try {
      response = await fetch(`${this.url}${KERNEL_API}/${what}`, { headers: this.#headers });
    } catch (error) {
      throw this.#failed(error);
    }
    if (response.status !== 200) throw await this.#error(response);
    return response.json();
  }

  /**
   * POST a streaming request; its items, for `for await`. Errors before the stream raise
   * at the first item; a consumer that stops (`break`, `return()`) or an aborted `signal`
   * closes the connection, which cancels the producer on the server.
   */
  stream(route: string, body: JsonObject, options: RequestOptions = {}): ItemStream {
    return new ItemStream(this, (signal) => this.#post(route, body, signal), options.signal);
  }

  /** A transport failure as a typed error (RequestCancelledError once `signal` aborted). */
  failed(error: unknown, signal?: AbortSignal): FerruleError {
    return this.#failed(error, signal);
  }

  async #post(route: string, body: JsonObject, signal?: AbortSignal): Promise<Response> {
    await this.start();
    let data: string;
    try {
      data = JSON.stringify(body, typedArraysAsLists);
    } catch (error) {
      throw InvalidInputError.forField(
        `inputs must be JSON-compatible to cross the network: ${(error as Error).message}`,
        "inputs",
      );
    }
    let response: Response;
    try {
      response = await fetch(`${this.url}${KERNEL_API}/${route}`, {
        method: "POST",
        headers: this.#headers,
        body: data,
        signal: signal ?? null,
      });
    } catch (error) {
      throw this.#failed(error, signal);
    }
    if (response.status !== 200) throw await this.#error(response);
    return response;
  }

  #failed(error: unknown, signal?: AbortSignal): FerruleError {
    if (error instanceof FerruleError) return error;
    if (signal?.aborted) {
      return new RequestCancelledError("the request was cancelled", { url: this.url });
    }
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return new RemoteError(
      `ferrule server at ${this.url} failed: ${what}${cause ? ` (${cause})` : ""}`,
      { url: this.url },
    );
  }

  async #error(response: Response): Promise<FerruleError> {
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return this.#failed(error);
    }
    try {
      const error = (JSON.parse(text) as { error?: { kind?: unknown } }).error;
      if (error && typeof error === "object" && "kind" in error) return errorFromDict(error);
    } catch {
      // not the protocol's JSON: described below
    }
    return new RemoteError(
      `ferrule server at ${this.url} answered HTTP ${response.status}: ${text.slice(0, 200)}`,
      { url: this.url, status: response.status },
    );
  }
}
