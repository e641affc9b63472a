"""Agno's exceptions under Agno's module path (``from ferrule.exceptions import
RetryAgentRun``).

`RetryAgentRun` and `StopAgentRun` are raised by a tool to steer its run: the first sends
its message to the model as the tool's result so it tries again, the second ends the run
cleanly; the ``user_message`` / ``agent_message`` / ``messages`` either gives join the
run's conversation after the tool's result (the model's next turn sees them, or the run
ends with them). The guardrails' `InputCheckError`, `OutputCheckError` and `CheckTrigger` live in
`ferrule_kit.guardrails` (the guardrail plugins raise them, and plugins never import
``ferrule``); the model errors are the kit's (`ferrule_kit.errors`) under Agno's names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ferrule_kit.errors import AuthenticationError as ModelAuthenticationError
from ferrule_kit.errors import ModelError as ModelProviderError
from ferrule_kit.errors import RateLimitError as ModelRateLimitError
from ferrule_kit.guardrails import CheckTrigger, InputCheckError, OutputCheckError

if TYPE_CHECKING:
    from ferrule_kit.messages import Message

__all__ = [
    "AgentRunException",
    "CheckTrigger",
    "InputCheckError",
    "ModelAuthenticationError",
    "ModelProviderError",
    "ModelRateLimitError",
    "OutputCheckError",
    "RetryAgentRun",
    "StopAgentRun",
]


class AgentRunException(Exception):
    """A tool's request to change the course of its run; its text is the tool's result.
    ``user_message`` (a user message), ``agent_message`` (an assistant message) and
    ``messages`` (`Message`s or their dicts) are added to the run's conversation, in that
    order, after the tool's result."""

    stop_execution: bool = False

    def __init__(
        self,
        exc: Any,
        user_message: str | Message | None = None,
        agent_message: str | Message | None = None,
        messages: list[dict[str, Any] | Message] | None = None,
    ) -> None:
        super().__init__(exc)
        self.user_message = user_message
        self.agent_message = agent_message
        self.messages = messages


class RetryAgentRun(AgentRunException):
    """The model gets this message as the tool's result and tries again."""


class StopAgentRun(AgentRunException):
    """The run ends cleanly after this tool call, its message as the reply."""

    stop_execution = True
