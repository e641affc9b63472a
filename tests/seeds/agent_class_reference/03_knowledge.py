from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.db.sqlite import SqliteDb
from ferrule.knowledge import Knowledge
from ferrule.vectordb.pgvector import PgVector
from ferrule.knowledge.embedder import OpenAIEmbedder
agent = Agent(
    name="Knowledge Agent",
    model=OpenAIChat(id="gpt-4"),
    db=SqliteDb(db_file="agent.db"),
    knowledge=Knowledge(
        vector_db=PgVector(
            table_name="documents",
            db_url="postgresql://user:pass@localhost:5432/db"
        ),
        embedder=OpenAIEmbedder()
    ),
    add_history_to_context=True,
    add_knowledge_to_context=True,
    enable_user_memories=True,
)
# First conversation
agent.run("My favorite color is blue", session_id="user-123")
# Later conversation - agent remembers
response = agent.run("What is my favorite color?", session_id="user-123")
