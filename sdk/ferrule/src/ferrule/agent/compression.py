"""The turn loop's compression step (Agno's ``compress_tool_results``): before each model
request, the run's tool results are compressed by the agent's `CompressionManager` when
it says they are due (`CompressionManager.is_due`), and the model reads each compressed
one in place of the original from then on; the run's own messages keep the originals.

A compression request is one call of the compression model (the manager's ``model``, else
the agent's own) with the manager's instructions as its system message, made on the
agent's runtime as its other second models are (`deps.SecondModels`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs
from ferrule_kit.content.messages import Message, TextPart, converter
from ferrule_kit.models.lm import MessageAccumulator

from ..compression.manager import CompressionManager, estimated_tokens
from ..metrics import ModelType, add_model_usage
from .events import CompressionCompletedEvent, CompressionStartedEvent
from .sinks import model_names

if TYPE_CHECKING:
    from .deps import SecondModels
    from .sinks import Sink
    from .state import RunState


async def compress_tool_results(
    models: SecondModels,
    manager: CompressionManager,
    run: RunState,
    sink: Sink,
    tools: list[dict[str, Any]],
) -> None:
    """Compress the run's tool results not compressed yet when ``manager`` says they are
    due, telling ``sink`` (`CompressionStartedEvent`, `CompressionCompletedEvent` with the
    manager's stats)."""
    waiting = [
        i for i, m in enumerate(run.messages) if m.role == "tool" and i not in run.compressed
    ]
    if not waiting:
        return
    for message in run.messages[len(run.wire) :]:  # the request as it would go now
        run.wire.append(converter.unstructure(message))
    tokens = None
    if manager.compress_token_limit is not None:
        tokens = estimated_tokens(json.dumps(run.wire) + json.dumps(tools))
    if not manager.is_due(len(waiting), tokens):
        return
    sink.announce(CompressionStartedEvent)
    names = {
        call.id: call.name for m in run.messages if m.role == "assistant" for call in m.tool_calls
    }
    lm = await models.model("compression", manager.model)
    model = model_names(lm.model)

    async def ask(system: str, user: str) -> str | None:
        inputs = {"messages": [converter.unstructure(m) for m in asked(system, user)]}
        accumulator = MessageAccumulator()
        stream = models.runtime.acall_iter_method(lm.name, "infer", inputs)
        try:
            async for item in stream:
                accumulator.add(item)
        finally:
            await stream.aclose()
        add_model_usage(run.metrics, ModelType.COMPRESSION_MODEL, *model, accumulator.usage)
        return accumulator.message().text or None

    results = [
        (names.get(run.messages[i].tool_call_id or ""), run.messages[i].text) for i in waiting
    ]
    shortened = await manager.compress_results(results, ask)
    for index, short in zip(waiting, shortened, strict=True):
        message = run.messages[index]
        # a failed one goes as it is, and is not tried again
        run.compressed[index] = message.text if short is None else short
        if short is not None:
            sent = attrs.evolve(message, contents=[TextPart(short)])
            run.wire[index] = converter.unstructure(sent)
    stats = manager.stats
    sink.announce(
        CompressionCompletedEvent,
        tool_results_compressed=stats.get("tool_results_compressed"),
        original_size=stats.get("original_size"),
        compressed_size=stats.get("compressed_size"),
    )


def asked(system: str, user: str) -> list[Message]:
    return [Message("system", system), Message("user", user)]
