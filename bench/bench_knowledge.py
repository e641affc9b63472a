"""Knowledge: ingest speed against the bare pipeline and Agno, and retrieval quality
(recall@5) on the labelled set in ``bench/data/knowledge/``.

**Ingest** (chunk + embed + store) of a multi-megabyte corpus with the offline embedder
(ferrule-minilm's all-MiniLM-L6-v2), every pipeline chunking at 1,000 with an overlap of
100 (Knowledge's defaults):

- ferrule's ``Knowledge.add_content`` into ``sqlite_vec_store``, against the bare pipeline
  on the same machinery without ferrule around it: ``split_text``'s splitter function, the
  embedder object's ``embed`` called directly (no runtime), and one ``executemany`` into
  the store's own table through apsw (the store's client). Target: within 1.2x.
- ferrule's ``Knowledge`` into ``pgvector_store`` against Agno 3.1.10's ``Knowledge`` into
  Agno's ``PgVector``, on the same throwaway PostgreSQL server: Agno has no sqlite-vec
  store, and PgVector is the store both support. Agno's embedder is the same numpy
  MiniLM wrapped as an Agno ``Embedder`` (``_agno_ingest.py``), so both pay the same per
  text; Agno is measured on its synchronous ``insert`` (which embeds chunk by chunk) and
  on ``ainsert`` with batched embedding (its fastest path). Neither side builds an
  approximate index while inserting (``pgvector_store`` with ``index: none``; Agno's
  PgVector builds its HNSW index only on ``optimize()``). Target: ferrule at least 2x.

The corpus is ``BENCH_KNOWLEDGE_MB`` megabytes (default 2.4) in at least 8 documents: the
labelled text and copies of it with its paragraphs shuffled by fixed seeds, so that no
chunk repeats. The
pipelines take turns document by document (the order rotating), so load from elsewhere on
the machine falls on all of them alike. Agno runs in its own virtualenv (created on first
use under ``.nox/bench-agno``, or ``BENCH_AGNO_VENV``), never in ferrule's.

**Retrieval quality**: the labelled text through ``Knowledge`` (minilm, sqlite-vec), each
question searched with each of Knowledge's ``search_type``s: ``vector``, ``keyword`` (the
store's FTS5, BM25) and ``hybrid`` (both fused by reciprocal rank); recall@5 is the share of answer spans
found in the top 5 chunks (`_labelled.py`), averaged over questions. API embedders run
only when named in ``BENCH_KNOWLEDGE_EMBEDDERS`` (a JSON list such as
``[{"class": "OpenAIEmbedder", "id": "text-embedding-3-small"}]``) with their keys set.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import median, write_section
from _labelled import load, mrr, recall

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MEGABYTES = 2.4
MEGABYTES = float(os.environ.get("BENCH_KNOWLEDGE_MB", DEFAULT_MEGABYTES))
CHUNK_SIZE, CHUNK_OVERLAP = 1000, 100
SEPARATORS = ["\n\n", "\n", " ", ""]  # split_text's defaults
K = 5
CANDIDATES = 20
SEARCH_TYPES = ("vector", "keyword", "hybrid")
AGNO_REQUIREMENTS = ["agno==3.1.10", "sqlalchemy>=2", "psycopg[binary]>=3.1", "pgvector>=0.3"]
AGNO_VENV = Path(os.environ.get("BENCH_AGNO_VENV", ROOT / ".nox" / "bench-agno"))


# -- the corpus -------------------------------------------------------------------------


def corpus(text: str, megabytes: float) -> list[str]:
    """About ``megabytes`` of text in at least 8 documents: the text, then copies with its
    paragraphs in a seeded order, each cut to an equal share."""
    size = len(text.encode())
    n = max(8, -(-int(megabytes * 1e6) // size))
    share = min(size, int(megabytes * 1e6) // n)
    paragraphs = text.split("\n\n")
    documents = []
    for seed in range(n):
        shuffled = paragraphs[:]
        if seed:
            random.Random(seed).shuffle(shuffled)
        documents.append("\n\n".join(shuffled).encode()[:share].decode(errors="ignore"))
    return documents


# -- the pipelines ------------------------------------------------------------------------


class FerruleKnowledge:
    def __init__(self, rt: Any, vector_db: Any) -> None:
        from ferrule.knowledge import Knowledge

        self.knowledge = Knowledge(
            vector_db=vector_db, runtime=rt, chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP
        )

    def ingest(self, name: str, text: str) -> tuple[float, int]:
        start = time.perf_counter()
        result = self.knowledge.add_content(name=name, text_content=text)
        return time.perf_counter() - start, result.chunks

    def close(self) -> None:
        self.knowledge.close()


class Direct:
    """The bare pipeline: splitter function, embedder object, apsw ``executemany``."""

    def __init__(self, rt: Any, path: Path) -> None:
        import apsw
        from ferrule_minilm.embedder import MiniLMEmbedder
        from ferrule_minilm.plugin import MiniLMAttributes

        # The table as the store makes it (with its FTS index), made through the store.
        rt.define("sqlite_vec_store", "bench-direct", {"path": str(path), "collection": "direct"})
        rt.call_method(
            "bench-direct", "ensure_collection", {"dimension": 384, "distance": "cosine"}
        )
        rt.delete("bench-direct")
        self.embedder = MiniLMEmbedder(MiniLMAttributes())
        self.db = apsw.Connection(str(path))

    def ingest(self, name: str, text: str) -> tuple[float, int]:
        import hashlib

        import numpy as np
        from ferrule_kit.embeddings.embedding import EmbedInput
        from ferrule_split_text.splitter import split_recursively

        start = time.perf_counter()
        chunks = [
            c for c in split_recursively(text, SEPARATORS, CHUNK_SIZE, CHUNK_OVERLAP) if c.strip()
        ]
        vectors = np.asarray(
            self.embedder.embed(EmbedInput(texts=chunks))["vectors"], dtype=np.float32
        )
        version = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        rows = (
            (
                f"{name}#{i}",
                name,
                chunk,
                version,
                json.dumps({"name": name, "chunk": i}),
                vector.tobytes(),
                float(vector @ vector),
            )
            for i, (chunk, vector) in enumerate(zip(chunks, vectors, strict=True))
        )
        with self.db:
            self.db.executemany(
                "INSERT INTO direct__chunks (id, document_id, text, content_hash, metadata,"
                " embedding, norm2) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return time.perf_counter() - start, len(chunks)

    def close(self) -> None:
        self.db.close()


class Agno:
    """Agno's Knowledge in its own virtualenv (`_agno_ingest.py`), one process per mode."""

    def __init__(self, python: Path, db_url: str, table: str, mode: str, folder: Path) -> None:
        self.folder = folder
        self.process = subprocess.Popen(
            [
                str(python),
                str(Path(__file__).with_name("_agno_ingest.py")),
                db_url,
                table,
                mode,
                str(CHUNK_SIZE),
                str(CHUNK_OVERLAP),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def ingest(self, name: str, text: str) -> tuple[float, int]:
        path = self.folder / f"{name}.txt"
        path.write_text(text, encoding="utf-8")
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"name": name, "path": str(path)}) + "\n")
        self.process.stdin.flush()
        for line in self.process.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line.removeprefix("RESULT "))
                return result["seconds"], result["chunks"]
        raise RuntimeError(f"the Agno worker ended (exit status {self.process.wait()})")

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def agno_python() -> Path:
    """Agno's virtualenv: made once, remade when the requirements change."""
    python = AGNO_VENV / "bin" / "python"
    marker = AGNO_VENV / "ferrule-bench-requirements"
    wanted = " ".join(AGNO_REQUIREMENTS)
    if not marker.exists() or marker.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(AGNO_VENV)], check=True)
        ferrule = ["-e", str(ROOT / "kernel"), "-e", str(ROOT / "sdk" / "kit")]
        ferrule += ["-e", str(ROOT / "plugins" / "minilm")]  # the same embedder
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *AGNO_REQUIREMENTS, *ferrule], check=True
        )
        marker.write_text(wanted)
    return python


