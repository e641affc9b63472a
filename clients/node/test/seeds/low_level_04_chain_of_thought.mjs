const rt = await startRuntime();
await rt.define("tvm_language_model", "lm0", {
model: "Qwen/Qwen3-8B",
});
const messages = [
{
role: "user",
content: [
{
type: "text",
text: "if a>1, what is the sum of the real solutions of 'sqrt(a-sqrt(a+x))=x'?",
},
],
},
{
role: "assistant",
content: [{ type: "text", text: "Let's think step by step." }],
}, // Chain-of-Thought prompt
];
for await (const resp of rt.callIterMethod("lm0", "infer", {
messages: messages,
})) {
process.stdout.write(resp.message.content[0].text);
}
await rt.delete("lm0");
await rt.stop();
