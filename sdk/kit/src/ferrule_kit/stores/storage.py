"""The storage contract: sessions, runs and user memories, kept by a storage component.

A storage backend is a component type (describe it with
`ferrule_kit.stores.storagespec.storage_type`) with the methods below; each takes one of the input
classes here and returns the matching result class, as JSON dicts at the boundary, so a
store works in-process and over ``ferrule serve`` alike. `converter` (the messages'
converter: runs hold messages in ferrule's wire shape) structures a result dict back into
its class::

    data = await rt.acall_method("db", "get_messages", {"session_id": "s1", "last_n_runs": 3})
    messages = converter.structure(data, MessagesResult).messages

=====================  ===============================  ======================================
method                 input                            result
=====================  ===============================  ======================================
schema_version         `SchemaVersionInput`             `SchemaVersionResult`
upsert_session         `UpsertSessionInput`             `SessionResult` (never None)
get_session            `SessionRef`                     `SessionResult` (None if not stored)
list_sessions          `ListSessionsInput`              `SessionsResult`, newest update first
rename_session         `RenameSessionInput`             `SessionResult`
update_session_state   `UpdateSessionStateInput`        `SessionResult`
set_session_summary    `SetSessionSummaryInput`         `SessionResult`
delete_session         `SessionRef`                     `DeletedResult` (its runs go with it)
append_run             `AppendRunInput`                 `AppendRunResult`
get_run                `GetRunInput`                    `RunResult`
get_runs               `GetRunsInput`                   `RunsResult`, oldest first
get_messages           `GetMessagesInput`               `MessagesResult`, oldest first
upsert_memory          `UpsertMemoryInput`              `MemoryResult`
get_memory             `MemoryRef`                      `MemoryResult`
list_memories          `ListMemoriesInput`              `MemoriesResult`, oldest first
delete_memory          `MemoryRef`                      `DeletedResult`
clear_memories         `UserRef`                        `DeletedResult`
upsert_knowledge       `UpsertKnowledgeInput`           `KnowledgeResult`
get_knowledge          `KnowledgeRef`                   `KnowledgeResult` (None if not stored)
list_knowledge         `ListKnowledgeInput`             `KnowledgeListResult`, sorted, paged
delete_knowledge       `KnowledgeRef`                   `DeletedResult`
=====================  ===============================  ======================================

What every backend guarantees (`ferrule_kit.testing.StorageConformance` checks each):

- **A run is committed whole, with its session.** `append_run` writes the run and the
  session's update (created if new; ``updated_at``, ``run_count`` and, when given, the new
  ``session_state`` and ``summary``) in one transaction. Writers of one session are
  serialized: concurrent appends lose nothing, from threads or from other processes.
- **State writes can be compare-and-set.** Every write of a session's state adds one to
  its ``state_version``; `append_run` and `update_session_state` given the version they
  read write only if it is still the stored one, else raise `SessionStateConflictError`
  (details: ``session_id``, ``expected``, ``actual``) and change nothing, so a writer that
  re-reads and re-applies its change loses no other writer's.
- **Runs keep their order and their content exactly.** A session's runs are ordered by
  first append. Appending a ``run_id`` already stored replaces that run in place (a paused
  run continued later keeps its position); a ``run_id`` of another session is refused
  with `StorageConflictError`. What is read back equals what was written: messages,
  tool calls, requirements, metrics, status, content, every JSON value.
- **History loads read only their window.** `get_runs` / `get_messages` with
  ``last_n_runs`` (and ``limit``) read that many runs through an index, however long the
  session is. Runs whose status is in ``skip_statuses`` are skipped before counting.
  `get_messages` drops roles in ``skip_roles``, keeps the last ``limit`` messages, and a
  window cut by ``limit`` never opens on ``tool`` messages whose call was cut off.
- **Errors are typed.** A store that cannot be reached or opened raises
  `StorageUnavailableError` naming it (``details["backend"]``, ``details["store"]``; no
  password); bad input raises `InvalidInputError` naming the field; changing a session
  that is not stored raises `SessionNotFoundError`.
- **A knowledge base's contents are rows of their own** (`KnowledgeContent`: what was
  added, its metadata and how its ingestion went), in the store's knowledge table (made
  when missing, under the name the store was given). `upsert_knowledge` writes a row's
  given fields and keeps the stored value of each field it leaves out (None), and the
  ``created_at`` of its first write.
- **Schemas are versioned.** A store records its schema version and migrates an older
  store forward when opened; one newer than the backend knows raises `StorageSchemaError`.

Timestamps are seconds since the epoch (float), set by the store unless a run brings its
own ``created_at``. Ids are 1 to 255 characters without NUL; JSON values must be JSON
(no NaN, no infinities, string keys).
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError, in_range

from ferrule_kit.content.messages import Message, Role, ToolCall, converter

# The file-path helpers live in `ferrule_kit.stores.storefiles`; they are named here too, where
# plugins and tests have always imported them from.
from .storefiles import STORAGE_DIR_ENV, resolve_store_file, storage_root, store_file

__all__ = [
    "STORAGE_DIR_ENV",
    "AppendRunInput",
    "AppendRunResult",
    "ClearMemoriesInput",
    "DeletedResult",
    "GetMessagesInput",
    "GetRunInput",
    "GetRunsInput",
    "KnowledgeContent",
    "KnowledgeListResult",
    "KnowledgeRef",
    "KnowledgeResult",
    "ListKnowledgeInput",
    "ListMemoriesInput",
    "ListSessionsInput",
    "MemoriesResult",
    "MemoryRef",
    "MemoryResult",
    "MessagesResult",
    "RenameSessionInput",
    "Requirement",
    "RequirementKind",
    "Run",
    "RunResult",
    "RunStatus",
    "RunsResult",
    "SchemaVersionInput",
    "SchemaVersionResult",
    "Session",
    "SessionRef",
    "SessionResult",
    "SessionSummary",
    "SessionsResult",
    "SetSessionSummaryInput",
    "ToolExecution",
    "UpdateSessionStateInput",
    "UpsertKnowledgeInput",
    "UpsertMemoryInput",
    "UpsertSessionInput",
    "UserMemory",
    "UserRef",
    "converter",
    "resolve_store_file",
    "storage_root",
    "store_file",
]

#: pending → running → completed / paused / cancelled / error (a paused run may run again);
#: regenerated: an ended run that a regenerated run replaced (not history any more).
RunStatus = Literal[
    "pending", "running", "completed", "paused", "cancelled", "error", "regenerated"
]
RequirementKind = Literal["confirmation", "user_input", "external_execution"]


# -- validators -------------------------------------------------------------------------


def _check_text(attribute: attrs.Attribute[Any], value: str) -> None:
    # Both SQL backends keep these in text columns: Postgres text refuses NUL, and a lone
    # surrogate has no UTF-8 encoding, so neither could be stored or read back.
    if "\x00" in value:
        raise InvalidInputError("must not contain NUL characters", field=f"$.{attribute.name}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            "must be valid Unicode (it holds a lone surrogate)", field=f"$.{attribute.name}"
        ) from None


def _key(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """An id: 1 to 255 characters, storable as text."""
    if value is None:
        return
    if not 1 <= len(value) <= 255:
        raise InvalidInputError(
            f"must be 1 to 255 characters, got {len(value)}", field=f"$.{attribute.name}"
        )
    _check_text(attribute, value)


def _text(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None:
        _check_text(attribute, value)


def _keys(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    for item in value or ():
        _key(_instance, attribute, item)


# -- records ----------------------------------------------------------------------------


def _no_negative_zero(value: Any) -> Any:
    return value + 0.0 if type(value) is float else value


@attrs.frozen
class SessionSummary:
    """A model-written summary of a session (what summaries of long sessions replace)."""

    summary: str
    topics: list[str] = attrs.field(factory=list)
    updated_at: float | None = None


@attrs.frozen
class Session:
    """A stored session. ``run_count``, ``created_at`` and ``updated_at`` are kept by the store."""

    session_id: str = attrs.field(validator=_key)
    user_id: str | None = attrs.field(default=None, validator=_key)
    agent_id: str | None = attrs.field(default=None, validator=_key)
    name: str | None = attrs.field(default=None, validator=_text)
    session_state: dict[str, Any] = attrs.field(factory=dict)
    summary: SessionSummary | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    run_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    #: Counts the writes of ``session_state``: the token of a compare-and-set
    #: (`AppendRunInput.state_version`).
    state_version: int = 0


@attrs.frozen
class ToolExecution:
    """One tool call a run made, and how it went."""

    tool_call_id: str
    name: str
    arguments: Any = attrs.field(factory=dict)
    #: The tool's result as JSON (None while not run, or when it failed).
    result: Any = None
    error: str | None = None
    #: Seconds the call took.
    duration: float | None = None

    @property
    def tool_name(self) -> str:
        """`name`, under Agno's spelling (``event.tool.tool_name``)."""
        return self.name

    @property
    def tool_args(self) -> Any:
        """`arguments`, under Agno's spelling."""
        return self.arguments


