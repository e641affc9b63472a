"""ferrule-postgres: the storage backend for many processes (``postgres_storage``), on
psycopg 3 with a connection pool. The contract is `ferrule_kit.stores.storage`; see this
plugin's README."""
