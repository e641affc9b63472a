"""Anthropic's own tools given as its declarations (cookbook: models/anthropic/advisor and
code_execution): Anthropic runs them; the agent sends them and keeps what they did."""

from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.models.anthropic import Claude

agent = Agent(
    model=Claude(id="claude-sonnet-4-6", betas=["code-execution-2025-08-25"]),
    tools=[
        {"type": "code_execution_20250825", "name": "code_execution"},
        {"type": "advisor_20260301", "name": "advisor", "model": "claude-opus-4-6"},
    ],
    db=InMemoryDb(),
    add_history_to_context=True,
)

first = agent.run("Calculate the mean of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]")
second = agent.run("And the median?")
print(first.content, second.content)
