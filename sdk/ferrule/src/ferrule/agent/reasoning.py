"""The Agent reference's second models: a ``reasoning_model`` that thinks first, its
reasoning put into the context before the main model answers, and a ``parser_model``
that turns the main model's free reply into the ``output_schema``; and the steps of
second models a run takes only when the agent asks for them (`second_model_steps`): its
tool results compressed (`compression`), follow-up prompts suggested (`followups`), the
output written by an ``output_model`` (`output_model`).

Both are defined once on the agent's runtime (like the memory manager's model) and
deleted with the agent; a `LangModel` is used as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ferrule_kit.content.messages import Message, converter
from ferrule_kit.models.lm import MessageAccumulator

from ..compression.manager import CompressionManager
from ..metrics import ModelType, add_helper_metrics, add_model_usage
from .compression import compress_tool_results
from .deps import SecondModels
from .failed_runs import raise_failed
from .followups import suggest_followups
from .output_model import write_output
from .reasoning_steps import reason_in_steps, reasons_in_steps
from .sinks import model_names

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
    add_model_usage(
        run.metrics, ModelType.REASONING_MODEL, *model_names(lm.model), accumulator.usage
    )
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
    parsed = raise_failed(await helper.arun([Message("user", reply)]))
    add_helper_metrics(run.metrics, ModelType.PARSER_MODEL, parsed.metrics)
    return run.output.parse(parsed.content)


class SecondModelView(Protocol):
    """The settings of the steps of second models, as the agent holds them now."""

    reasoning_model: Any
    reasoning_agent: Any
    reasoning_min_steps: int
    reasoning_max_steps: int
    parser_model: Any
    parser_model_prompt: str | None
    output_retries: int
    compress_tool_results: bool
    compression_manager: CompressionManager | None
    followups: bool
    num_followups: int
    followup_model: Any
    output_model: Any
    output_model_prompt: str | None
    use_json_mode: bool
    structured_outputs: bool | None


def second_model_steps(agent: SecondModelView, models: SecondModels) -> dict[str, Any]:
    """`deps.RunDeps`' steps of second models for a run of ``agent``: ``reason``,
    ``parse_reply``, ``compress``, ``suggest_followups`` and ``write_output`` (None for one
    it does not take)."""
    steps: dict[str, Any] = dict.fromkeys(
        ("reason", "parse_reply", "compress", "suggest_followups", "write_output")
    )
    if reasons_in_steps(agent):

        async def reasoning_in_steps(run: RunState, sink: Sink) -> None:
            await reason_in_steps(models, agent, run, sink)

        steps["reason"] = reasoning_in_steps
    elif agent.reasoning_model is not None:
        thinker = agent.reasoning_model

        async def reasoning(run: RunState, sink: Sink) -> None:
            await reason(models, thinker, run, sink)

        steps["reason"] = reasoning
    if agent.parser_model is not None:
        parser, prompt, retries = (
            agent.parser_model,
            agent.parser_model_prompt,
            agent.output_retries,
        )

        async def parse_reply(run: RunState, reply: str) -> Any:
            return await parse_with_model(models, parser, prompt, retries, run, reply)

        steps["parse_reply"] = parse_reply
    manager = agent.compression_manager
    if agent.compress_tool_results:
        if manager is None:  # set on the agent, as Agno does, so that its stats add up
            manager = agent.compression_manager = CompressionManager()
        if manager.compress_tool_results:
            chosen = manager

            async def compress(run: RunState, sink: Sink, tools: list[dict[str, Any]]) -> None:
                await compress_tool_results(models, chosen, run, sink, tools)

            steps["compress"] = compress
    if agent.followups:
        model, count = agent.followup_model, agent.num_followups

        async def followups(run: RunState, sink: Sink) -> None:
            await suggest_followups(models, model, count, run, sink)

        steps["suggest_followups"] = followups
    if agent.output_model is not None:
        writer, writer_prompt = agent.output_model, agent.output_model_prompt
        json_mode = agent.use_json_mode and not agent.structured_outputs

        async def output(run: RunState, sink: Sink) -> Message:
            return await write_output(models, writer, writer_prompt, json_mode, run, sink)

        steps["write_output"] = output
    return steps
