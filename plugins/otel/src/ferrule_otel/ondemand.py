"""`OnDemandInstrumentation`: what the hook hands out. It imports OpenTelemetry (and
`ferrule_otel.spans`) only once the process uses it: until something has imported
``opentelemetry.trace`` (a host setting its tracer provider, ``opentelemetry-instrument``,
a library that traces) no span could be recorded or parented, so each ``start_*`` returns
`UNRECORDED` after one dictionary lookup. An agent made in a process that never traces
pays neither the import nor the spans.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ferrule_kit.content.messages import Message, ToolCall
    from ferrule_kit.models.lmspec import ModelRoute

    from .spans import GenAIInstrumentation


class _Unrecorded:
    """The span of an operation nobody records."""

    def finish(self, **_: Any) -> None:
        pass


UNRECORDED = _Unrecorded()


class OnDemandInstrumentation:
    def __init__(self) -> None:
        self._spans: GenAIInstrumentation | None = None

    def spans(self) -> GenAIInstrumentation | None:
        """The span maker, once OpenTelemetry is in use here (None until then)."""
        if self._spans is None:
            if "opentelemetry.trace" not in sys.modules and not os.environ.get(
                "OTEL_PYTHON_TRACER_PROVIDER"  # a provider named by the environment
            ):
                return None
            from .spans import GenAIInstrumentation

            self._spans = GenAIInstrumentation()
        return self._spans

    def start_run(
        self,
        *,
        run_id: str,
        agent_name: str | None,
        agent_id: str | None,
        conversation_id: str | None,
        route: ModelRoute,
        messages: Sequence[Message],
    ) -> Any:
        spans = self.spans()
        if spans is None:
            return UNRECORDED
        return spans.start_run(
            run_id=run_id,
            agent_name=agent_name,
            agent_id=agent_id,
            conversation_id=conversation_id,
            route=route,
            messages=messages,
        )

    def start_model_call(self, *, route: ModelRoute, inputs: Mapping[str, Any]) -> Any:
        spans = self.spans()
        return UNRECORDED if spans is None else spans.start_model_call(route=route, inputs=inputs)

    def start_tool_call(self, *, call: ToolCall) -> Any:
        spans = self.spans()
        return UNRECORDED if spans is None else spans.start_tool_call(call=call)
