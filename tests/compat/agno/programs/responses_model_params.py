"""Agno's request parameters on OpenAIResponses (sampling, token cap, request fields)."""

from ferrule.agent import Agent
from ferrule.models.openai.responses import OpenAIResponses

model = OpenAIResponses(
    id="gpt-4.1",
    temperature=0.3,
    top_p=0.8,
    max_output_tokens=256,
    parallel_tool_calls=False,
    metadata={"team": "docs"},
    user="user-42",
)
agent = Agent(model=model)
run = agent.run("Name three rivers.")
print(run.content, run.metrics)
