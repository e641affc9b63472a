import { startRuntime } from "ferrule";
(async () => {
const rt = await startRuntime();
await rt.define("tvm_language_model", "lm0", {
model: "Qwen/Qwen3-0.6B",
});
for await (const resp of rt.callIterMethod("lm0", "infer", {
messages: [
{ role: "user", content: [{ type: "text", text: "What's your name?" }] },
],
})) {
console.log(resp);
}
await rt.delete("lm0");
await rt.stop();
})();