@attrs.frozen
class Requirement:
    """What a paused run waits for (human in the loop): a decision on ``tool_call``.
    ``values`` holds what was given: a user's input fields, or an external result."""

    tool_call: ToolCall
    kind: RequirementKind = "confirmation"
    confirmed: bool | None = None
    reason: str | None = None
    values: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Run:
    """A stored run: what came in, the messages it added (wire shape), its tool calls,
    metrics and status; a paused run also holds its ``requirements``. ``metadata`` is the
    caller's own (e.g. what an agent needs to continue a paused run elsewhere)."""

    run_id: str = attrs.field(validator=_key)
    session_id: str = attrs.field(validator=_key)
    user_id: str | None = attrs.field(default=None, validator=_key)
    agent_id: str | None = attrs.field(default=None, validator=_key)
    status: RunStatus = "completed"
    input: Any = None
    messages: list[Message] = attrs.field(factory=list)
    tool_calls: list[ToolExecution] = attrs.field(factory=list)
    requirements: list[Requirement] = attrs.field(factory=list)
    metrics: dict[str, Any] = attrs.field(factory=dict)
    #: The final text, or the structured output as JSON.
    content: Any = None
    content_type: str | None = None
    #: The typed error of a failed run (``FerruleError.to_dict()``).
    error: dict[str, Any] | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    #: Seconds since the epoch, never negative; -0.0 is stored as 0.0 (SQLite's REAL
    #: keeps no sign of zero, and both backends must read back the same value).
    created_at: float | None = attrs.field(
        default=None, converter=_no_negative_zero, validator=in_range(0.0)
    )
    updated_at: float | None = attrs.field(
        default=None, converter=_no_negative_zero, validator=in_range(0.0)
    )


