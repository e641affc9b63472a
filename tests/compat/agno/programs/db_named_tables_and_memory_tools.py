"""An assistant whose sessions and memories live in tables the program names, and which
edits the user's memories itself (our own program: SqliteDb table names, MemoryTools)."""

import tempfile
from pathlib import Path

from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIChat
from ferrule.tools.memory import MemoryTools

db = SqliteDb(
    db_file=str(Path(tempfile.mkdtemp(prefix="assistant-")) / "assistant.db"),
    session_table="assistant_sessions",
    memory_table="assistant_memories",
)
agent = Agent(model=OpenAIChat(id="gpt-4o"), db=db, tools=[MemoryTools(db=db)], user_id="ada")
agent.run("Remember that I take my coffee black.")
memories = db.get_user_memories(user_id="ada")
print([m.memory for m in memories])
