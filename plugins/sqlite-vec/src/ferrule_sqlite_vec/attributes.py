"""What ``define("sqlite_vec_store", name, attrs)`` takes. A module of its own, imported
when a store is first defined: the storage-directory helpers it uses are not for the
plugin's hook module, which every discovery imports."""

from __future__ import annotations

import attrs
from ferrule_kernel import in_range
from ferrule_kit.embeddings.vectorspec import VectorStoreAttributes
from ferrule_kit.network.paths import server_path
from ferrule_kit.stores.storage import store_file

DEFAULT_FILE = "ferrule-vectors.db"


@attrs.frozen
class SqliteVecAttributes(VectorStoreAttributes):
    """What ``define`` takes: the database file, and the collection's name, dimension and
    distance (see `VectorStoreAttributes`). The file is created if absent; several
    collections live in one file."""

    #: The database file, relative to the host's storage directory (``$FERRULE_STORAGE_DIR``,
    #: default ``~/.local/share/ferrule``), as ferrule's session storage names its file;
    #: any caller may name one.
    db_file: str = attrs.field(default=DEFAULT_FILE, validator=store_file)
    #: A path on this machine instead of ``db_file`` (``":memory:"``: a store that lives as
    #: long as the component): any path from code in this process; from a network client
    #: only under the directories of ``$FERRULE_REMOTE_PATHS`` (`ferrule_kit.network.paths`).
    path: str | None = attrs.field(default=None, validator=server_path)
    #: Milliseconds to wait for another process's write to finish before giving up.
    busy_timeout_ms: int = attrs.field(default=10_000, validator=in_range(0, 600_000))
