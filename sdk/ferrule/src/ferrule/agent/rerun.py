"""Agno 2.9's continuation of an ended run: `Agent.continue_run` with ``input``,
``continue_from``, ``fork``, ``regenerate`` (and ``additional_instructions``,
``replace_original``) takes up a completed, failed or interrupted run from a point of its
messages as a run of its own.

`Rerun` is what the caller asked (`rerun_of` reads it from the call's keywords, checking
each); `start_rerun` sets up the run as it begins: the earlier run (the `RunOutput` given,
else read from the db), its messages up to the boundary (`boundary`), the new user message,
and the history the earlier run had (`history_before`). The new run is always a run of
its own, a fork: a new run id, ``forked_from_run_id`` and ``forked_from_message_index``
set (Agno forks a completed run, and goes on under the same id with a failed one; ferrule
keeps one run to one loop for both: the failed run stays as it failed).

Regenerating (``regenerate=True``) replaces the earlier run unless ``replace_original=False``:
once the new run is stored (completed, or paused for a decision), `hide_replaced` marks the
earlier one ``regenerated``, kept in the db but left out of every history built from the
session afterwards (as Agno's ``RunStatus.regenerated``). A regenerated run that fails or is
cancelled replaces nothing. With ``replace_original=False`` both runs stay history.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.stores.storage import (
    AppendRunInput,
    AppendRunResult,
    GetRunInput,
    GetRunsInput,
    RunResult,
    RunsResult,
)

from .history import keep_last_tool_calls
from .results import RunOutput, kit_messages
from .run_errors import UnknownRunError
from .stored import NOT_HISTORY, stored_output

#: The keywords of `Agent.continue_run` that `Rerun` holds.
RERUN_KEYS = (
    "input",
    "continue_from",
    "fork",
    "regenerate",
    "replace_original",
    "additional_instructions",
)
#: How many earlier runs a rerun sees without ``num_history_runs`` (as a new run).
DEFAULT_HISTORY_RUNS = 3

ContinueFrom = int | Literal["end", "last_user"]
DbCall = Callable[[str, Any, type[Any]], Awaitable[Any]]


def _continue_from(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if isinstance(value, bool) or not (
        (isinstance(value, int) and value >= 0) or value in ("end", "last_user")
    ):
        raise InvalidInputError(
            f"continue_from is a message index (0 or more), 'end' or 'last_user', got {value!r}",
            field="continue_from",
        )


def _flag(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidInputError(
            f"{attribute.name} must be True or False, got {type(value).__name__}",
            field=attribute.name,
        )


def _text(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(
            f"{attribute.name} is text, got {type(value).__name__}", field=attribute.name
        )


@attrs.frozen
class Rerun:
    """What `continue_run` was asked of an ended run (see the module docstring); all
    defaults (`plain`): resume a paused run with its decisions."""

    input: str | None = attrs.field(default=None, validator=_text)
    continue_from: ContinueFrom = attrs.field(default="end", validator=_continue_from)
    fork: bool = attrs.field(default=False, validator=_flag)
    regenerate: bool = attrs.field(default=False, validator=_flag)
    replace_original: bool | None = None
    additional_instructions: str | None = attrs.field(default=None, validator=_text)
    #: The earlier run's id, and the run itself as the caller gave it (None: read from
    #: the db by id).
    run_id: str = ""
    source: RunOutput[Any] | None = None

    def __attrs_post_init__(self) -> None:
        if self.additional_instructions is not None and self.input is not None:
            raise InvalidInputError(
                "give additional_instructions or input, not both", field="additional_instructions"
            )
        if self.replace_original is not None and not self.regenerate:
            raise InvalidInputError(
                "replace_original goes with regenerate=True", field="replace_original"
            )
        if not self.regenerate:
            return
        if self.fork:
            raise InvalidInputError(
                "regenerate=True always makes a new run: do not pass fork=True", field="fork"
            )
        if isinstance(self.continue_from, int):
            raise InvalidInputError(
                "regenerate=True finds where to continue from itself: leave continue_from",
                field="continue_from",
            )
        if self.replace_original is not None and not isinstance(self.replace_original, bool):
            raise InvalidInputError(
                f"replace_original must be True, False or None, got "
                f"{type(self.replace_original).__name__}",
                field="replace_original",
            )

    @property
    def replaces(self) -> bool:
        """Whether the new run replaces the earlier one (Agno's default when regenerating:
        ``replace_original`` None or True)."""
        return self.regenerate and self.replace_original is not False

    @property
    def plain(self) -> bool:
        """Nothing asked but resuming (the paused run's own way)."""
        return (
            self.input is None
            and self.continue_from == "end"
            and not self.fork
            and not self.regenerate
            and self.additional_instructions is None
        )

    @property
    def text(self) -> str | None:
        """The user message added after the boundary (``additional_instructions`` is its
        name when regenerating)."""
        text = self.additional_instructions if self.input is None else self.input
        return text or None


def rerun_of(arguments: dict[str, Any], run_id: str, source: Any = None) -> Rerun:
    """The `Rerun` of the run ``run_id`` a call's keywords ask, taken out of
    ``arguments`` (the rest are the hooks'); ``source`` the `RunOutput` the caller gave."""
    asked = {key: arguments.pop(key) for key in RERUN_KEYS if key in arguments}
    return Rerun(**asked, run_id=run_id, source=source if isinstance(source, RunOutput) else None)


def boundary(rerun: Rerun, messages: list[Message]) -> int:
    """How many of the earlier run's ``messages`` the new run keeps: all (``'end'``),
    through the last user message (``'last_user'``), the first ``continue_from``, or, when
    regenerating, all but the final reply (the tool calls and results before it stay);
    never cutting a tool call from its results."""
    if rerun.regenerate:
        index = len(messages)
        while (
            index and messages[index - 1].role == "assistant" and not messages[index - 1].tool_calls
        ):
            index -= 1
        if index == 0:
            raise InvalidInputError(
                "regenerate: the run has no message but replies to regenerate from",
                field="regenerate",
            )
        return index
    where = rerun.continue_from
    if where == "end":
        return len(messages)
    if where == "last_user":
        users = [i for i, m in enumerate(messages) if m.role == "user"]
        if not users:
            raise InvalidInputError(
                "continue_from='last_user': the run has no user message", field="continue_from"
            )
        return users[-1] + 1
    assert isinstance(where, int)
    if where > len(messages):
        raise InvalidInputError(
            f"continue_from={where} is past the run's {len(messages)} messages",
            field="continue_from",
        )
    return _whole_tool_turns(messages, where)


def _whole_tool_turns(messages: list[Message], index: int) -> int:
    """``index`` moved back before any tool call whose results it would leave out."""
    while index:
        kept = messages[:index]
        answered = {m.tool_call_id for m in kept if m.role == "tool"}
        calls = [i for i, m in enumerate(kept) if m.tool_calls]
        if not calls or {c.id for c in kept[calls[-1]].tool_calls} <= answered:
            return index
        index = calls[-1]
    return index


@attrs.frozen
class Started:
    """A rerun as it begins: its messages, the history it sees, what it records of the
    earlier run (`RunOutput` fields by name) and its input as stored."""

    messages: list[Message]
    history: list[Message]
    lineage: dict[str, Any]
    input: str | None
    #: The run it replaces once stored (`hide_replaced`): regenerating, unless
    #: ``replace_original=False``.
    replaces: str | None = None


async def start_rerun(
    rerun: Rerun,
    run_id: str,
    session_id: str,
    user_id: str | None,
    history: Mapping[str, Any] | None,
    db_call: DbCall | None,
) -> Started:
    """Set up ``rerun`` of the run ``run_id`` (see the module docstring); ``history``:
    whether, and how much, history it sees (``add``, ``num_history_runs``,
    ``num_history_messages``, ``max_tool_calls_from_history``)."""
    source = rerun.source
    if source is None:
        if db_call is None:
            raise UnknownRunError(f"no run {run_id!r}: give its RunOutput", run_id=run_id)
        stored = (await db_call("get_run", GetRunInput(run_id, session_id), RunResult)).run
        if stored is None or (user_id is not None and stored.user_id != user_id):
            raise UnknownRunError(f"no run {run_id!r} in this agent's db", run_id=run_id)
        source = stored_output(stored)
    if source.status in ("paused", "cancelled", "pending"):
        why = {
            "paused": "it is paused: continue it with its decisions (requirements=...), "
            "without input, continue_from, fork or regenerate",
            "cancelled": "it was cancelled",
            "pending": "it has not started",
        }[str(source.status)]
        raise InvalidInputError(f"cannot continue run {run_id!r}: {why}", field="run_id")
    own = [m for m in kit_messages(source.messages) if m.role != "system"]
    index = boundary(rerun, own)
    messages = own[:index]
    if rerun.text is not None:
        messages.append(Message("user", rerun.text))
    if not messages:
        raise InvalidInputError(
            "nothing to continue from: give input, or a later continue_from", field="input"
        )
    lineage: dict[str, Any] = {"forked_from_run_id": run_id, "forked_from_message_index": index}
    if index < len(own):
        lineage["last_checkpoint_at_message_index"] = index
    if rerun.regenerate:
        lineage["regenerated_from"] = run_id
    seen: list[Message] = []
    if history is not None and history.get("add") and db_call is not None:
        seen = await history_before(run_id, session_id, history, db_call)
    text = rerun.text if rerun.text is not None else _first_user_text(messages)
    return Started(messages, seen, lineage, text, run_id if rerun.replaces else None)


async def hide_replaced(run_id: str, session_id: str, db_call: DbCall) -> None:
    """Mark the stored run ``run_id``, which a regenerated run replaced, ``regenerated``:
    it stays in the db (its messages, metrics, lineage), but no history reads it again."""
    stored = (await db_call("get_run", GetRunInput(run_id, session_id), RunResult)).run
    if stored is None or stored.status == "regenerated":
        return
    replaced = attrs.evolve(stored, status="regenerated")
    await db_call("append_run", AppendRunInput(replaced), AppendRunResult)


def _first_user_text(messages: list[Message]) -> str | None:
    return next((m.text for m in messages if m.role == "user"), None)


async def history_before(
    run_id: str, session_id: str, history: Mapping[str, Any], db_call: DbCall
) -> list[Message]:
    """The history the run ``run_id`` had: the session's finished runs before it (the
    last ``num_history_runs``, their last ``num_history_messages``), no system message."""
    runs = (
        await db_call("get_runs", GetRunsInput(session_id, None, None, NOT_HISTORY), RunsResult)
    ).runs
    ids = [run.run_id for run in runs]
    earlier = runs[: ids.index(run_id)] if run_id in ids else runs
    last_runs, last_messages = history.get("num_history_runs"), history.get("num_history_messages")
    if last_runs is None and last_messages is None:
        last_runs = DEFAULT_HISTORY_RUNS
    if last_runs is not None:
        earlier = earlier[-last_runs:] if last_runs else []
    messages = [m for run in earlier for m in run.messages if m.role != "system"]
    if last_messages is not None:
        messages = messages[-last_messages:] if last_messages else []
    tool_calls = history.get("max_tool_calls_from_history")
    if tool_calls is not None:
        messages = keep_last_tool_calls(messages, tool_calls)
    return messages
