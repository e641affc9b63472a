"""The Agent reference's second models: a ``reasoning_model`` that thinks first, its
reasoning put into the context before the main model answers, and a ``parser_model``
that turns the main model's free reply into the ``output_schema``.

Both are defined once on the agent's runtime (like the memory manager's model) and
deleted with the agent; a `LangModel` is used as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ferrule_kit.lm import MessageAccumulator
from ferrule_kit.messages import Message, converter

from .deps import SecondModels

if TYPE_CHECKING:
    from .sinks import Sink
    from .state import RunState

#: The parser model's instructions when the agent gives none (``parser_model_prompt``).
PARSER_INSTRUCTIONS = (
    "You are tasked with creating a structured output from the provided user message. "
    "Reply with only the JSON value that the required schema describes, taking every fact "
    "from the message."
)


async def reason(models: SecondModels, reasoning_model: Any, run: RunState, sink: Sink) -> None:
    """Ask the reasoning model to think about the run so far (streamed as reasoning) and
    add its thoughts to the run as an assistant message in ``<thinking>`` tags (Agno's
    way), which the main model then reads."""
    lm = await models.model("reasoning", reasoning_model)
    inputs = {"messages": [converter.unstructure(m) for m in run.messages], "reasoning": True}
    accumulator = MessageAccumulator()
    streamed = False
    stream = models.runtime.acall_iter_method(lm.name, "infer", inputs)
    try:
        async for item in stream:
            accumulator.add(item)
            for part in item["message"].get("reasoning", ()):
                if part["text"]:
                    streamed = True
                    sink.reasoning(part["text"])
    finally:
        await stream.aclose()
    message = accumulator.message()
    # a model without a reasoning channel thinks in its reply
    thinking = "".join(part.text for part in message.reasoning) or message.text
    if not streamed and thinking:
        sink.reasoning(thinking)
    if thinking:
        run.messages.append(Message("assistant", f"<thinking>\n{thinking}\n</thinking>"))


async def parse_with_model(
    models: SecondModels,
    parser_model: Any,
    parser_model_prompt: str | None,
    output_retries: int,
    run: RunState,
    reply: str,
) -> Any:
    """``reply`` turned into the run's output schema by the parser model."""
    assert run.output is not None
    lm = await models.model("parser", parser_model)
    helper = models.new_agent(
        lm,
        system_message=parser_model_prompt or PARSER_INSTRUCTIONS,
        output_schema=run.output.schema,
        output_retries=output_retries,
    )
    parsed = await helper.arun([Message("user", reply)])
    return run.output.parse(parsed.content)
