"""A reasoning model on the Responses API: effort and summary asked for, the summary
streamed as reasoning (cookbook: models/openai/responses/reasoning_o3_mini)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

agent = Agent(
    model=OpenAIResponses(id="o4-mini", reasoning_effort="high", reasoning_summary="detailed"),
    markdown=True,
)

reasoning, content = [], []
for event in agent.run("Is 9.11 bigger than 9.9?", stream=True):
    if getattr(event, "reasoning_content", None):
        reasoning.append(event.reasoning_content)
    if getattr(event, "content", None):
        content.append(event.content)
print("".join(content))
