"""Agno's vector databases on ferrule's stores: `PgVector` on a real PostgreSQL with pgvector
(written, searched by meaning, words and both, filtered, thresholded, reranked, deleted by
id, name, metadata and content, indexed as asked, and handed to `Knowledge`), `ChromaDb` on
a real Chroma server, the scores and distances, and what is refused by name."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from ferrule.filters import EQ
from ferrule.knowledge import Knowledge
from ferrule.knowledge.document import Document
from ferrule.vectordb import VectorDb
from ferrule.vectordb.chroma import ChromaDb
from ferrule.vectordb.chroma.chromadb import reciprocal_rank_fusion
from ferrule.vectordb.distance import Distance
from ferrule.vectordb.pgvector import HNSW, Ivfflat, PgVector, SearchType
from ferrule.vectordb.score import (
    normalize_cosine,
    normalize_l2,
    normalize_max_inner_product,
    normalize_score,
    score_to_distance_threshold,
    score_to_l2_distance,
)
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.postgres import postgres_server_fixture

postgres_server = postgres_server_fixture()

FACTS = [
    Document(
        "The harbour master keeps the lighthouse log.", name="harbour", meta_data={"town": "port"}
    ),
    Document(
        "The bakery on Mill Lane opens at dawn and sells rye bread.",
        name="bakery",
        meta_data={"town": "mill"},
    ),
    Document("The library lends maps of the coast.", name="library", meta_data={"town": "port"}),
]


def fresh(documents: list[Document]) -> list[Document]:
    return [Document(d.content, name=d.name, meta_data=dict(d.meta_data)) for d in documents]


@pytest.fixture
def db_url(postgres_server) -> str:
    return postgres_server.create_database()


def test_scores_and_distances():
    assert normalize_cosine(0.25) == 0.75 and normalize_cosine(float("nan")) == 0.0
    assert normalize_l2(1.0) == 0.5 and normalize_max_inner_product(0.0) == 0.5
    assert normalize_score(2.5, Distance.cosine) == 0.0
    assert score_to_distance_threshold(0.8, Distance.cosine) == pytest.approx(0.2)
    assert score_to_l2_distance(0.5) == 1.0
    with pytest.raises(InvalidInputError):
        score_to_l2_distance(0.0)
    fused = reciprocal_rank_fusion([[("a", 0.9), ("b", 0.5)], [("b", 3.0), ("c", 1.0)]])
    assert [ident for ident, _ in fused] == ["b", "a", "c"]


def test_pgvector_writes_searches_and_deletes(db_url):
    vector_db = PgVector(
        table_name="facts", db_url=db_url.replace("postgresql://", "postgresql+psycopg://")
    )
    assert isinstance(vector_db, VectorDb) and vector_db.schema == "ai"
    assert not vector_db.exists()
    vector_db.insert(content_hash="h1", documents=fresh(FACTS), filters={"source": "guide"})
    assert vector_db.exists() and vector_db.get_count() == 3
    assert vector_db.name_exists("bakery") and not vector_db.name_exists("school")
    assert vector_db.content_hash_exists("h1") and not vector_db.content_hash_exists("h2")
    (first,) = vector_db.search("When can I buy bread?", limit=1)
    assert first.name == "bakery" and first.meta_data["source"] == "guide"
    assert vector_db.keyword_search("lighthouse", limit=1)[0].name == "harbour"
    hybrid = vector_db.hybrid_search("maps of the coast", limit=2)
    assert hybrid[0].name == "library"
    in_port = vector_db.search("bread", limit=3, filters={"town": "port"})
    assert {d.name for d in in_port} == {"harbour", "library"}
    assert {d.name for d in vector_db.search("bread", limit=3, filters=[EQ("town", "mill")])} == {
        "bakery"
    }
    assert vector_db.id_exists(first.id)
    assert vector_db.delete_by_name("bakery") and not vector_db.name_exists("bakery")
    assert vector_db.delete_by_metadata({"town": "port"}) and vector_db.get_count() == 0
    vector_db.upsert("h3", fresh(FACTS[:1]))
    vector_db.drop()
    assert vector_db.get_count() == 0
    with psycopg.connect(db_url) as conn:
        tables = {
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'ai'")
        }
    assert "facts" in tables


def test_pgvector_threshold_reranker_index_and_async(db_url):
    class Shortest:
        def rerank(self, query, documents):
            return sorted(documents, key=lambda d: len(d.content))

    strict = PgVector("facts", db_url=db_url, similarity_threshold=0.99)
    strict.insert("h", fresh(FACTS))
    assert strict.search("bread") == []  # nothing that near
    reranked = PgVector("facts", db_url=db_url, reranker=Shortest()).search("town", limit=3)
    assert [d.name for d in reranked] == ["library", "harbour", "bakery"]
    tuned = PgVector("tuned", db_url=db_url, vector_index=HNSW(m=8, ef_construction=32))
    asyncio.run(tuned.async_insert("h", fresh(FACTS), batch_size=2))
    assert len(asyncio.run(tuned.async_search("coast maps", limit=2))) == 2
    assert asyncio.run(tuned.async_name_exists("library"))
    with psycopg.connect(db_url) as conn:
        (definition,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'ai' AND indexname = 'tuned_hnsw'"
        ).fetchone()
    assert "m='8'" in definition and "ef_construction='32'" in definition
    exact = PgVector("exact", db_url=db_url, vector_index=None, search_type=SearchType.keyword)
    exact.insert("h", fresh(FACTS))
    assert exact.search("bread")[0].name == "bakery"


def test_knowledge_takes_an_agno_pgvector(db_url):
    vector_db = PgVector("kb", db_url=db_url, search_type=SearchType.hybrid)
    knowledge = Knowledge(vector_db=vector_db)
    knowledge.add_content(text_content="Ships dock at pier four after dusk.", name="pier")
    assert vector_db.search("where do ships dock")[0].content.startswith("Ships dock")
    assert knowledge.search("ships")[0].name == "pier"
    knowledge.close()


def test_what_pgvector_refuses_names_the_way(db_url):
    for options, field in (
        ({"db_engine": object()}, "db_engine"),
        ({"prefix_match": True}, "prefix_match"),
        ({"content_language": "french"}, "content_language"),
        ({"auto_upgrade_schema": True}, "auto_upgrade_schema"),
        ({"create_schema": False}, "create_schema"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            PgVector("t", db_url=db_url, **options)
        assert caught.value.errors[0]["path"].endswith(field)
    vector_db = PgVector("t", db_url=db_url)
    for attribute in ("db_engine", "Session", "table", "metadata"):
        with pytest.raises(InvalidInputError, match="SQLAlchemy"):
            getattr(vector_db, attribute)
    with pytest.raises(InvalidInputError, match="HNSW"):
        Ivfflat()
    with pytest.raises(InvalidInputError, match="names the index"):
        HNSW(name="mine")
    with pytest.raises(InvalidInputError, match="contract changes no stored chunk"):
        vector_db.update_metadata("c", {"a": 1})


def test_chromadb_on_a_chroma_server():
    from ferrule_chroma.testing import ChromaServer

    with ChromaServer() as server:
        host, port = server.url.rsplit("//", 1)[1].split(":")
        vector_db = ChromaDb(collection="facts", host=host, port=int(port), batch_size=2)
        vector_db.insert("h1", fresh(FACTS))
        assert vector_db.get_count() == 3
        assert vector_db.search("fresh bread in the morning", limit=1)[0].name == "bakery"
        assert vector_db.delete_by_name("bakery") and vector_db.get_count() == 2
    named = ChromaDb(name="My Facts")
    assert named.collection_name == "my_facts"
    with pytest.raises(InvalidInputError, match="no chromadb client"):
        _ = named.client
    with pytest.raises(InvalidInputError, match="not settings"):
        ChromaDb(collection="x", settings={})


def test_chromadb_in_the_process_keeps_its_collection_as_asked(tmp_path):
    kept = ChromaDb(collection="facts", path=str(tmp_path / "chroma"), persistent_client=True)
    kept.insert("h1", fresh(FACTS))
    again = ChromaDb(collection="facts", path=str(tmp_path / "chroma"), persistent_client=True)
    assert again.get_count() == 3  # a new object finds the file the first wrote
    assert again.search("bread at dawn", limit=1)[0].name == "bakery"
    assert (tmp_path / "chroma").is_dir()
    fleeting = ChromaDb(collection="facts", search_type=SearchType.hybrid)
    fleeting.insert("h1", fresh(FACTS))
    assert fleeting.search("lighthouse log", limit=1)[0].name == "harbour"
    assert ChromaDb(collection="facts").get_count() == 0  # another in-memory collection
    # Chroma's names (Agno's cookbook has "thai-recipes") in the embedded store, each its own
    path = str(tmp_path / "names")
    hyphen = ChromaDb(collection="thai-recipes", path=path, persistent_client=True)
    hyphen.insert("h1", fresh(FACTS))
    underscore = ChromaDb(collection="thai_recipes", path=path, persistent_client=True)
    assert (hyphen.get_count(), underscore.get_count()) == (3, 0)
    again = ChromaDb(collection="thai-recipes", path=path, persistent_client=True)
    assert again.search("bread at dawn", limit=1)[0].name == "bakery"
    knowledge = Knowledge(
        vector_db=ChromaDb(collection="kb", path=str(tmp_path / "kb"), persistent_client=True)
    )
    knowledge.add_content(text_content="Ships dock at pier four after dusk.", name="pier")
    assert knowledge.search("ships")[0].name == "pier"
    knowledge.close()
