from ferrule import Agent, LocalModel
agent = Agent(rt, LocalModel("Qwen/Qwen3-0.6B"))
