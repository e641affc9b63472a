// Compiled (never run) by `npm run typecheck`: the shipped declarations type the seeds' API
// strictly, and reject what is wrong.
import {
  type AgentResponse,
  APIModel,
  AudioContent,
  defineAgent,
  FerruleError,
  ImageContent,
  InvalidInputError,
  LocalModel,
  type Runtime,
  startRuntime,
  type Tool,
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
