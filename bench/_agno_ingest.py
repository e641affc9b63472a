"""Agno's Knowledge insertion, for bench_knowledge.py; runs in Agno's own virtualenv.

    python _agno_ingest.py DB_URL TABLE MODE CHUNK_SIZE OVERLAP

Reads one JSON object per line on stdin, ``{"name": ..., "path": ...}``, inserts that text
file with Agno's ``Knowledge`` into Agno's ``PgVector`` and answers with one line
``RESULT {"seconds": s, "chunks": n}`` on stdout (the insertion alone is timed; ``chunks``
is how many rows the table gained). MODE ``insert``: ``Knowledge.insert``, Agno's
synchronous path, which embeds chunk by chunk; ``ainsert``: ``Knowledge.ainsert`` with
the embedder's batch call enabled (``enable_batch``), Agno's fastest path.

The embedder is all-MiniLM-L6-v2 computed by ferrule-minilm's numpy model, wrapped as an
Agno ``Embedder``: the same vectors at the same cost per text as ferrule's, so the
comparison measures what each framework adds around the same model and store.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agno.knowledge.chunking.recursive import RecursiveChunking
from agno.knowledge.embedder.base import Embedder
from agno.knowledge.knowledge import Knowledge
from agno.knowledge.reader.text_reader import TextReader
from agno.vectordb.pgvector import PgVector
from ferrule_kit.embeddings.embedding import EmbedInput
from ferrule_minilm.embedder import MiniLMEmbedder
from ferrule_minilm.plugin import MiniLMAttributes


@dataclass
class FerruleMiniLM(Embedder):
    dimensions: int = 384
    batch_size: int = 256  # as ferrule's Knowledge sends per embedder call
    model: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.model = MiniLMEmbedder(MiniLMAttributes())

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = self.model.embed(EmbedInput(texts=texts))["vectors"]
        return vectors

    def get_embedding(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def get_embedding_and_usage(self, text: str) -> tuple[list[float], None]:
        return self.get_embedding(text), None

    async def async_get_embedding(self, text: str) -> list[float]:
        return self.get_embedding(text)

    async def async_get_embedding_and_usage(self, text: str) -> tuple[list[float], None]:
        return self.get_embedding(text), None

    async def async_get_embeddings_batch_and_usage(
        self, texts: list[str]
    ) -> tuple[list[list[float]], list[None]]:
        return self.embed(texts), [None] * len(texts)


def main() -> None:
    db_url, table, mode, chunk_size, overlap = sys.argv[1:6]
    logging.disable(logging.INFO)  # Agno logs every batch at INFO
    embedder = FerruleMiniLM(enable_batch=mode == "ainsert")
    vector_db = PgVector(table_name=table, db_url=db_url, embedder=embedder)
    knowledge = Knowledge(vector_db=vector_db)
    reader = TextReader(chunking_strategy=RecursiveChunking(int(chunk_size), int(overlap)))

    for line in sys.stdin:
        request = json.loads(line)
        content = Path(request["path"]).read_text(encoding="utf-8")
        before = vector_db.get_count()
        start = time.perf_counter()
        if mode == "ainsert":
            asyncio.run(
                knowledge.ainsert(name=request["name"], text_content=content, reader=reader)
            )
        else:
            knowledge.insert(name=request["name"], text_content=content, reader=reader)
        seconds = time.perf_counter() - start
        print(
            "RESULT " + json.dumps({"seconds": seconds, "chunks": vector_db.get_count() - before}),
            flush=True,
        )


if __name__ == "__main__":
    main()
