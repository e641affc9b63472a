"""Agno's exceptions under Agno's module path (``from ferrule.exceptions import
RetryAgentRun``).

`RetryAgentRun` and `StopAgentRun` are raised by a tool to steer its run: the first sends
its message to the model as the tool's result so it tries again, the second ends the run
cleanly; the ``user_message`` / ``agent_message`` / ``messages`` either gives join the
run's conversation after the tool's result (the model's next turn sees them, or the run
ends with them).

The model errors are the kit's (`ferrule_kit.errors`: plugins raise them, and plugins never
import ``ferrule``) under Agno's names: `AgnoError` is `StatusError` (a ``status_code``,
``error_id`` and ``type``), `ModelProviderError` is `ModelError`, with ``model_name`` /
``model_id`` and `ModelProviderError.classify`; its narrower kinds (a rate limit, an
authentication failure, an input over the context window) are its subclasses. The
guardrails' `InputCheckError`, `OutputCheckError` and `CheckTrigger` live in
`ferrule_kit.guardrails` (the guardrail plugins raise them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ferrule_kit.errors import AuthenticationError as ModelAuthenticationError
from ferrule_kit.errors import ContextWindowExceededError
from ferrule_kit.errors import ModelError as ModelProviderError
from ferrule_kit.errors import RateLimitError as ModelRateLimitError
from ferrule_kit.errors import StatusError as AgnoError
from ferrule_kit.guardrails import CheckTrigger, InputCheckError, OutputCheckError

if TYPE_CHECKING:
    from ferrule_kit.content.messages import Message

__all__ = [
    "AgentRunException",
    "AgnoError",
    "CheckTrigger",
    "ContextWindowExceededError",
    "InputCheckError",
    "ModelAuthenticationError",
    "ModelProviderError",
    "ModelRateLimitError",
    "OutputCheckError",
    "PathSecurityError",
    "RetryAgentRun",
    "RetryableModelProviderError",
    "RunCancelledException",
    "RunNotContinuableError",
    "RunNotFoundError",
    "StopAgentRun",
]


class AgentRunException(Exception):
    """A tool's request to change the course of its run; its text is the tool's result.
    ``user_message`` (a user message), ``agent_message`` (an assistant message) and
    ``messages`` (`Message`s or their dicts) are added to the run's conversation, in that
    order, after the tool's result; ``stop_execution`` ends the run after this tool call."""

    user_message: str | Message | None
    agent_message: str | Message | None
    messages: list[dict[str, Any] | Message] | None
    stop_execution: bool
    type: str
    error_id: str

    def __init__(
        self,
        exc: Any,
        user_message: str | Message | None = None,
        agent_message: str | Message | None = None,
        messages: list[dict[str, Any] | Message] | None = None,
        stop_execution: bool = False,
    ) -> None:
        super().__init__(exc)
        self.user_message = user_message
        self.agent_message = agent_message
        self.messages = messages
        self.stop_execution = stop_execution
        self.type = "agent_run_error"
        self.error_id = "agent_run_error"


class RetryAgentRun(AgentRunException):
    """The model gets this message as the tool's result and tries again."""

    def __init__(
        self,
        exc: Any,
        user_message: str | Message | None = None,
        agent_message: str | Message | None = None,
        messages: list[dict[str, Any] | Message] | None = None,
    ) -> None:
        super().__init__(exc, user_message, agent_message, messages, stop_execution=False)
        self.error_id = "retry_agent_run_error"


class StopAgentRun(AgentRunException):
    """The run ends cleanly after this tool call, its message as the reply."""

    def __init__(
        self,
        exc: Any,
        user_message: str | Message | None = None,
        agent_message: str | Message | None = None,
        messages: list[dict[str, Any] | Message] | None = None,
    ) -> None:
        super().__init__(exc, user_message, agent_message, messages, stop_execution=True)
        self.error_id = "stop_agent_run_error"


class RunCancelledException(Exception):
    """A run was cancelled (`ferrule.run.cancel.cancel_run`) while it ran."""

    type: str
    error_id: str

    def __init__(self, message: str = "Operation cancelled by user") -> None:
        super().__init__(message)
        self.type = "run_cancelled_error"
        self.error_id = "run_cancelled_error"


class RetryableModelProviderError(Exception):
    """A model's reply that is worth one more try with guidance: ``original_error`` is
    what went wrong, ``retry_guidance_message`` what the model is told before it tries
    again."""

    original_error: str | None
    retry_guidance_message: str | None

    def __init__(
        self, original_error: str | None = None, retry_guidance_message: str | None = None
    ) -> None:
        super().__init__(original_error, retry_guidance_message)
        self.original_error = original_error
        self.retry_guidance_message = retry_guidance_message


class PathSecurityError(AgnoError):
    """A path outside what the host allowed (a toolkit's base directory)."""

    kind = "path_security_error"
    default_status = 400

    def __init__(self, message: str = "Path security violation") -> None:
        super().__init__(message, 400)


class RunNotFoundError(RuntimeError):
    """No run of this id in the session (``continue_run(run_id=...)``)."""


class RunNotContinuableError(ValueError):
    """A run that cannot be continued from where it is (it completed, or was cancelled)."""
