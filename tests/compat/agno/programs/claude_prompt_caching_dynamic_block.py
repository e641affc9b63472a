"""The agent's system prompt cached, a per-request block after it left uncached (cookbook:
models/anthropic/prompt_caching_with_dynamic_block)."""

from ferrule.agent import Agent
from ferrule.models.anthropic import Claude, SystemPromptBlock

requests_made = []


def build_request_blocks() -> list[SystemPromptBlock]:
    requests_made.append(len(requests_made) + 1)
    return [
        SystemPromptBlock(text="A stable house style: answer in one line.", ttl="1h"),
        SystemPromptBlock(text=f"Request number {len(requests_made)}.", cache=False),
    ]


agent = Agent(
    model=Claude(
        id="claude-sonnet-4-5-20250929",
        cache_system_prompt=True,
        extended_cache_time=True,
        system_prompt_blocks=build_request_blocks,
    ),
    description="You are an expert software architect.",
    instructions=["Answer in two to four paragraphs."],
)

first = agent.run("How should I structure a large FastAPI application?")
second = agent.run("How should I handle background jobs in that setup?")
print(first.content, second.content)
