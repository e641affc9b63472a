"""Agno's ``output_model``: once the agent's model has answered (its tool calls done), a
second model writes the run's output from the same conversation: the run's messages but
the model's last reply, under the ``output_model_prompt`` as system message (in place
of the agent's, or first when it has none). Its reply is the run's content (parsed into
the ``output_schema`` when there is one: the schema is sent to it as to the main model);
the run's messages keep the main model's reply, as Agno's do.

While it writes, the run streams `OutputModelResponseStartedEvent`, its text as the run's
content, then `OutputModelResponseCompletedEvent`; the main model's text streams as
`IntermediateRunContentEvent` (with ``stream_events``), not as the content.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ferrule_kit.content.messages import Message, converter
from ferrule_kit.models.lm import MessageAccumulator

from ..metrics import ModelCallMetrics, ModelType, add_model_usage
from ..models import model_request
from .events import OutputModelResponseCompletedEvent, OutputModelResponseStartedEvent
from .model_settings import StructuredOutputs
from .sinks import model_names

if TYPE_CHECKING:
    from .deps import SecondModels
    from .sinks import Sink
    from .state import RunState


def output_model_messages(messages: list[Message], prompt: str | None) -> list[Message]:
    """What the output model reads: ``messages`` but the last (the main model's reply),
    with ``prompt`` as the system message when given."""
    kept = list(messages[:-1])
    if prompt is None:
        return kept
    for index, message in enumerate(kept):
        if message.role == "system":
            kept[index] = Message("system", prompt)
            return kept
    return [Message("system", prompt), *kept]


async def write_output(
    models: SecondModels,
    output_model: Any,
    prompt: str | None,
    use_json_mode: bool,
    run: RunState,
    sink: Sink,
) -> Message:
    """The output model's reply to the run so far (streamed to ``sink`` as the run's
    content), its call counted in the run's metrics (under ``"output_model"``)."""
    sink.announce(OutputModelResponseStartedEvent)
    lm = await models.model("output", output_model)
    inputs = model_request(
        lm.model,
        {
            "messages": [
                converter.unstructure(m) for m in output_model_messages(run.messages, prompt)
            ]
        },
    )
    if run.output is not None:
        structured = StructuredOutputs.of(lm.model)
        inputs["output_schema"] = structured.schema_sent(run.output.schema, use_json_mode)
    accumulator = MessageAccumulator()
    metrics = ModelCallMetrics()
    start = time.perf_counter()
    stream = models.runtime.acall_iter_method(lm.name, "infer", inputs)
    try:
        async for item in stream:
            if metrics.time_to_first_token is None:
                metrics.time_to_first_token = time.perf_counter() - start
            accumulator.add(item)
            content = item["message"].get("content")
            text = content[0].get("text") if content else None
            if text:
                sink.text(text)
    finally:
        await stream.aclose()
    metrics.latency = time.perf_counter() - start
    usage = accumulator.usage or {}
    metrics.input_tokens = usage.get("input_tokens", 0)
    metrics.output_tokens = usage.get("output_tokens", 0)
    metrics.reasoning_tokens = usage.get("reasoning_tokens")
    metrics.finish_reason = accumulator.finish_reason
    run.metrics.model_calls.append(metrics)
    add_model_usage(run.metrics, ModelType.OUTPUT_MODEL, *model_names(lm.model), usage)
    sink.announce(OutputModelResponseCompletedEvent)
    return accumulator.message()
