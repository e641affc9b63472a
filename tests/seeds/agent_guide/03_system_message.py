agent = Agent(
    rt,
    LocalModel("Qwen/Qwen3-0.6B"),
    system_message="You are a friendly chatbot who always responds in the style of a pirate.",
)
