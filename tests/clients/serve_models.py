"""Models of the `ferrule serve` the client tests start (``--plugin serve_models:plugin``,
imported by the server process): ``tool-bot``, the test model replying through
`tool_bot`, which calls a tool whenever it is given some, and answers from the tool's
result."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import hookimpl
from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.lmspec import ModelRoute
from ferrule_testmodel.model import example_instance

#: What ``tool-bot`` reasons before calling a tool, and before answering from its result.
CALL_REASONING = "I should ask the tool."
ANSWER_REASONING = "The tool answered."


def tool_bot(inputs: InferInput) -> dict[str, Any]:
    """A tool's result: ``The tool said: <results>``. Tools offered (and not refused by
    ``tool_choice``): a call of the named tool, else the first, with arguments made from
    the last user message. Otherwise the test model's echo."""
    last = inputs.messages[-1]
    if last.role == "tool":
        results = []
        for message in reversed(inputs.messages):
            if message.role != "tool":
                break
            results.insert(0, message.text)
        return {"text": "The tool said: " + "; ".join(results), "reasoning": ANSWER_REASONING}
    user = next(m for m in reversed(inputs.messages) if m.role == "user")
    if inputs.tools and inputs.tool_choice != "none":
        name = inputs.forced_tool
        tool = next(t for t in inputs.tools if name in (None, t.function.name))
        arguments = example_instance(tool.function.parameters, user.text)
        return {
            "tool_calls": [{"name": tool.function.name, "arguments": arguments}],
            "reasoning": CALL_REASONING,
        }
    if inputs.output_schema is not None:
        return {"output": example_instance(inputs.output_schema, user.text)}
    return {"text": user.text, "reasoning": f"I repeat: {user.text}"}


class ServeModels:
    @hookimpl
    def ferrule_resolve_local_model(self, model_id: str) -> ModelRoute | None:
        if model_id == "tool-bot":
            return ModelRoute("test_language_model", {"function": "serve_models:tool_bot"})
        return None


plugin = ServeModels()
