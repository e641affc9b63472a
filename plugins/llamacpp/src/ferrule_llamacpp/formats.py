"""How a request becomes a prompt, and generated text becomes ``infer`` deltas, per model family.

- Qwen3 (GGUF architecture ``qwen3`` / ``qwen3moe``): the sdk's one Qwen3 chat format,
  `ferrule_kit.models.qwen3` — thinking on/off, tools, ``<tool_call>`` parsing, Qwen's sampling.
- SmolLM2 (GGUF ``general.basename`` ``smollm2``): its own chat template, with SmolLM2's
  function-calling format around it — the tools as a JSON list in ``<tools>`` in the system
  turn, calls as a JSON list in ``<tool_call>``, results as ``<tool_response>`` user turns.
- Any other chat model: its own Jinja chat template from the GGUF metadata
  (``tokenizer.chat_template``), rendered by llama-cpp-python's `Jinja2ChatFormatter`;
  text chat only (parts with a text form, such as documents, become text). Tools are refused: such templates have no tool-call format that
  ferrule could parse back (see the README).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import message_text
from ferrule_kit.content.parts import TEXT
from ferrule_kit.content.policy import ContentPolicy
from ferrule_kit.errors import ModelError
from ferrule_kit.models.lm import InferInput, text_delta

from .attributes import LlamaCppAttributes

QWEN3_ARCHITECTURES = frozenset({"qwen3", "qwen3moe"})
#: GGUF ``general.basename``s of models that take `SmolLM2Format`'s tool calls.
SMOLLM2_BASENAMES = frozenset({"smollm2"})

#: The system turn of SmolLM2-Instruct's function-calling format (its model card: tuned on
#: Argilla's Synth-APIGen data; the instruction as Ollama's ``smollm2`` template gives it):
#: the tools as one JSON list; the calls asked for as one JSON list, ``[]`` for none.
SMOLLM2_TOOLS_PROMPT = (
    "You are an expert in composing functions. You are given a question and a set of "
    "possible functions.\nBased on the question, you will need to make one or more "
    "function/tool calls to achieve the purpose.\nIf none of the functions can be used, "
    "point it out and refuse to answer.\nIf the given question lacks the parameters "
    "required by the function, also point it out.\nYou have access to the following "
    "tools:\n<tools>{tools}</tools>\nThe output MUST strictly adhere to the following "
    "format, and NO other text MUST be included.\nThe example format is as follows. Please "
    "make sure the parameter type is correct. If no function call is needed, please make "
    "the tool calls an empty list '[]'.\n<tool_call>[\n"
    '{{"name": "func_name1", "arguments": {{"argument1": "value1", "argument2": "value2"}}}},'
    "\n(more tool calls as required)\n]</tool_call>"
)

#: The generation settings a model's defaults may give, in the order they are shown.
GENERATION_KEYS = ("temperature", "top_p", "top_k", "min_p", "repeat_penalty", "max_tokens")

#: For chat models that publish no recommendation of their own: llama-cpp-python's
#: create_chat_completion sampling, with llama.cpp's long-standing repeat penalty (1.1, also
#: Ollama's default: small models left at 1.0 tend to repeat a sentence until the context is
#: full) and an output cap (a reply that long is a runaway one; a request can ask for more).
CHAT_SAMPLING: dict[str, float | int] = {
    "temperature": 0.2,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
    "max_tokens": 1024,
}

#: Qwen3 on top of Qwen's per-mode sampling (`ferrule_kit.models.qwen3.SAMPLING`): Qwen asks for no
#: repeat penalty (presence_penalty is its remedy) and gives 32768 tokens as the output
#: length for most queries (thinking takes many).
QWEN3_GENERATION: dict[str, float | int] = {"repeat_penalty": 1.0, "max_tokens": 32768}

#: GGUF's own generation settings (llama.cpp's convert script writes them from a model's
#: generation_config.json) -> ours.
GGUF_SAMPLING_KEYS = {
    "general.sampling.temp": "temperature",
    "general.sampling.top_p": "top_p",
    "general.sampling.top_k": "top_k",
    "general.sampling.min_p": "min_p",
    "general.sampling.penalty_repeat": "repeat_penalty",
}


def gguf_generation(metadata: dict[str, str]) -> dict[str, float | int]:
    """The generation settings a GGUF file carries (llama-cpp-python gives its metadata as
    strings); unreadable values are skipped."""
    found: dict[str, float | int] = {}
    for key, name in GGUF_SAMPLING_KEYS.items():
        value = metadata.get(key)
        if value is None:
            continue
        try:
            found[name] = int(value) if name == "top_k" else float(value)
        except ValueError:
            continue
    return found


class StreamParser(Protocol):
    def feed(self, text: str) -> list[dict[str, Any]]: ...
    def close(self) -> list[dict[str, Any]]: ...
    @property
    def saw_tool_calls(self) -> bool: ...


@attrs.frozen
class Turn:
    """One request, ready to generate."""

    prompt: str
    stops: list[str]
    sampling: dict[str, Any]
    parser: StreamParser


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


class TextParser:
    """Generated text is the reply's text, as it comes."""

    saw_tool_calls = False

    def feed(self, text: str) -> list[dict[str, Any]]:
        return [text_delta(text)] if text else []

    def close(self) -> list[dict[str, Any]]:
        return []


def _sampling(
    defaults: dict[str, Any], attributes: LlamaCppAttributes, request: InferInput
) -> dict[str, Any]:
    """The model's defaults, under the component's attributes, under the request's."""
    sampling = dict(defaults)
    for name in GENERATION_KEYS:
        value = getattr(attributes, name)
        if value is not None:
            sampling[name] = value
    for name in ("temperature", "top_p", "max_tokens"):
        value = getattr(request, name)
        if value is not None:
            sampling[name] = value
    sampling["presence_penalty"] = attributes.presence_penalty
    return sampling


