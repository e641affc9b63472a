"""`SqliteDb`: sessions and memories in a SQLite file (ferrule-sqlite's ``sqlite_storage``),
with Agno's constructor and methods (`ferrule.db.base.BaseDb`).

The file is ``db_file`` (a path on this machine, as in Agno: relative to the working
directory, its folder created), or ``db_url`` (SQLAlchemy's ``sqlite:///path``; ``:memory:``
is a private temporary file, as `InMemoryDb`'s), or the database of ``db_engine`` (a
SQLAlchemy engine's URL is read), or ``store`` (a file in the storage directory of the host the
runtime runs on, ``$FERRULE_STORAGE_DIR``: what a client of a remote `Runtime` names). With
none, the host's ``ferrule.db``. ``session_table`` and ``memory_table`` name its tables (a
session's runs go to ``<session_table>_runs``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, ClassVar, Literal

from ferrule_kernel import InvalidInputError

from ..base import BaseDb

__all__ = ["SqliteDb", "sqlite_file"]


def sqlite_file(db_file: Any, db_url: str | None, db_engine: Any) -> str | os.PathLike[str] | None:
    """The file a SQLite db names, by Agno's precedence: engine, URL, file."""
    if db_engine is not None:
        url = getattr(db_engine, "url", None)
        database = getattr(url, "database", None)
        if not database:
            raise InvalidInputError(
                "db_engine names no SQLite database file (engine.url.database)", field="db_engine"
            )
        return str(database)
    if db_url is not None:
        prefix = "sqlite:///"
        if not db_url.startswith(prefix) and not db_url.startswith("sqlite+"):
            raise InvalidInputError(f"a SQLite URL is {prefix}PATH, got {db_url!r}", field="db_url")
        path = db_url.split(":///", 1)[1] if ":///" in db_url else ""
        if path in ("", ":memory:"):
            return str(Path(tempfile.mkdtemp(prefix="ferrule-sqlite-memory-")) / "agent.db")
        return path
    return db_file  # type: ignore[no-any-return]


class SqliteDb(BaseDb):
    """``SqliteDb(db_file="tmp/agent.db")`` (see the module docstring)."""

    component_type: ClassVar[str] = "sqlite_storage"
    db_file: str | None
    db_url: str | None
    db_engine: Any

    def __init__(
        self,
        db_file: str | os.PathLike[str] | None = None,
        *,
        db_engine: Any = None,
        db_url: str | None = None,
        session_table: str | None = None,
        memory_table: str | None = None,
        metrics_table: str | None = None,
        knowledge_table: str | None = None,
        id: str | None = None,
        store: str | None = None,
        busy_timeout: float | None = None,
        synchronous: Literal["full", "normal"] | None = None,
    ) -> None:
        path = sqlite_file(db_file, db_url, db_engine)
        if path is not None and store is not None:
            raise InvalidInputError("give db_file (or db_url) or store, not both", field="db_file")
        self.db_file = None if path is None else str(path)
        self.db_url = db_url
        self.db_engine = db_engine
        self.store = store
        #: Seconds a write waits for another writer (thread or process).
        self.busy_timeout = busy_timeout
        #: "full" (a committed run survives a power cut) or "normal" (faster, WAL).
        self.synchronous = synchronous
        super().__init__(session_table, memory_table, metrics_table, knowledge_table, id)

    def identity(self) -> Any:
        return ("sqlite", self.db_file, self.store, self.session_table_name, self.memory_table_name)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        attributes: dict[str, Any] = self.table_attributes()
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

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "db_file": self.db_file}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SqliteDb:
        keywords = {
            k: v for k, v in data.items() if k in ("db_file", "session_table", "memory_table")
        }
        return cls(**keywords, id=data.get("id"))

    def __repr__(self) -> str:
        return f"SqliteDb(db_file={self.db_file!r})"
