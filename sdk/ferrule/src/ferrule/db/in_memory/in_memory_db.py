"""`InMemoryDb`: Agno's store that lives as long as this process (``from
ferrule.db.in_memory import InMemoryDb``).

Its sessions, runs and memories are kept by ferrule's SQLite storage (ferrule-sqlite's
``sqlite_storage``, the same behaviour as `SqliteDb`) in a file of a private temporary
folder, removed when the `InMemoryDb` is collected or the process exits: nothing outlives
the process, and two `InMemoryDb` share nothing, as in Agno."""

from __future__ import annotations

import tempfile
import weakref
from pathlib import Path
from typing import Any, ClassVar

import attrs
from ferrule_kernel import InvalidInputError


def _private_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="ferrule-in-memory-db-"))


@attrs.frozen(eq=False)
class InMemoryDb:
    """``Agent(db=InMemoryDb())``: sessions and memories for this process's lifetime."""

    component_type: ClassVar[str] = "sqlite_storage"

    folder: Path = attrs.field(factory=_private_folder, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        weakref.finalize(self, _remove_folder, self.folder)

    def attributes(self, runtime: Any) -> dict[str, Any]:
        if getattr(runtime, "kernel", None) is None:
            raise InvalidInputError(
                "an InMemoryDb lives in this process; a remote Runtime's agent needs a store "
                "of its server: SqliteDb(store='agent.db')",
                field="db",
            )
        return {"path": str(self.folder / "agent.db")}


def _remove_folder(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
