"""Reading a price list and a Markdown page into a local Chroma collection, then asking an agent that
searches it (our own program: CSVReader, MarkdownReader, chunking, ChromaDb, Knowledge)."""

import tempfile
from pathlib import Path

from ferrule.agent import Agent
from ferrule.knowledge import Knowledge
from ferrule.knowledge.chunking.markdown import MarkdownChunking
from ferrule.knowledge.reader.csv_reader import CSVReader
from ferrule.knowledge.reader.markdown_reader import MarkdownReader
from ferrule.models.openai import OpenAIChat
from ferrule.vectordb.chroma import ChromaDb

folder = Path(tempfile.mkdtemp(prefix="shop-"))
(folder / "prices.csv").write_text("item,price\nrye bread,4.20\nhoney cake,2.50\n")
(folder / "hours.md").write_text("# Opening hours\nWe open at dawn and close at noon.\n")

vector_db = ChromaDb(collection="shop", path=str(folder / "chroma"), persistent_client=True)
rows = CSVReader().read(folder / "prices.csv")
vector_db.insert(content_hash="prices-v1", documents=rows)
pages = MarkdownReader(chunking_strategy=MarkdownChunking(chunk_size=500)).read(folder / "hours.md")
vector_db.insert(content_hash="hours-v1", documents=pages)

agent = Agent(
    model=OpenAIChat(id="gpt-4o"),
    knowledge=Knowledge(vector_db=vector_db),
    search_knowledge=True,
)
run = agent.run("How much is the honey cake, and when do you open?")
print(run.content)
