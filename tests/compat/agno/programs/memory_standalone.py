"""A memory manager on its own: add, get, delete and replace memories, then let the model
make them from what a user said (cookbook: memory/memory_manager, standalone and creation)."""

from ferrule.db.in_memory import InMemoryDb
from ferrule.memory import MemoryManager
from ferrule.models.openai import OpenAIChat

memory = MemoryManager(model=OpenAIChat(id="gpt-4o"), db=InMemoryDb())

jane_doe_id = "jane_doe@example.com"
memory_id_1 = memory.add_user_memory(memory="The user's name is Jane Doe", user_id=jane_doe_id)
memory_id_2 = memory.add_user_memory(memory="She likes to play tennis", user_id=jane_doe_id)
after_adding = [m.memory for m in memory.get_user_memories(user_id=jane_doe_id)]

memory.delete_user_memory(user_id=jane_doe_id, memory_id=memory_id_2)
after_deleting = [m.memory for m in memory.get_user_memories(user_id=jane_doe_id)]

memory.replace_user_memory(
    memory_id=memory_id_1, memory="The user's name is Jane Mary Doe", user_id=jane_doe_id
)
after_replacing = [m.memory for m in memory.get_user_memories(user_id=jane_doe_id)]

john_doe_id = "john_doe@example.com"
memory.create_user_memories(
    message="I enjoy hiking in the mountains on weekends, and my name is John Doe.",
    user_id=john_doe_id,
)
johns = [m.memory for m in memory.get_user_memories(user_id=john_doe_id)]
print(after_adding, after_deleting, after_replacing, johns)
