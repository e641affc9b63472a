"""`SqliteDb`: sessions and memories in a SQLite file (ferrule-sqlite's ``sqlite_storage``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

import attrs
from ferrule_kernel import InvalidInputError


@attrs.frozen
class SqliteDb:
    """A SQLite file: ``SqliteDb(db_file="tmp/agent.db")`` (a path on this machine, as in
    Agno: relative to the working directory, its folder created), or
    ``SqliteDb(store="agent.db")`` (a file in the storage directory of the host the runtime
    runs on, ``$FERRULE_STORAGE_DIR``: what a client of a remote `Runtime` names, since
    paths of its own machine mean nothing to the server). With neither, the host's
    ``ferrule.db``."""

    component_type: ClassVar[str] = "sqlite_storage"

    db_file: str | os.PathLike[str] | None = None
    store: str | None = None
    #: Seconds a write waits for another writer (thread or process).
    busy_timeout: float | None = None
    #: "full" (a committed run survives a power cut) or "normal" (faster, WAL).
    synchronous: Literal["full", "normal"] | None = None

    def __attrs_post_init__(self) -> None:
        if self.db_file is not None and self.store is not None:
            raise InvalidInputError("give db_file or store, not both", field="db_file")

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = {}
        if self.db_file is not None:
            path = Path(self.db_file).expanduser().resolve()
            if getattr(runtime, "kernel", None) is not None:  # the file is on this machine
                path.parent.mkdir(parents=True, exist_ok=True)
            attributes["path"] = str(path)
        elif self.store is not None:
            attributes["db_file"] = self.store
        if self.busy_timeout is not None:
            attributes["busy_timeout"] = self.busy_timeout
        if self.synchronous is not None:
            attributes["synchronous"] = self.synchronous
        return attributes


#: Agno's ``AsyncSqliteDb``: ferrule's storage is asynchronous underneath and serves sync and
#: async agents alike, so the async spelling names the same class.
AsyncSqliteDb = SqliteDb
