from ferrule import Runtime, Agent, LocalModel
rt = Runtime()
agent = Agent(rt, LocalModel("Qwen/Qwen3-0.6B"))