class Qwen3Format:
    """Qwen3 models: the sdk's Qwen3 chat format."""

    #: Render special tokens as text: the parser needs ``<think>`` and ``<tool_call>``.
    special_tokens = True

    def __init__(self, attributes: LlamaCppAttributes) -> None:
        self._attributes = attributes

    def turn(self, request: InferInput) -> Turn:
        from ferrule_kit.models import qwen3

        # A JSON-schema grammar constrains the whole reply, so there is no room for a
        # think block: a request with output_schema is answered without thinking.
        reasoning = request.reasoning_on and request.output_schema is None
        return Turn(
            prompt=qwen3.render_prompt(request.messages, request.tools, reasoning=reasoning),
            stops=list(qwen3.STOP_STRINGS),
            sampling=_sampling(
                {**qwen3.SAMPLING[reasoning], **QWEN3_GENERATION}, self._attributes, request
            ),
            parser=qwen3.Qwen3StreamParser(reasoning),
        )


class ChatTemplateFormat:
    """Other chat models: the GGUF's own Jinja chat template, text only."""

    special_tokens = False

    def __init__(
        self,
        attributes: LlamaCppAttributes,
        llm: Any,
        metadata: dict[str, str],
        model: str,
        generation: dict[str, float | int],
    ) -> None:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        template = attributes.chat_template or metadata.get("tokenizer.chat_template")
        if not template:
            raise ModelError(
                f"the GGUF of {model!r} has no chat template (tokenizer.chat_template); "
                "define the component with chat_template=<a Jinja chat template>",
                model=model,
            )

        def token_text(token: int) -> str:
            if token < 0:
                return ""
            return llm.detokenize([token], special=True).decode("utf-8", errors="replace")

        self._attributes = attributes
        self._model = model
        #: What this model generates with unless told otherwise: the family's defaults, the
        #: model's own (our table's), and the ones its GGUF carries.
        self.defaults = {**CHAT_SAMPLING, **generation, **gguf_generation(metadata)}
        self._formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=token_text(llm.token_eos()),
            bos_token=token_text(llm.token_bos()),
        )

    def _messages(self, request: InferInput) -> list[dict[str, str]]:
        out = []
        content = ContentPolicy(self._model, TEXT)  # text, and parts with a text form
        for index, message in enumerate(request.messages):
            text = message_text(message, f"$.messages[{index}]", content)
            if message.role == "tool" or message.tool_calls:
                raise InvalidInputError(
                    f"{self._model} has no tool-call format in ferrule-llamacpp; tool calls and "
                    "results need a Qwen3 or SmolLM2 model",
                    field=f"$.messages[{index}]",
                )
            out.append({"role": message.role, "content": text})
        return out

    def _parser(self) -> StreamParser:
        return TextParser()

    def turn(self, request: InferInput) -> Turn:
        if request.tools:
            raise InvalidInputError(
                f"{self._model} has no tool-call format in ferrule-llamacpp; tools need a "
                "Qwen3 or SmolLM2 model (e.g. Qwen/Qwen3-0.6B)",
                field="$.tools",
            )
        return self._turn(self._messages(request), request)

    def _turn(self, messages: list[Any], request: InferInput) -> Turn:
        try:
            rendered = self._formatter(messages=messages)
        except ValueError as exc:  # the template's raise_exception(...)
            raise InvalidInputError(
                f"the chat template refused the messages: {exc}", field="$.messages"
            ) from None
        # The formatter's stop string is the EOS token's text, which never appears in text
        # detokenized without special tokens: generation ends on the end-of-generation token.
        return Turn(
            prompt=rendered.prompt,
            stops=[],
            sampling=_sampling(self.defaults, self._attributes, request),
            parser=self._parser(),
        )


class SmolLM2Format(ChatTemplateFormat):
    """SmolLM2: its chat template, with its function-calling format written into the
    messages the template renders (the template itself knows no tools)."""

    def _messages(self, request: InferInput) -> list[dict[str, str]]:
        out = []
        content = ContentPolicy(self._model, TEXT)
        for index, message in enumerate(request.messages):
            text = message_text(message, f"$.messages[{index}]", content)
            if message.role == "tool":
                out.append(
                    {"role": "user", "content": f"<tool_response>\n{text}\n</tool_response>"}
                )
                continue
            if message.tool_calls:
                calls = ",\n".join(
                    _tojson({"name": call.name, "arguments": call.arguments})
                    for call in message.tool_calls
                )
                text += ("\n" if text else "") + f"<tool_call>[\n{calls}\n]</tool_call>"
            out.append({"role": message.role, "content": text})
        if request.tools:
            tools = _tojson(
                [
                    {
                        "type": tool.type,
                        "function": {
                            "name": tool.function.name,
                            "description": tool.function.description,
                            "parameters": tool.function.parameters,
                        },
                    }
                    for tool in request.tools
                ]
            )
            instruction = SMOLLM2_TOOLS_PROMPT.format(tools=tools)
            # A system message of the caller's stays, ahead of the instruction (as Qwen's
            # template keeps it ahead of its tools block), so nothing it says is lost.
            if out and out[0]["role"] == "system":
                out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + instruction}
            else:
                out.insert(0, {"role": "system", "content": instruction})
        return out

    def _parser(self) -> StreamParser:
        from ferrule_kit.models.qwen3 import Qwen3StreamParser

        return Qwen3StreamParser(reasoning=False, call_lists=True)

    def turn(self, request: InferInput) -> Turn:
        return self._turn(self._messages(request), request)
