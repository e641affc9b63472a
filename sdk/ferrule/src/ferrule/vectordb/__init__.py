"""Agno's import paths for vector databases: ``ferrule.vectordb.pgvector.PgVector`` (PostgreSQL
with pgvector, ferrule-pgvector) and ``ferrule.vectordb.sqlite_vec.SqliteVecDb`` (one SQLite
file, ferrule-sqlite-vec: `ferrule.knowledge.Knowledge`'s embedded default). They are the
classes of `ferrule.knowledge.vectordb`; `ferrule.vectordb.search.SearchType` (also exported by
both) is Agno's enum of search types."""
