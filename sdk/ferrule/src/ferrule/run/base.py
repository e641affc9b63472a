"""Agno's ``agno.run.base``: `RunContext` (what a run is for, given to the functions that
take ``run_context``), `RunStatus`, a run's state (``"completed"``, ``"paused"``...), and
`BaseRunOutputEvent`, what every event of a streamed run has (``to_dict``, ``to_json``,
``from_dict``, ``is_paused``, ``is_cancelled``)."""

from __future__ import annotations

from ..agent.events import BaseRunOutputEvent
from ..agent.results import RunStatus
from ..tools.tool_context import RunContext

__all__ = ["BaseRunOutputEvent", "RunContext", "RunStatus"]