def ingest(rt: Any, documents: list[str], folder: Path) -> dict[str, Any]:
    from ferrule.knowledge.vectordb import SqliteVecDb
    from ferrule_kit.testing.postgres import start_postgres

    python = agno_python()
    server = start_postgres()
    pipelines: dict[str, Any] = {}
    try:
        dsn = server.create_database("bench")
        agno_url = dsn.replace("postgresql://", "postgresql+psycopg://", 1)
        rt.define(
            "pgvector_store",
            "bench-pg",
            {"dsn": dsn, "collection": "ferrule_bench", "index": "none"},
        )
        pipelines["lite"] = FerruleKnowledge(
            rt, SqliteVecDb(db_file=folder / "knowledge.db", table_name="knowledge")
        )
        pipelines["direct"] = Direct(rt, folder / "direct.db")
        pipelines["pg"] = FerruleKnowledge(rt, "bench-pg")
        pipelines["agno"] = Agno(python, agno_url, "agno_insert", "insert", folder)
        pipelines["agno_batch"] = Agno(python, agno_url, "agno_ainsert", "ainsert", folder)
        warm = documents[0][:20_000]
        for pipeline in pipelines.values():  # load models, make tables: not timed
            pipeline.ingest("warm-up", warm)
        seconds = dict.fromkeys(pipelines, 0.0)
        per_document: list[dict[str, float]] = []
        chunks = dict.fromkeys(pipelines, 0)
        names = list(pipelines)
        loads = [os.getloadavg()[0]]
        for d, text in enumerate(documents):
            per_document.append({})
            for name in names[d % len(names) :] + names[: d % len(names)]:
                s, c = pipelines[name].ingest(f"doc{d}", text)
                seconds[name] += s
                per_document[-1][name] = s
                chunks[name] += c
                print(f"  doc{d} {name}: {c} chunks in {s:.1f} s", flush=True)
            loads.append(os.getloadavg()[0])
    finally:
        for pipeline in pipelines.values():
            pipeline.close()
        rt.delete("bench-pg")
        server.stop()
    return {"seconds": seconds, "chunks": chunks, "loads": loads, "per_document": per_document}


