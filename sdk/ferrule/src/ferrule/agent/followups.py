"""Follow-up suggestions (Agno's ``followups=True``): after the model's reply, a second
request asks the ``followup_model`` (the agent's own when None) for ``num_followups``
short prompts the user could send next, as a `Followups` object (the structured output
the model is asked for); ``RunOutput.followups`` holds their list. A model that fails or
answers out of shape leaves it None (logged): the run itself still completes.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kernel import FerruleError, RequestCancelledError, get_logger
from ferrule_kit.content.messages import Message

from ..metrics import ModelType, add_helper_metrics
from .events import FollowupsCompletedEvent, FollowupsStartedEvent
from .results import json_ready

if TYPE_CHECKING:
    from .deps import SecondModels
    from .sinks import Sink
    from .state import RunState

log = get_logger("ferrule.agent")

#: What the follow-up model is told.
FOLLOWUP_INSTRUCTIONS = (
    "You suggest what the user could ask next, given their message and the assistant's "
    "reply. Each suggestion is a short prompt of five to ten words that the user could send "
    "as it is. Vary them: one goes deeper into the reply, one asks for a practical next "
    "step, one looks at the subject from another side."
)


@attrs.frozen(kw_only=True)
class Followups:
    """The follow-up prompts the model suggested (its structured output)."""

    #: Short prompts the user could send next, five to ten words each.
    suggestions: list[str]


async def suggest_followups(
    models: SecondModels, model: Any, count: int, run: RunState, sink: Sink
) -> None:
    """Ask ``model`` for ``count`` follow-up prompts to the run's reply, into
    ``run.followups``, telling ``sink`` (`FollowupsStartedEvent`,
    `FollowupsCompletedEvent`)."""
    sink.announce(FollowupsStartedEvent)
    try:
        lm = await models.model("followups", model)
        helper = models.new_agent(lm, system_message=FOLLOWUP_INSTRUCTIONS, output_schema=Followups)
        output = await helper.arun([Message("user", followup_request(run, count))])
        add_helper_metrics(run.metrics, ModelType.FOLLOWUP_MODEL, output.metrics)
        if isinstance(output.content, Followups):
            run.followups = [str(s) for s in output.content.suggestions]
        elif output.error is not None:
            raise output.error
    except RequestCancelledError:
        raise
    except FerruleError as exc:
        log.warning("followups_failed", run_id=run.id, error=exc.kind, message=exc.message)
    sink.announce(FollowupsCompletedEvent, followups=run.followups)


def followup_request(run: RunState, count: int) -> str:
    """The user's message to the follow-up model: the run's input, its reply, and how
    many suggestions to make."""
    reply = run.content
    if not isinstance(reply, str):
        reply = json.dumps(json_ready(reply), ensure_ascii=False, default=str)
    parts = []
    if isinstance(run.input, str) and run.input:
        parts.append(f"User message:\n{run.input}")
    parts.append(f"Assistant response:\n{reply}")
    parts.append(f"Suggest exactly {count} follow-up prompts.")
    return "\n\n".join(parts)