@attrs.frozen
class UserMemory:
    """A fact about a user that outlives sessions."""

    memory_id: str = attrs.field(validator=_key)
    user_id: str = attrs.field(validator=_key)
    memory: str = attrs.field(validator=_text)
    topics: list[str] = attrs.field(factory=list)
    agent_id: str | None = attrs.field(default=None, validator=_key)
    created_at: float = 0.0
    updated_at: float = 0.0


def _content_key(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """A knowledge content's id (a document's: a file's path, a URL): 1 to 1,024 characters."""
    if not 1 <= len(value) <= 1024:
        raise InvalidInputError(
            f"must be 1 to 1024 characters, got {len(value)}", field=f"$.{attribute.name}"
        )
    _check_text(attribute, value)


@attrs.frozen
class KnowledgeContent:
    """One content added to a knowledge base (a file, a URL, a text): its name, description
    and metadata, its ``type`` (a file's extension, ``"url"``, ``"text"``) and ``size`` in
    bytes, the knowledge base it is ``linked_to``, how its ingestion went (``status``:
    ``"processing"``, ``"completed"`` or ``"failed"``, with ``status_message``) and when
    (seconds since the epoch). The knowledge base's business: the store keeps what it is
    given."""

    id: str = attrs.field(validator=_content_key)
    name: str | None = attrs.field(default=None, validator=_text)
    description: str | None = attrs.field(default=None, validator=_text)
    metadata: dict[str, Any] | None = None
    type: str | None = attrs.field(default=None, validator=_text)
    size: int | None = attrs.field(default=None, validator=in_range(0))
    linked_to: str | None = attrs.field(default=None, validator=_text)
    access_count: int | None = attrs.field(default=None, validator=in_range(0))
    status: str | None = attrs.field(default=None, validator=_text)
    status_message: str | None = attrs.field(default=None, validator=_text)
    created_at: int | None = attrs.field(default=None, validator=in_range(0))
    updated_at: int | None = attrs.field(default=None, validator=in_range(0))
    external_id: str | None = attrs.field(default=None, validator=_text)


#: The fields `ListKnowledgeInput.sort_by` may name.
KnowledgeSortKey = Literal[
    "id", "name", "type", "size", "status", "access_count", "created_at", "updated_at"
]


# -- inputs -----------------------------------------------------------------------------


@attrs.frozen
class SchemaVersionInput:
    pass


@attrs.frozen
class SessionRef:
    session_id: str = attrs.field(validator=_key)


@attrs.frozen
class UserRef:
    user_id: str = attrs.field(validator=_key)


@attrs.frozen
class ClearMemoriesInput:
    """A user's memories, or with no ``user_id`` every user's."""

    user_id: str | None = attrs.field(default=None, validator=_key)


@attrs.frozen
class UpsertSessionInput:
    """Create a session, or replace every field of a stored one but its run count and
    ``created_at`` (the seed's ``save_session``)."""

    session_id: str = attrs.field(validator=_key)
    user_id: str | None = attrs.field(default=None, validator=_key)
    agent_id: str | None = attrs.field(default=None, validator=_key)
    name: str | None = attrs.field(default=None, validator=_text)
    session_state: dict[str, Any] = attrs.field(factory=dict)
    summary: SessionSummary | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ListSessionsInput:
    user_id: str | None = attrs.field(default=None, validator=_key)
    agent_id: str | None = attrs.field(default=None, validator=_key)
    limit: int = attrs.field(default=100, validator=in_range(1, 10_000))
    offset: int = attrs.field(default=0, validator=in_range(0))


@attrs.frozen
class RenameSessionInput:
    session_id: str = attrs.field(validator=_key)
    name: str = attrs.field(validator=_text)


@attrs.frozen
class UpdateSessionStateInput:
    """Merge ``updates`` into the session's state (top-level keys), or replace the state
    with them; atomic, so concurrent updates of different keys all land. With
    ``state_version``, only if the stored state is still at that version (else
    `SessionStateConflictError`, and nothing changes)."""

    session_id: str = attrs.field(validator=_key)
    updates: dict[str, Any]
    replace: bool = False
    state_version: int | None = attrs.field(default=None, validator=in_range(0))


@attrs.frozen
class SetSessionSummaryInput:
    session_id: str = attrs.field(validator=_key)
    summary: SessionSummary | None


@attrs.frozen
class AppendRunInput:
    """Store ``run`` (replacing a stored run of the same id) and update its session in the
    same transaction: created if new (with the run's user and agent), and given
    ``session_state`` / ``summary`` when these are not None.

    ``state_version`` makes the state's write a compare-and-set: give the
    `Session.state_version` the new ``session_state`` was derived from (0 for a session
    not stored yet). If another writer changed the state since, nothing is stored and
    `SessionStateConflictError` is raised: re-read the session, re-apply the change to its
    state (`ferrule_kit.stores.statemerge.merge_state`) and append again. Without it the state is
    written whatever was stored (the last writer wins)."""

    run: Run
    session_state: dict[str, Any] | None = None
    summary: SessionSummary | None = None
    state_version: int | None = attrs.field(default=None, validator=in_range(0))


@attrs.frozen
class GetRunInput:
    """One run by id; with ``session_id``, only if it belongs to that session."""

    run_id: str = attrs.field(validator=_key)
    session_id: str | None = attrs.field(default=None, validator=_key)


@attrs.frozen
class GetRunsInput:
    """A session's runs, oldest first: the last ``last_n_runs`` of those whose status is in
    ``statuses`` (when given) and not in ``skip_statuses`` (``get_last_run_output`` is
    ``last_n_runs=1``)."""

    session_id: str = attrs.field(validator=_key)
    last_n_runs: int | None = attrs.field(default=None, validator=in_range(1))
    statuses: list[RunStatus] | None = None
    skip_statuses: list[RunStatus] = attrs.field(factory=list)


@attrs.frozen
class GetMessagesInput:
    """The messages of a session's runs, oldest first (the seed's ``get_session_messages``;
    its ``get_chat_history`` is ``skip_roles=["system", "tool"]``)."""

    session_id: str = attrs.field(validator=_key)
    last_n_runs: int | None = attrs.field(default=None, validator=in_range(1))
    #: At most this many messages: the last ones.
    limit: int | None = attrs.field(default=None, validator=in_range(1))
    skip_roles: list[Role] = attrs.field(factory=list)
    skip_statuses: list[RunStatus] = attrs.field(factory=list)


@attrs.frozen
class UpsertMemoryInput:
    """Add a memory (a new ``memory_id`` is made when none is given) or replace one of the
    same user."""

    user_id: str = attrs.field(validator=_key)
    memory: str = attrs.field(validator=_text)
    topics: list[str] = attrs.field(factory=list)
    memory_id: str | None = attrs.field(default=None, validator=_key)
    agent_id: str | None = attrs.field(default=None, validator=_key)


@attrs.frozen
class MemoryRef:
    """A memory by id; with ``user_id``, only if it is that user's (what a memory manager
    acting for one user passes)."""

    memory_id: str = attrs.field(validator=_key)
    user_id: str | None = attrs.field(default=None, validator=_key)


@attrs.frozen
class ListMemoriesInput:
    """A user's memories (every user's without ``user_id``), oldest first; with ``topics``,
    those having any of them."""

    user_id: str | None = attrs.field(default=None, validator=_key)
    topics: list[str] | None = attrs.field(default=None, validator=_keys)
    limit: int | None = attrs.field(default=None, validator=in_range(1))


@attrs.frozen
class UpsertKnowledgeInput:
    """Add a knowledge content, or change the fields of a stored one that are not None."""

    content: KnowledgeContent


@attrs.frozen
class KnowledgeRef:
    id: str = attrs.field(validator=_content_key)


@attrs.frozen
class ListKnowledgeInput:
    """Knowledge contents (those ``linked_to`` one knowledge base, when given), oldest first
    unless sorted by ``sort_by`` (``sort_order`` ``"asc"``, or descending by default); with
    ``limit``, the ``page`` th page (from 1) of that many."""

    linked_to: str | None = attrs.field(default=None, validator=_text)
    limit: int | None = attrs.field(default=None, validator=in_range(1))
    page: int | None = attrs.field(default=None, validator=in_range(1))
    sort_by: KnowledgeSortKey | None = None
    sort_order: Literal["asc", "desc"] | None = None


# -- results ----------------------------------------------------------------------------


@attrs.frozen
class SchemaVersionResult:
    #: The store's schema version, and the newest this backend knows (equal once opened).
    version: int
    latest: int
    backend: str


@attrs.frozen
class SessionResult:
    session: Session | None


@attrs.frozen
class SessionsResult:
    sessions: list[Session]


@attrs.frozen
class DeletedResult:
    #: How many records were deleted (sessions, memories; a session's runs not counted).
    deleted: int


@attrs.frozen
class AppendRunResult:
    session: Session
    #: True when the run replaced a stored run of the same id.
    replaced: bool


@attrs.frozen
class RunResult:
    run: Run | None


@attrs.frozen
class RunsResult:
    runs: list[Run]


@attrs.frozen
class MessagesResult:
    messages: list[Message]


@attrs.frozen
class MemoryResult:
    memory: UserMemory | None


@attrs.frozen
class MemoriesResult:
    memories: list[UserMemory]


@attrs.frozen
class KnowledgeResult:
    content: KnowledgeContent | None


@attrs.frozen
class KnowledgeListResult:
    contents: list[KnowledgeContent]
    #: How many contents matched, over all pages.
    total: int
