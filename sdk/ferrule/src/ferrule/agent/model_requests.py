"""What the agent's options add to its model requests (Agno's names): ``tool_choice``,
sent with the tools (`tool_choice_sent`), and ``retries`` of a failed request
(`RetryPolicy`), ``delay_between_retries`` seconds apart, doubled after each failure with
``exponential_backoff``.

Retries count per run, as Agno's do: a run makes at most ``retries + 1`` attempts at its
model requests in all, whichever request fails. A request is tried again when the model
(or every model of a `FallbackModel`) failed; never when the run was cancelled, its
usage limits were reached, or the request itself was refused as invalid (sending it again
would be refused again)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from ferrule_kernel import InvalidInputError, RequestCancelledError, get_logger

from .run_errors import UsageLimitExceeded

if TYPE_CHECKING:
    from .state import RunState

log = get_logger("ferrule.agent")


@attrs.frozen
class RetryPolicy:
    """Agno's ``retries``, ``delay_between_retries`` and ``exponential_backoff``."""

    retries: int
    delay: float
    exponential_backoff: bool

    def delay_after(self, failures: int) -> float:
        """Seconds to wait after the ``failures``-th failure (1 for the first)."""
        return self.delay * 2 ** (failures - 1) if self.exponential_backoff else self.delay

    async def again(self, run: RunState, error: BaseException) -> bool:
        """Whether ``run`` tries the request that raised ``error`` again: when it is a
        failure worth a retry and the run has retries left; it waits first."""
        if not isinstance(error, Exception) or isinstance(
            error, (InvalidInputError, RequestCancelledError, UsageLimitExceeded)
        ):
            return False
        if run.model_retries >= self.retries:
            return False
        run.model_retries += 1
        wait = self.delay_after(run.model_retries)
        log.warning(
            "model_request_retried",
            run_id=run.id,
            attempt=run.model_retries + 1,
            attempts=self.retries + 1,
            wait=wait,
            error=type(error).__name__,
        )
        await asyncio.sleep(wait)
        return True


class RequestView(Protocol):
    """The options of the agent's model requests, as the agent holds them now."""

    tool_choice: str | dict[str, Any] | None
    retries: int
    delay_between_retries: float
    exponential_backoff: bool


def request_steps(agent: RequestView) -> dict[str, Any]:
    """`deps.RunDeps`' ``tool_choice`` and ``retry`` (a `RetryPolicy`; None with
    ``retries=0``: a failure ends the run) for a run of ``agent``."""
    retry = None
    if agent.retries:
        retry = RetryPolicy(agent.retries, agent.delay_between_retries, agent.exponential_backoff)
    return {"tool_choice": agent.tool_choice, "retry": retry}


def named_tool(choice: Any) -> str | None:
    """The tool a ``tool_choice`` names, in any of the shapes Agno's models pass on:
    OpenAI Chat's ``{"type": "function", "function": {"name": ...}}``, OpenAI Responses'
    ``{"type": "function", "name": ...}`` or Anthropic's ``{"type": "tool", "name": ...}``;
    None for any other value."""
    if not isinstance(choice, dict):
        return None
    if choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
    elif choice.get("type") == "tool":
        name = choice.get("name")
    else:
        return None
    return name if isinstance(name, str) and name else None


def tool_choice_sent(choice: str | dict[str, Any] | None, run: RunState) -> Any:
    """The ``tool_choice`` a request with tools carries (None: the model's default). A
    choice that forces a call (``"required"``, a named function) holds until the run has
    made a call: the requests after it are ``"auto"``, so that the model can answer
    instead of calling again and again. A named tool is sent in ferrule's one shape
    (OpenAI Chat's), which each provider's plugin writes in its own."""
    if choice is None or choice in ("auto", "none"):
        return choice
    if run.tool_calls_made:
        return "auto"
    name = named_tool(choice)
    return choice if name is None else {"type": "function", "function": {"name": name}}
