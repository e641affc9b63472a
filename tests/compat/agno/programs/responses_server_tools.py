"""OpenAI's own web search given as its declaration beside a function tool (cookbook:
models/openai/responses/websearch_builtin_tool)."""

from ferrule.agent import Agent
from ferrule.models.openai import OpenAIResponses

saved = []


def save_note(text: str) -> str:
    """Save a note."""
    saved.append(text)
    return "saved"


agent = Agent(
    model=OpenAIResponses(id="gpt-4o"),
    tools=[{"type": "web_search_preview"}, save_note],
    instructions="Save the results to a note.",
)
run = agent.run("What is happening in France?")
print(run.content)
