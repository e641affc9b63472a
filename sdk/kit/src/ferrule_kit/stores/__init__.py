"""Storage: the contract sessions, runs, memories and knowledge are kept by, and what its
backends share.

- `ferrule_kit.stores.storage` and `ferrule_kit.stores.storagespec`: the storage contract
  and a storage component type's description;
- `ferrule_kit.stores.sql`: the SQL backend written once over a SQL dialect (ferrule-sqlite
  and ferrule-postgres run it);
- `ferrule_kit.stores.storefiles`, `ferrule_kit.stores.dburls` and
  `ferrule_kit.stores.statemerge`: where embedded stores keep their files, database URLs as
  users write them, and re-applying a run's session-state change over another writer's.
"""
