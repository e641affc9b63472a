import { startRuntime, defineAgent, LocalModel } from "ferrule";
const rt = await startRuntime();
const agent = await defineAgent(rt, LocalModel({ id: "Qwen/Qwen3-0.6B" }));
