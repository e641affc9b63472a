import { startRuntime } from "ferrule";
(async () => {
const rt = await startRuntime();
const result = await rt.call("echo", { text: "Hello world" });
console.log(results);
await rt.stop();
})();