# -- retrieval quality ----------------------------------------------------------------------


def embedders() -> list[Any]:
    from ferrule.knowledge import embedder as module

    chosen: list[Any] = [module.MiniLMEmbedder()]
    for spec in json.loads(os.environ.get("BENCH_KNOWLEDGE_EMBEDDERS", "[]")):
        spec = dict(spec)
        chosen.append(getattr(module, spec.pop("class"))(**spec))
    return chosen


def quality(rt: Any, embedder: Any, folder: Path) -> dict[str, Any]:
    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb

    text, questions = load()
    path = folder / f"quality-{embedder.component_type}.db"
    knowledge = Knowledge(
        vector_db=SqliteVecDb(db_file=path, table_name="jargon"), embedder=embedder, runtime=rt
    )
    try:
        chunks = knowledge.add_content(name="jargon", text_content=text).chunks
        found: dict[str, list[list[str]]] = {mode: [] for mode in SEARCH_TYPES}
        for q in questions:
            for mode in SEARCH_TYPES:
                documents = knowledge.search(q["question"], CANDIDATES, search_type=mode)
                found[mode].append([d.content for d in documents])
        misses = [
            q["question"]
            for q, f in zip(questions, found["vector"], strict=True)
            if recall([f], [q], K) < 1
        ]
    finally:
        knowledge.close()
    rt.define(embedder.component_type, "bench-embedder", embedder.attributes(rt))
    try:
        info = rt.call_method("bench-embedder", "info", {})
    finally:
        rt.delete("bench-embedder")
    return {
        "model": info["model"],
        "dimension": info["dimension"],
        "chunks": chunks,
        "questions": len(questions),
        "scores": {
            mode: (recall(f, questions, K), recall(f, questions, 1), mrr(f, questions))
            for mode, f in found.items()
        },
        "misses": misses,
    }


# -- the section -----------------------------------------------------------------------------


