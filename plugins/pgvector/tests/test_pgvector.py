"""ferrule-pgvector beyond the shared suite: a server that is down, secrets kept out of
errors, what a network client may not choose, and the HNSW index doing its job."""

from __future__ import annotations

import random
import uuid

import psycopg
import pytest
from ferrule import AsyncRuntime
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.embeddings.vectors import VectorStoreUnavailableError
from ferrule_kit.testing.postgres import PostgresServer
from ferrule_pgvector import plugin


def _schema() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


async def test_a_server_that_is_down_gives_one_typed_error() -> None:
    dsn = "postgresql://ferrule:s3cret-pa55@127.0.0.1:9/nowhere?connect_timeout=2"
    async with AsyncRuntime() as rt:
        with pytest.raises(VectorStoreUnavailableError) as error:
            await rt.define("pgvector_store", "kb", {"dsn": dsn})
    assert error.value.details["store"] == "pgvector_store"
    assert error.value.details["server"] == "127.0.0.1:9/nowhere"
    assert "s3cret-pa55" not in str(error.value) and "s3cret-pa55" not in repr(error.value.details)


async def test_a_server_that_goes_away_mid_use(postgres_server: PostgresServer) -> None:
    dsn = postgres_server.create_database()
    async with AsyncRuntime() as rt:
        await rt.define("pgvector_store", "kb", {"dsn": dsn, "dimension": 2, "timeout": 1})
        await rt.call_method("kb", "upsert", {"chunks": [{"id": "a", "vector": [1.0, 0.0]}]})
        name = dsn.rsplit("/", 1)[1]
        with psycopg.connect(postgres_server.dsn(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        with pytest.raises(VectorStoreUnavailableError):
            await rt.call_method("kb", "search", {"vector": [1.0, 0.0]})


async def test_a_network_client_may_not_name_the_server(postgres_dsn: str) -> None:
    kernel = Kernel(plugins=[plugin], load_entry_points=False)
    try:
        with pytest.raises(InvalidInputError) as error:
            await kernel.define("pgvector_store", "kb", {"dsn": postgres_dsn}, trusted=False)
    finally:
        await kernel.aclose()  # closes the store's pool, had it been made
    assert error.value.errors[0]["path"] == "$.dsn"


async def test_hnsw_is_used_recalls_and_fills_filtered_results(postgres_dsn: str) -> None:
    rng = random.Random(1)
    dimension, n = 32, 3000
    chunks = [
        {
            "id": f"c{i}",
            "vector": [rng.gauss(0, 1) for _ in range(dimension)],
            "metadata": {"rare": i % 100 == 0},
        }
        for i in range(n)
    ]
    schema = _schema()
    async with AsyncRuntime() as rt:
        await rt.define(
            "pgvector_store",
            "kb",
            {"dsn": postgres_dsn, "schema": schema, "collection": "big", "dimension": dimension},
        )
        await rt.call_method("kb", "upsert", {"chunks": chunks})
        hits = total = 0
        for _ in range(20):
            query = [rng.gauss(0, 1) for _ in range(dimension)]
            found = await rt.call_method("kb", "search", {"vector": query, "top_k": 10})
            exact = sorted(chunks, key=lambda c: _cosine_distance(query, c["vector"]))[:10]
            hits += len({m["id"] for m in found["matches"]} & {c["id"] for c in exact})
            total += 10
            rare = await rt.call_method(
                "kb", "search", {"vector": query, "top_k": 10, "filter": {"rare": True}}
            )
            assert len(rare["matches"]) == 10, "the iterative scan fills top_k past the filter"
            assert all(m["metadata"]["rare"] for m in rare["matches"])
    assert hits / total >= 0.9
    with psycopg.connect(postgres_dsn) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in conn.execute(
                f"EXPLAIN SELECT id FROM {schema}.big ORDER BY embedding <=> %s::vector LIMIT 10",
                ("[" + ",".join(["0.5"] * dimension) + "]",),
            )
        )
    assert "big_hnsw" in plan


def _cosine_distance(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return 1 - dot / (sum(x * x for x in a) ** 0.5 * sum(y * y for y in b) ** 0.5)


async def test_two_components_share_a_collection(postgres_dsn: str) -> None:
    attributes = {"dsn": postgres_dsn, "schema": _schema(), "collection": "shared"}
    async with AsyncRuntime() as one, AsyncRuntime() as two:
        await one.define("pgvector_store", "kb", {**attributes, "dimension": 3})
        await two.define("pgvector_store", "kb", attributes)
        await one.call_method("kb", "upsert", {"chunks": [{"id": "a", "vector": [1.0, 0, 0]}]})
        assert (await two.call_method("kb", "info", {}))["dimension"] == 3
        assert (await two.call_method("kb", "count", {}))["count"] == 1


async def test_the_hnsw_index_is_built_as_asked(postgres_dsn: str) -> None:
    schema = _schema()
    attributes = {
        "dsn": postgres_dsn,
        "schema": schema,
        "collection": "tuned",
        "hnsw_m": 8,
        "hnsw_ef_construction": 40,
        "maintenance_work_mem": "64MB",
    }
    async with AsyncRuntime() as rt:
        await rt.define("pgvector_store", "kb", attributes)
        await rt.call_method("kb", "ensure_collection", {"dimension": 3, "distance": "cosine"})
        with pytest.raises(InvalidInputError) as error:
            await rt.define("pgvector_store", "bad", {**attributes, "maintenance_work_mem": "lots"})
        assert error.value.errors[0]["path"].endswith("maintenance_work_mem")
    with psycopg.connect(postgres_dsn) as conn:
        (definition,) = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'tuned_hnsw'",
            (schema,),
        ).fetchone()
    assert "m='8'" in definition and "ef_construction='40'" in definition
