"""History from a database: the second question is asked with the first turn in context
(cookbook: models/openai/responses/db, on SQLite instead of Postgres)."""

import tempfile
from pathlib import Path

from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIResponses

folder = tempfile.mkdtemp()
db = SqliteDb(db_file=str(Path(folder) / "agent.db"))

agent = Agent(
    model=OpenAIResponses(id="gpt-4o"),
    db=db,
    add_history_to_context=True,
)
first = agent.run("How many people live in Canada?")
second = agent.run("What is their national anthem called?")
print(second.content)
