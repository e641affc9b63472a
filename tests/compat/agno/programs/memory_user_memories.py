"""User memories: the agent remembers facts about its user (cookbook: memory/agent_with_memory)."""

from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.memory import MemoryManager, UserMemory
from ferrule.models.openai import OpenAIChat

db = InMemoryDb()
john = "john_doe@example.com"

agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    db=db,
    memory_manager=MemoryManager(),
    enable_user_memories=True,
)

agent.print_response(
    "My name is John Doe and I like to hike in the mountains on weekends.", user_id=john
)

memories: list[UserMemory] = agent.get_user_memories(user_id=john)
print("John's memories:", [m.memory for m in memories])
