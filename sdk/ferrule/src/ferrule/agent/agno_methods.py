"""Agno's smaller `Agent` methods, `AgentUpkeep`'s (a collaborator of `Agent`, over the
agent seen as an `UpkeepView`): ``set_id`` (an id from the name when the agent has none),
``initialize_agent`` (what Agno does before a run; ferrule's agent is ready once built, so
only the id and ``debug_mode``) and ``scrub_run_output_for_storage`` (a `RunOutput` cut to
what the agent's ``store_media`` and ``store_tool_messages`` say a stored run keeps, as
ferrule stores its own runs), and ``to_dict`` (the agent's configuration as data,
`agent_config`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .agent_config import agent_config, agent_from_dict
from .history import without_media, without_tool_calls
from .results import agno_messages, kit_messages
from .settings import agent_id_for

if TYPE_CHECKING:
    from .results import RunOutput


class UpkeepView(Protocol):
    """The agent's settings the methods read and set, as they are now."""

    id: str
    name: str | None
    debug_mode: bool
    store_media: bool
    store_tool_messages: bool


class AgentUpkeep:
    """The methods (see the module docstring)."""

    #: `Agent.from_dict` (a classmethod of `Agent`): an agent built from its ``to_dict``.
    from_dict = staticmethod(agent_from_dict)

    def __init__(self, agent: UpkeepView) -> None:
        self.agent = agent

    def set_id(self) -> None:
        """Give the agent an id from its name (a new one without a name), unless it has one."""
        if not self.agent.id:
            self.agent.id = agent_id_for(self.agent.name)

    def initialize_agent(self, debug_mode: bool | None = None) -> None:
        """Make the agent ready to run: its id set, and ``debug_mode`` turned on when
        asked (ferrule builds everything else when the agent is made)."""
        self.set_id()
        if debug_mode:
            self.agent.debug_mode = True

    def scrub_run_output_for_storage(self, run_response: RunOutput) -> None:
        """Leave in ``run_response`` only what a stored run of this agent keeps: without
        ``store_media``, no media (its messages keep their text; its input and output
        media are dropped); without ``store_tool_messages``, no tool calls and results."""
        if not self.agent.store_tool_messages:
            kept = without_tool_calls(kit_messages(run_response.messages))
            run_response.messages = agno_messages(kept)
        if not self.agent.store_media:
            kept = without_media(kit_messages(run_response.messages))
            run_response.messages = agno_messages(kept)
            run_response.images = run_response.videos = None
            run_response.audio = run_response.files = None
            run_input = run_response.input
            if run_input is not None:
                run_input.images = run_input.videos = run_input.audios = run_input.files = None

    def to_dict(self) -> dict[str, Any]:
        """The agent's configuration as Agno's dict (`agent_config.agent_config`): every
        option not at its default that is data, models as ``{"name", "id", "provider"}``,
        tools, db, knowledge and schemas by reference; `Agent.from_dict` reads it back."""
        return agent_config(self.agent)
