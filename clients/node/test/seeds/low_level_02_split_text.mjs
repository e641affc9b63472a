import { startRuntime } from "ferrule";
import { readFile } from "fs/promises";
(async () => {
const rt = await startRuntime();
const text = await readFile("what_men_live_by.txt", "utf-8");
const result = await rt.call("split_text", { text });
const chunks = result.chunks;
console.log(chunks.length); // == 12
// Print chunks
console.log("********************** First chunk **********************");
console.log(chunks[0]);
console.log("*********************************************************");
await rt.stop();
})();
