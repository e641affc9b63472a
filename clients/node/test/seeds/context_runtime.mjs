// Preloaded (`node --import`) before a seed fragment that uses names an earlier example of
// its seed defined: `rt` (a started runtime), the package's exports, and `ai` (the whole
// package, as the provider example calls it).
import * as ai from "ferrule";

Object.assign(globalThis, ai, { ai });
globalThis.rt = await ai.startRuntime();
