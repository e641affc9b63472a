const agent = await defineAgent(rt, LocalModel({ id: "Qwen/Qwen3-0.6B" }), {
systemMessage:
"You are a friendly chatbot who always responds in the style of a pirate.",
});
