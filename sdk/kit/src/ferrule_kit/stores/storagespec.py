"""Describing a storage component type, for a plugin's hook module.

Like `ferrule_kit.models.lmspec`: the descriptions name the contract's classes as strings, so a
plugin's ``plugin.py`` stays cheap to import and `ferrule_kit.stores.storage` is imported only
when a store is first defined or called. The methods and their classes are listed in
`ferrule_kit.stores.storage`'s docstring.
"""

from __future__ import annotations

from ferrule_kernel import ComponentTypeSpec, MethodSpec, Target

#: The converter of the contract's classes (runs hold messages in the wire shape).
WIRE_CONVERTER = "ferrule_kit.content.messages:converter"

#: (method, input class in ferrule_kit.stores.storage, description)
METHODS: tuple[tuple[str, str, str], ...] = (
    ("schema_version", "SchemaVersionInput", "The store's schema version."),
    ("upsert_session", "UpsertSessionInput", "Create a session or replace its fields."),
    ("get_session", "SessionRef", "One session, or null."),
    ("list_sessions", "ListSessionsInput", "Sessions, most recently updated first."),
    ("rename_session", "RenameSessionInput", "Rename a session."),
    ("update_session_state", "UpdateSessionStateInput", "Merge into (or replace) a state."),
    ("set_session_summary", "SetSessionSummaryInput", "Set or clear a session's summary."),
    ("delete_session", "SessionRef", "Delete a session and its runs."),
    ("append_run", "AppendRunInput", "Store a run and update its session, in one transaction."),
    ("get_run", "GetRunInput", "One run by id, or null."),
    ("get_runs", "GetRunsInput", "A session's runs, windowed, oldest first."),
    ("get_messages", "GetMessagesInput", "A session's messages, windowed, oldest first."),
    ("upsert_memory", "UpsertMemoryInput", "Add or replace a user memory."),
    ("get_memory", "MemoryRef", "One user memory, or null."),
    ("list_memories", "ListMemoriesInput", "A user's (or every user's) memories, oldest first."),
    ("delete_memory", "MemoryRef", "Delete a user memory."),
    ("clear_memories", "ClearMemoriesInput", "Delete a user's memories (every user's if none)."),
    ("upsert_knowledge", "UpsertKnowledgeInput", "Add a knowledge content or change its fields."),
    ("get_knowledge", "KnowledgeRef", "One knowledge content, or null."),
    ("list_knowledge", "ListKnowledgeInput", "Knowledge contents, sorted and paged, with a total."),
    ("delete_knowledge", "KnowledgeRef", "Delete a knowledge content."),
)


def storage_methods(*, blocking: bool = True) -> tuple[MethodSpec, ...]:
    """The methods every storage component type declares. ``blocking``: the backend's
    methods are plain functions doing I/O (run in a worker thread for async callers);
    async methods ignore it."""
    return tuple(
        MethodSpec(
            name,
            f"ferrule_kit.stores.storage:{inputs}",
            blocking=blocking,
            description=description,
            converter=WIRE_CONVERTER,
        )
        for name, inputs, description in METHODS
    )


def storage_type(
    name: str,
    factory: Target,
    attributes: type | str,
    *,
    aliases: tuple[str, ...] = (),
    description: str = "",
    blocking: bool = True,
) -> ComponentTypeSpec:
    """Describe a storage component type: the contract's methods plus the given attributes
    class (a class, or its ``"module:attr"`` to keep the hook module light)."""
    return ComponentTypeSpec(
        name=name,
        factory=factory,
        attributes=attributes,
        methods=storage_methods(blocking=blocking),
        aliases=aliases,
        description=description,
        converter=WIRE_CONVERTER,
    )
