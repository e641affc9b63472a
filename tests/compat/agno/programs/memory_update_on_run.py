"""Memories made after each run under Agno's name (cookbook: memory, update_memory_on_run)."""

from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.models.openai import OpenAIChat

db = InMemoryDb()
agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), db=db, update_memory_on_run=True)
run = agent.run("My name is Ana and I like hiking.", user_id="ana@example.com")
memories = agent.get_user_memories(user_id="ana@example.com")
print([m.memory for m in memories])
