"""`Agent`: drives a language model through tool-augmented turns and streams what happens.

    with Runtime() as rt, Agent(rt, LocalModel("Qwen/Qwen3-0.6B"), tools=[add]) as agent:
        for resp in agent.query("What is 1 + 2?"):
            agent.print(resp)

Stateful: `Agent.query` keeps the conversation (`get_messages`, `clear_messages`) and
streams `AgentResponse` deltas (``output_text``, ``reasoning``, ``tool_call``,
``tool_call_result``, ``error``, and ``paused`` when a tool waits for a human).
Which `Agent.run` an agent has is decided by how it was built (`AgnoRun`, `AiloyRun`):
Ailoy 0.2's ``Agent(lm)`` (a `LangModel` first) is stateless: its `Agent.run` takes the
whole history and streams one `MessageOutput` per finished message, keeping nothing.
Agno's ``Agent(model=...)`` (and ``Agent(model)``, ``Agent(runtime, model)``): its
`Agent.run` takes one input and returns a `RunOutput`, or streams typed events
(`ferrule.agent.events`) with ``stream=True``; with a ``db`` its runs are kept in sessions (`AgentSession`), with their
state, history, summaries and the user's memories (`MemoryManager`). `Agent.step` is
one model step whose tool requests the caller runs. Every streaming call returns an
`AgentStream`, iterable with ``for`` (on a `Runtime`) and ``async for`` (on a `Runtime`
or an `AsyncRuntime`), and awaitable for its `RunOutput`; the ``a``-prefixed names are
the same calls (`Agent.run` alone runs ahead to its `RunOutput`: `Agent.arun` does not).

Runs execute on the runtime's loop (the `Runtime`'s thread, or the caller's loop for an
`AsyncRuntime`) as one task each, so a run can be cancelled from any thread or task
(`AgentStream.cancel`, `Agent.cancel`), and a consumer that stops iterating stops its run.
"""

from typing import TYPE_CHECKING, Any

from ferrule_kit.guardrails import (
    BaseGuardrail,
    CheckTrigger,
    InputCheckError,
    OutputCheckError,
    RunInput,
)
from ferrule_kit.models.lm import FunctionDescription as ToolDescription  # Ailoy's name

from ..metrics import ModelCallMetrics, RunMetrics
from ..models.fallback import FallbackConfig
from ..models.message import Message
from ..tools import Function, Toolkit
from . import memory
from .agent import DEFAULT_STEP_INSTRUCTIONS, Agent
from .configs import AgentConfig, DocumentPolyfill, KnowledgeConfig, LangModelInferConfig
from .deltas import (
    FinishReason,
    MessageDelta,
    MessageDeltaOutput,
    PartDelta,
    PartDeltaFunction,
)
from .events import (
    FollowupsCompletedEvent,
    FollowupsStartedEvent,
    MemoryUpdateCompletedEvent,
    MemoryUpdateStartedEvent,
    ReasoningCompletedEvent,
    ReasoningStartedEvent,
    ReasoningStepEvent,
    RunCancelledEvent,
    RunCompletedEvent,
    RunContentEvent,
    RunContinuedEvent,
    RunErrorEvent,
    RunEvent,
    RunOutputEvent,
    RunPausedEvent,
    RunStartedEvent,
    ToolCallCompletedEvent,
    ToolCallStartedEvent,
)
from .fallback import FallbackModel
from .followups import Followups
from .langmodel import CacheProgress, LangModel, default_runtime
from .memory import MemoryManager
from .prompt import prompt_parts
from .results import (
    AgentResponse,
    MessageOutput,
    ResponseType,
    RunOutput,
    RunStatus,
    StepResult,
    ToolConfirmation,
)
from .run_errors import (
    FallbackModelsFailedError,
    HookError,
    OutputValidationError,
    ToolCallLimitError,
    UnknownRunError,
    UsageLimitExceeded,
)
from .runs import AgnoRun, AiloyRun
from .stream import AgentStream
from .usage import UsageLimits

if TYPE_CHECKING:
    from ..session.agent import AgentSession

memory.agent_class = Agent  # a standalone MemoryManager's memory model runs as an Agent


def __getattr__(name: str) -> Any:
    # Agno's AgentSession (what `Agent.get_session` returns) lives in ferrule.session, which
    # imports this package: it is imported when first asked for
    if name == "AgentSession":
        from ..session.agent import AgentSession

        return AgentSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_STEP_INSTRUCTIONS",
    "Agent",
    "AgentConfig",
    "AgentResponse",
    "AgentSession",
    "AgentStream",
    "AgnoRun",
    "AiloyRun",
    "BaseGuardrail",
    "CacheProgress",
    "CheckTrigger",
    "DocumentPolyfill",
    "FallbackConfig",
    "FallbackModel",
    "FallbackModelsFailedError",
    "FinishReason",
    "Followups",
    "FollowupsCompletedEvent",
    "FollowupsStartedEvent",
    "Function",
    "HookError",
    "InputCheckError",
    "KnowledgeConfig",
    "LangModel",
    "LangModelInferConfig",
    "MemoryManager",
    "MemoryUpdateCompletedEvent",
    "MemoryUpdateStartedEvent",
    "Message",
    "MessageDelta",
    "MessageDeltaOutput",
    "MessageOutput",
    "ModelCallMetrics",
    "OutputCheckError",
    "OutputValidationError",
    "PartDelta",
    "PartDeltaFunction",
    "ReasoningCompletedEvent",
    "ReasoningStartedEvent",
    "ReasoningStepEvent",
    "ResponseType",
    "RunCancelledEvent",
    "RunCompletedEvent",
    "RunContentEvent",
    "RunContinuedEvent",
    "RunErrorEvent",
    "RunEvent",
    "RunInput",
    "RunMetrics",
    "RunOutput",
    "RunOutputEvent",
    "RunPausedEvent",
    "RunStartedEvent",
    "RunStatus",
    "StepResult",
    "ToolCallCompletedEvent",
    "ToolCallLimitError",
    "ToolCallStartedEvent",
    "ToolConfirmation",
    "ToolDescription",
    "Toolkit",
    "UnknownRunError",
    "UsageLimitExceeded",
    "UsageLimits",
    "default_runtime",
    "prompt_parts",
]