def main() -> None:
    from ferrule import Runtime

    text, _ = load()
    documents = corpus(text, MEGABYTES)
    megabytes = sum(len(d.encode()) for d in documents) / 1e6
    with tempfile.TemporaryDirectory(prefix="ferrule-bench-knowledge-") as tmp, Runtime() as rt:
        folder = Path(tmp)
        results = [quality(rt, e, folder) for e in embedders()]
        ing = ingest(rt, documents, folder)

    s, c = ing["seconds"], ing["chunks"]

    def ratio(slow: str, fast: str) -> float:
        """The median over documents: a load spike during one turn moves it little."""
        return median([d[slow] / d[fast] for d in ing["per_document"]])

    rows = [
        (
            "`Knowledge.add_content` → `sqlite_vec_store`",
            "lite",
            f"**{ratio('lite', 'direct'):.2f}x** the bare pipeline",
        ),
        ("bare: splitter + `embed()` + apsw `executemany`", "direct", "baseline"),
        ("`Knowledge.add_content` → `pgvector_store`", "pg", "baseline for Agno"),
        (
            "Agno `Knowledge.insert` → `PgVector`",
            "agno",
            f"ferrule **{ratio('agno', 'pg'):.2f}x** faster",
        ),
        (
            "Agno `Knowledge.ainsert`, batched → `PgVector`",
            "agno_batch",
            f"ferrule **{ratio('agno_batch', 'pg'):.2f}x** faster",
        ),
    ]
    ingest_table = "\n".join(
        [
            "| pipeline | chunks | seconds | MB/s | |",
            "|---|---|---|---|---|",
            *(
                f"| {label} | {c[key]:,} | {s[key]:.1f} | {megabytes / s[key]:.3f} | {note} |"
                for label, key, note in rows
            ),
        ]
    )
    quality_rows = []
    notes = []
    for r in results:
        for mode in SEARCH_TYPES:
            at5, at1, rr = r["scores"][mode]
            quality_rows.append(
                f"| {r['model']} ({r['dimension']} d) | {mode} | **{at5:.3f}** | {at1:.3f} | {rr:.3f} |"
            )
        notes += [f"- {r['model']}: {q}" for q in r["misses"]]
    quality_table = "\n".join(
        [
            f"| embedder | retrieval | recall@{K} | recall@1 | MRR |",
            "|---|---|---|---|---|",
            *quality_rows,
        ]
    )
    loads = ing["loads"]
    reduced = ""
    if MEGABYTES < DEFAULT_MEGABYTES:
        reduced = (
            f"; reduced from {DEFAULT_MEGABYTES} MB with `BENCH_KNOWLEDGE_MB` to keep the run"
            " short (the load average during it is below)"
        )
    body = f"""
### Ingest: chunk + embed + store

{megabytes:.2f} MB of English text in {len(documents)} documents (`bench/data/knowledge/jargon.txt`
and copies with its paragraphs shuffled{reduced}), all-MiniLM-L6-v2 on numpy
(ferrule-minilm) in every pipeline, chunks of 1,000 with an overlap of 100. The
pipelines took turns document by document. Seconds are the insertion alone (models
loaded and tables made beforehand), summed; the ratios are medians of the per-document
ratios, which a load spike during one pipeline's turn moves little.

{ingest_table}

Targets: `Knowledge` within 1.2x of the bare pipeline; at least 2x Agno's `Knowledge` on
the same embedder and store. Agno 3.1.10 has no sqlite-vec store, so that comparison is
on PostgreSQL with pgvector (one throwaway server for both, no approximate index
built while inserting); its embedder is the same numpy model wrapped as an Agno
`Embedder`, so both sides pay the same for the model. Agno chunks by characters with its
`RecursiveChunking`, ferrule by UTF-8 bytes with `split_text`: the chunk counts differ
a little. The machine's load average during the run: {min(loads):.1f} to
{max(loads):.1f} on {os.cpu_count()} cores.

### Retrieval quality: recall@{K} on a labelled set

The Jargon File excerpt in `bench/data/knowledge/` ({results[0]["chunks"]} chunks of
1,000 bytes) and its {results[0]["questions"]} questions, each labelled with the span(s)
that answer it; recall@{K} is the share of answer spans in the top {K} chunks, averaged
over questions (recall@1 and mean reciprocal rank beside it). Through `Knowledge` into
`sqlite_vec_store`, with each `search_type`: `vector`, `keyword` (the store's FTS5,
BM25) and `hybrid` (the two rankings fused by reciprocal rank).

{quality_table}

The OpenAI and Gemini embedders are not measured here: this machine has no network
and no keys. Name them in `BENCH_KNOWLEDGE_EMBEDDERS` (with their keys set) to add their
rows. There is no reranker component to measure yet.

Questions whose answer the vector search did not put in the top {K}:
{chr(10).join(notes) or "- none"}

Reproduce: `nox -s bench -- knowledge` (`BENCH_KNOWLEDGE_MB` for the corpus size, default 2.4).
"""
    write_section("knowledge", "Knowledge: ingest speed and retrieval quality", body)
    print(body)


if __name__ == "__main__":
    main()
