"""`InMemoryDb`: Agno's store that lives as long as this process (``from
ferrule.db.in_memory import InMemoryDb``).

Its sessions, runs and memories are kept by ferrule's SQLite storage (ferrule-sqlite's
``sqlite_storage``, the same behaviour as `SqliteDb`, Agno's methods included) in a file of
a private temporary folder, removed when the `InMemoryDb` is collected or the process exits:
nothing outlives the process, and two `InMemoryDb` share nothing, as in Agno."""

from __future__ import annotations

import tempfile
import weakref
from pathlib import Path
from typing import Any, ClassVar

from ferrule_kernel import InvalidInputError

from ..base import BaseDb

__all__ = ["InMemoryDb"]


def _remove_folder(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


class InMemoryDb(BaseDb):
    """``Agent(db=InMemoryDb())``: sessions and memories for this process's lifetime."""

    component_type: ClassVar[str] = "sqlite_storage"

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="ferrule-in-memory-db-"))
        weakref.finalize(self, _remove_folder, self.folder)
        super().__init__()

    def identity(self) -> Any:
        return ("in-memory", str(self.folder))

    def attributes(self, runtime: Any) -> dict[str, Any]:
        if getattr(runtime, "kernel", None) is None:
            raise InvalidInputError(
                "an InMemoryDb lives in this process; a remote Runtime's agent needs a store "
                "of its server: SqliteDb(store='agent.db')",
                field="db",
            )
        return {"path": str(self.folder / "agent.db")}

    def __repr__(self) -> str:
        return "InMemoryDb()"
