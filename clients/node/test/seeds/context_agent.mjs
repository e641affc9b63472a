// Preloaded before a seed fragment that uses `agent`: an agent on the test model, so the
// fragment runs offline with a deterministic answer (the echo of the question).
import "./context_runtime.mjs";

globalThis.agent = await globalThis.defineAgent(globalThis.rt, globalThis.LocalModel({ id: "test" }));
