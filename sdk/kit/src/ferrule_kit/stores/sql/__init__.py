"""The SQL storage backend, written once over a SQL dialect (SQLite's and PostgreSQL's).

Each storage-contract method is a plan of queries (`ferrule_kit.stores.sql.plan`) that
`ferrule_kit.stores.sql.store` writes, over the tables of `ferrule_kit.stores.sql.tables`
and `ferrule_kit.stores.sql.schema`, keeping the rows of `ferrule_kit.stores.sql.rows` and
the knowledge table of `ferrule_kit.stores.sql.knowledge`; a driver runs a plan with
`ferrule_kit.stores.sql.run`.
"""
