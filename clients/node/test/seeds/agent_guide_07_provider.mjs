const agent = await ai.defineAgent(
rt,
ai.APIModel({
id: "gpt-4o-audio-preview",
provider: "openai",
apiKey: "<OPENAI_API_KEY>",
})
);
