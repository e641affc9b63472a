"""ferrule-sqlite: the embedded storage backend (``sqlite_storage``), on the standard
library's sqlite3. The contract is `ferrule_kit.stores.storage`; see this plugin's README."""
