"""Zero data retention with a reasoning model and history: three turns, each sending
the earlier ones back with their encrypted reasoning
(cookbook: models/openai/responses/zdr_reasoning_agent)."""

from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.models.openai import OpenAIResponses

agent = Agent(
    name="ZDR Compliant Agent",
    session_id="zdr_demo_session",
    model=OpenAIResponses(
        id="o4-mini",
        store=False,
        reasoning_summary="auto",  # Requesting a reasoning summary
    ),
    instructions="You are a helpful AI assistant operating in Zero Data Retention mode.",
    db=InMemoryDb(),
    add_history_to_context=True,
)

answers = [
    agent.run("What's the largest country in Europe by area?").content,
    agent.run("What's the population of that country?").content,
    agent.run("What's the population density per square kilometer?").content,
]
print(answers)
