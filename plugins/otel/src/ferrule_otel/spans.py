"""`GenAIInstrumentation`: ferrule's runs, model calls and tool calls as OpenTelemetry
spans named and attributed after the GenAI semantic conventions.

- ``invoke_agent {agent name}`` (INTERNAL), one per agent run: ``gen_ai.agent.name`` /
  ``.id``, ``gen_ai.conversation.id`` (the session), ``gen_ai.request.model``,
  ``gen_ai.provider.name``, ``ferrule.run.id`` and, at its end, the run's total
  ``gen_ai.usage.input_tokens`` / ``output_tokens``. It is the current span while the run
  goes on, so the spans below (and any a tool makes) are its children.
- ``chat {model}`` (CLIENT), one per model request: the request's parameters
  (``gen_ai.request.temperature``, ``max_tokens``, ``top_p``, ``stop_sequences``),
  ``gen_ai.output.type`` (``json`` with an output schema), the reply's
  ``gen_ai.response.finish_reasons`` and usage, and the time to first token as
  ``gen_ai.response.time_to_first_chunk`` (seconds) and as a ``gen_ai.first_chunk`` event
  at the moment it came.
- ``execute_tool {tool name}`` (INTERNAL), one per tool call: ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``gen_ai.tool.type``; the current span while the tool runs.

A failure sets the span's status to ERROR with ``error.type``: a ferrule error's ``kind``
(``model_error``, ``usage_limit_exceeded``, ...), ``cancelled``, ``tool_error`` for a tool
call the model is told failed, or the exception's class name. Messages and tool arguments
and results are recorded (``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``, ``gen_ai.tool.call.arguments`` / ``.result``, as JSON)
only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in, read at each
span's start. Media parts are recorded by type only, never their data.

Spans come from the global tracer provider (``opentelemetry.trace``), so the host's SDK
setup decides where they go; while none is configured, no span is started at all.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import ProxyTracerProvider, SpanKind, Status, StatusCode

from .ondemand import UNRECORDED, _Unrecorded

if TYPE_CHECKING:
    from ferrule_kit.content.messages import Message, ToolCall
    from ferrule_kit.models.lmspec import ModelRoute

#: ``gen_ai.provider.name`` for ferrule's provider plugins, where the convention names it
#: differently; other component types give their name without ``_language_model``.
PROVIDERS = {"gemini": "gcp.gemini", "xai": "x_ai"}

#: The request parameters recorded, ferrule's wire name -> the attribute.
REQUEST_PARAMETERS = {
    "temperature": "gen_ai.request.temperature",
    "max_tokens": "gen_ai.request.max_tokens",
    "top_p": "gen_ai.request.top_p",
    "seed": "gen_ai.request.seed",
}

CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: The values that turn content capture on: the older boolean and the newer modes that
#: record on spans.
CAPTURE_ON = frozenset({"true", "span_only", "span_and_event"})


def capture_content() -> bool:
    return os.environ.get(CAPTURE_VARIABLE, "").strip().lower() in CAPTURE_ON


def provider_name(route: ModelRoute) -> str:
    name = route.component_type.removesuffix("_language_model")
    return PROVIDERS.get(name, name)


def request_model(route: ModelRoute) -> str | None:
    model = route.attributes.get("model")
    return model if isinstance(model, str) else None


def error_type(exc: BaseException) -> str:
    kind = getattr(exc, "kind", None)
    if isinstance(kind, str):
        return kind
    if isinstance(exc, GeneratorExit) or type(exc).__name__ == "CancelledError":
        return "cancelled"
    return type(exc).__name__


def _part(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "content": part.get("text", "")}
    return {"type": kind}  # media: its type only, never its bytes or URL


def semconv_message(wire: Mapping[str, Any]) -> dict[str, Any]:
    """One message of ferrule's wire in the conventions' message shape (role, parts)."""
    role = wire.get("role")
    parts = [{"type": "reasoning", "content": r.get("text", "")} for r in wire.get("reasoning", ())]
    if role == "tool":
        text = "".join(
            p.get("text", "") for p in wire.get("content", ()) if p.get("type") == "text"
        )
        parts.append(
            {"type": "tool_call_response", "id": wire.get("tool_call_id"), "response": text}
        )
    else:
        parts.extend(_part(p) for p in wire.get("content", ()))
    for call in wire.get("tool_calls", ()):
        function = call.get("function", {})
        parts.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    return {"role": role, "parts": parts}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def set_messages(span: trace.Span, messages: Sequence[Mapping[str, Any]]) -> None:
    """``gen_ai.system_instructions`` and ``gen_ai.input.messages`` from wire messages."""
    system = [m for m in messages if m.get("role") == "system"]
    if system:
        parts = [_part(p) for m in system for p in m.get("content", ())]
        span.set_attribute("gen_ai.system_instructions", _dumps(parts))
    others = [semconv_message(m) for m in messages if m.get("role") != "system"]
    span.set_attribute("gen_ai.input.messages", _dumps(others))


def set_output(span: trace.Span, message: Message, finish_reason: str | None) -> None:
    from ferrule_kit.content.messages import converter

    output = semconv_message(converter.unstructure(message))
    if finish_reason is not None:
        output["finish_reason"] = finish_reason
    span.set_attribute("gen_ai.output.messages", _dumps([output]))


def set_error(span: trace.Span, kind: str, description: str) -> None:
    span.set_attribute("error.type", kind)
    span.set_status(Status(StatusCode.ERROR, description))


class _CurrentSpan:
    """A span made the current one from its start until `finish` (same task)."""

    def __init__(self, span: trace.Span, capture: bool) -> None:
        self.span = span
        self.capture = capture
        self.token = otel_context.attach(trace.set_span_in_context(span))

    def _end(self) -> None:
        otel_context.detach(self.token)
        self.span.end()


class RunSpan(_CurrentSpan):
    def finish(
        self,
        *,
        status: str,
        output: Message | None,
        input_tokens: int,
        output_tokens: int,
        exception: BaseException | None,
    ) -> None:
        span = self.span
        span.set_attribute("ferrule.run.status", status)
        span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
        if exception is not None:
            set_error(span, error_type(exception), str(getattr(exception, "message", exception)))
        if self.capture and output is not None:
            set_output(span, output, None)
        self._end()


class ToolCallSpan(_CurrentSpan):
    def finish(self, *, result: str | None, error: str | None) -> None:
        span = self.span
        if error is not None:
            set_error(span, "tool_error", error)
        if self.capture and result is not None:
            span.set_attribute("gen_ai.tool.call.result", result)
        self._end()


class ModelCallSpan:
    """Not made current: the model's stream may be read on after its caller moved on
    (``ferrule serve`` passes it to the client), and nothing nests in it."""

    def __init__(self, span: trace.Span, capture: bool) -> None:
        self.span = span
        self.capture = capture
        self.start_ns = time.time_ns()

    def finish(
        self,
        *,
        message: Message | None,
        finish_reason: str | None,
        usage: Mapping[str, int] | None,
        time_to_first_token: float | None,
        exception: BaseException | None,
    ) -> None:
        span = self.span
        if time_to_first_token is not None:
            span.set_attribute("gen_ai.response.time_to_first_chunk", time_to_first_token)
            span.add_event(
                "gen_ai.first_chunk",
                timestamp=self.start_ns + int(time_to_first_token * 1e9),
            )
        if finish_reason is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
        if usage:
            for key in ("input_tokens", "output_tokens"):
                if key in usage:
                    span.set_attribute(f"gen_ai.usage.{key}", usage[key])
        if exception is not None:
            set_error(span, error_type(exception), str(getattr(exception, "message", exception)))
        if self.capture and message is not None:
            set_output(span, message, finish_reason)
        span.end()


class GenAIInstrumentation:
    """What ferrule-otel's ``ferrule_instrumentation`` hook returns (see the module docstring)."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None) -> None:
        from importlib.metadata import version

        self.tracer = trace.get_tracer(
            "ferrule_otel", version("ferrule-otel"), tracer_provider=tracer_provider
        )
        self.follows_global = tracer_provider is None

    def _unconfigured(self) -> bool:
        """No tracer provider is set (yet): nothing would record, so start nothing. The
        global provider is looked up each time, so one a host sets later is followed."""
        return self.follows_global and isinstance(trace.get_tracer_provider(), ProxyTracerProvider)

    def start_run(
        self,
        *,
        run_id: str,
        agent_name: str | None,
        agent_id: str | None,
        conversation_id: str | None,
        route: ModelRoute,
        messages: Sequence[Message],
    ) -> RunSpan | _Unrecorded:
        if self._unconfigured():
            return UNRECORDED
        span = self.tracer.start_span(
            f"invoke_agent {agent_name}" if agent_name else "invoke_agent", kind=SpanKind.INTERNAL
        )
        if not span.is_recording():
            return UNRECORDED
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": provider_name(route),
            "ferrule.run.id": run_id,
        }
        model = request_model(route)
        for key, value in (
            ("gen_ai.agent.name", agent_name),
            ("gen_ai.agent.id", agent_id),
            ("gen_ai.conversation.id", conversation_id),
            ("gen_ai.request.model", model),
        ):
            if value is not None:
                attributes[key] = value
        span.set_attributes(attributes)
        capture = capture_content()
        if capture:
            from ferrule_kit.content.messages import converter

            set_messages(span, [converter.unstructure(m) for m in messages])
        return RunSpan(span, capture)

    def start_model_call(
        self, *, route: ModelRoute, inputs: Mapping[str, Any]
    ) -> ModelCallSpan | _Unrecorded:
        if self._unconfigured():
            return UNRECORDED
        model = request_model(route)
        span = self.tracer.start_span(f"chat {model}" if model else "chat", kind=SpanKind.CLIENT)
        if not span.is_recording():
            return UNRECORDED
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(route),
        }
        if model is not None:
            attributes["gen_ai.request.model"] = model
        for key, attribute in REQUEST_PARAMETERS.items():
            value = inputs.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                attributes[attribute] = value
        stop = inputs.get("stop")
        if stop:
            attributes["gen_ai.request.stop_sequences"] = (
                [stop] if isinstance(stop, str) else list(stop)
            )
        if inputs.get("output_schema") is not None:
            attributes["gen_ai.output.type"] = "json"
        span.set_attributes(attributes)
        capture = capture_content()
        if capture:
            set_messages(span, inputs.get("messages", ()))
        return ModelCallSpan(span, capture)

    def start_tool_call(self, *, call: ToolCall) -> ToolCallSpan | _Unrecorded:
        if self._unconfigured():
            return UNRECORDED
        span = self.tracer.start_span(f"execute_tool {call.name}", kind=SpanKind.INTERNAL)
        if not span.is_recording():
            return UNRECORDED
        span.set_attributes(
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.type": "function",
            }
        )
        capture = capture_content()
        if capture:
            span.set_attribute("gen_ai.tool.call.arguments", _dumps(call.arguments))
        return ToolCallSpan(span, capture)
