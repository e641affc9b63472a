// Compiled (never run) by `npm run typecheck`: the shipped declarations type the seeds' API
// strictly, and reject what is wrong.
import {
  type _APIModel,
  type _LocalModel,
  Agent,
  type AgentConfig,
  type AgentResponse,
  APIModel,
  AudioContent,
  defineAgent,
  FerruleError,
  bearerAutenticator,
  defineVectorStore,
  generateUUID,
  ImageContent,
  InvalidInputError,
  LangModel,
  LocalModel,
  type MessageOutputIterator,
  type NDArray,
  openAIModelIds,
  type Runtime,
  startRuntime,
  TextContent,
  type Tool,
  type ToolDefinitionRESTAPI,
  VectorStore,
  type VectorStoreRetrieveItem,
  type VectorStoreRetrieveResult,
} from "ferrule";

export async function seeds(): Promise<void> {
  const rt: Runtime = await startRuntime();
  const result = await rt.call("echo", { text: "Hello world" });
  console.log(result);
  for await (const resp of rt.callIterMethod("lm0", "infer", { messages: [] })) {
    console.log(resp);
  }
  const add: Tool = { name: "add", run: ({ a, b }: { a: number; b: number }) => a + b };
  const agent = await defineAgent(rt, LocalModel({ id: "Qwen/Qwen3-0.6B" }), {
    systemMessage: "You are a pirate.",
    tools: [add],
    confirm: (call) => call.function.name === "add",
  });
  const audio = await AudioContent.fromBytes(new Uint8Array([1]), "wav");
  for await (const resp of agent.query(["hi", ImageContent.fromUrl("https://x/y.png"), audio], { reasoning: true })) {
    const typed: AgentResponse = resp;
    const switched: boolean = typed.is_type_switched;
    if (typed.error instanceof InvalidInputError) console.log(typed.error.field, switched);
    agent.print(typed);
  }
  const error: FerruleError = new FerruleError("x");
  console.log(error.kind, agent.getMessages()[0]?.role);
  agent.clearMessages();
  await agent.delete();
  await defineAgent(rt, APIModel({ id: "gpt-4o", apiKey: "k" }));
  // @ts-expect-error: the model is a LocalModel/APIModel, not a string
  await defineAgent(rt, "gpt-4o");
  // @ts-expect-error: APIModel needs an id
  APIModel({ apiKey: "k" });
  // @ts-expect-error: a tool needs run
  const broken: Tool = { name: "x" };
  console.log(broken);
  await rt.stop();
}

/** Ailoy's own spellings (ailoy-node 0.1.0 and 0.2.5), typed as Ailoy's declarations type them. */
export async function ailoy(rt: Runtime): Promise<void> {
  const vs: VectorStore = await defineVectorStore(rt, "BAAI/bge-m3", "faiss", { collection: "docs" });
  await vs.insert({ document: "BGE M3 is an embedding model.", metadata: { topic: "bge" } });
  const items: VectorStoreRetrieveItem[] = await vs.retrieve("What is BGE M3?", 1);
  const similarity: number | undefined = items[0]?.similarity;
  const array: NDArray = await vs.embedding("hello");
  console.log(similarity, array.getShape());
  const v02 = await VectorStore.newFaiss(1024);
  const found: VectorStoreRetrieveResult[] = await v02.retrieve(new Float32Array(1024), 3);
  console.log(found[0]?.distance);
  const model: _APIModel = APIModel({ id: "claude-sonnet-4-20250514", apiKey: "k" });
  const attrs = model.toAttrs();
  const local: _LocalModel = LocalModel({ id: "Qwen/Qwen3-8B", quantization: "q4f16_1" });
  console.log(attrs, local.defaultSystemMessage(), openAIModelIds[0], generateUUID());
  const definition: ToolDefinitionRESTAPI = {
    type: "restapi",
    description: { name: "t", description: "d", parameters: { type: "object", properties: {} } },
    behavior: { baseURL: "https://x/${id}", method: "GET", headers: {} },
  };
  const agent = await defineAgent(rt, local);
  const added: true = agent.addRESTAPITool(definition, bearerAutenticator("token"));
  console.log(added, agent.getAvailableTools(), new TextContent("text", "hi"));
  const lm = await LangModel.newLocal("Qwen/Qwen3-0.6B", { kvCache: { contextWindowSize: 4096 } });
  const config: AgentConfig = { inference: { thinkEffort: "enable", grammar: { type: "json" }, maxTokens: 64 } };
  const outputs: MessageOutputIterator = new Agent(lm).run("hi", config);
  for await (const out of outputs) console.log(out.message.contents);
  // @ts-expect-error: Ailoy 0.1's stores are faiss or chromadb
  await defineVectorStore(rt, "BAAI/bge-m3", "qdrant");
}
