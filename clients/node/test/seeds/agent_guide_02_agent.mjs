import { defineAgent, LocalModel } from "ferrule";
const agent = await defineAgent(rt, LocalModel({ id: "Qwen/Qwen3-0.6B" }));
