"""Sessions kept in memory for the process's lifetime (cookbook: storage/in_memory)."""

from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.models.openai import OpenAIChat

db = InMemoryDb()

agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    db=db,
    session_id="dinner-planning",
    add_history_to_context=True,
)

first = agent.run("Give me an easy and healthy dinner recipe")
second = agent.run("What was the main ingredient again?")

# the session and its runs are in the db: a new agent on the same db reads them back
reader = Agent(model=OpenAIChat(id="gpt-4o"), db=db)
history = reader.get_chat_history(session_id="dinner-planning")
session = reader.get_session(session_id="dinner-planning")
