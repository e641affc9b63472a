"""Claude with its own parameters (cookbook: models/anthropic/basic)."""

from ferrule.agent import Agent
from ferrule.models.anthropic import Claude

agent = Agent(
    model=Claude(
        id="claude-sonnet-4-20250514",
        max_tokens=1024,
        temperature=0.5,
        stop_sequences=["</answer>"],
    ),
    markdown=True,
)

run = agent.run("Share a 2 sentence horror story")
print(run.content)
