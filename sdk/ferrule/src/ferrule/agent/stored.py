"""How an agent's runs are kept in its db (the contract of `ferrule_kit.stores.storage`): what
ferrule keeps in a stored run's metadata besides the user's (a paused run's
`RESUME_KEY`, the knowledge searches' `REFERENCES_KEY`, the history of a run stored with
``store_history_messages``: `HISTORY_KEY`, the follow-ups suggested: `FOLLOWUPS_KEY`, the
events kept with ``store_events``: `EVENTS_KEY`), a
run's content as JSON (`content_json`), and a stored run read back as a `RunOutput`
(`stored_output`)."""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import error_from_dict
from ferrule_kit.content.messages import converter
from ferrule_kit.stores.storage import Run, RunStatus

from ..knowledge.document import MessageReferences
from ..metrics import RunMetrics
from .events import run_output_event_from_dict
from .reply_media import reply_media
from .results import RunOutput, ToolConfirmation

#: Runs that are not history: unfinished, failed, stopped, or replaced by a regenerated run.
NOT_HISTORY: list[RunStatus] = ["pending", "running", "paused", "error", "cancelled", "regenerated"]
#: Where a paused run's stored metadata keeps what continuing it needs.
RESUME_KEY = "ferrule.resume"
#: Where a run's stored metadata keeps its knowledge searches (`RunOutput.references`).
REFERENCES_KEY = "ferrule.references"
#: Where a run stored with ``store_history_messages`` keeps the history it was given.
HISTORY_KEY = "ferrule.history"
#: Where a run keeps the follow-up prompts suggested after it (`RunOutput.followups`).
FOLLOWUPS_KEY = "ferrule.followups"
#: Where a run stored with ``store_events`` keeps its events (each one's ``to_dict``).
EVENTS_KEY = "ferrule.events"
#: Where a continued run keeps what it came from (`RunOutput`'s fork / regenerate fields).
LINEAGE_KEY = "ferrule.lineage"
RESERVED_KEYS = (RESUME_KEY, REFERENCES_KEY, HISTORY_KEY, FOLLOWUPS_KEY, EVENTS_KEY, LINEAGE_KEY)


def user_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A stored run's metadata without what ferrule keeps there."""
    return {k: v for k, v in metadata.items() if k not in RESERVED_KEYS}


def stored_references(metadata: dict[str, Any]) -> list[MessageReferences]:
    return converter.structure(metadata.get(REFERENCES_KEY, []), list[MessageReferences])


def content_json(content: Any) -> Any:
    """A run's content as JSON for the store (an output schema's object unstructured)."""
    if hasattr(content, "model_dump") and not isinstance(content, type):
        return content.model_dump(mode="json")
    if attrs.has(type(content)):
        return converter.unstructure(content)
    return content


def stored_output(run: Run) -> RunOutput[Any]:
    """A stored run as a `RunOutput` (structured content comes back as JSON)."""
    references = stored_references(run.metadata)
    output: RunOutput[Any] = RunOutput(
        run.run_id,
        run.status,  # type: ignore[arg-type]  # the agent stores no "pending" run
        run.content,
        list(run.messages),
        RunMetrics.from_dict(run.metrics),
        [ToolConfirmation(r.tool_call, r.confirmed, r.reason) for r in run.requirements],
        error_from_dict(run.error) if run.error else None,
        agent_id=run.agent_id,
        session_id=run.session_id,
        user_id=run.user_id,
        content_type=run.content_type or "str",
        metadata=user_metadata(run.metadata),
        references=references or None,
        followups=run.metadata.get(FOLLOWUPS_KEY),
        events=[run_output_event_from_dict(e) for e in run.metadata[EVENTS_KEY]]
        if EVENTS_KEY in run.metadata
        else None,
    )
    for name, value in run.metadata.get(LINEAGE_KEY, {}).items():
        setattr(output, name, value)
    output.images, output.response_audio = reply_media(run.messages)
    return output
