const rt = await startRuntime();
await rt.define("tvm_language_model", "lm0", {
model: "Qwen/Qwen3-8B",
});
const messages = [
{
role: "system",
content: [
{
type: "text",
text: "You are a friendly chatbot who always responds in the style of a pirate.",
},
],
},
{ role: "user", content: [{ type: "text", text: "Who are you?" }] },
];
for await (const resp of rt.callIterMethod("lm0", "infer", {
messages: messages,
})) {
process.stdout.write(resp.message.content[0].text);
}
await rt.delete("lm0");
await rt.stop();
