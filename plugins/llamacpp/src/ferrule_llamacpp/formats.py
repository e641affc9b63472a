"""How a request becomes a prompt, and generated text becomes ``infer`` deltas, per model family.

- Qwen3 (GGUF architecture ``qwen3`` / ``qwen3moe``): the sdk's one Qwen3 chat format,
  `ferrule_kit.qwen3` — thinking on/off, tools, ``<tool_call>`` parsing, Qwen's sampling.
- Any other chat model: its own Jinja chat template from the GGUF metadata
  (``tokenizer.chat_template``), rendered by llama-cpp-python's `Jinja2ChatFormatter`;
  text chat only (parts with a text form, such as documents, become text). Tools are refused: such templates have no tool-call format that
  ferrule could parse back (see the README).
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError
from ferrule_kit.lm import InferInput, text_delta
from ferrule_kit.messages import message_text
from ferrule_kit.parts import TEXT
from ferrule_kit.policy import ContentPolicy

from .attributes import LlamaCppAttributes

QWEN3_ARCHITECTURES = frozenset({"qwen3", "qwen3moe"})

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

#: Qwen3 on top of Qwen's per-mode sampling (`ferrule_kit.qwen3.SAMPLING`): Qwen asks for no
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
        from ferrule_kit import qwen3

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

    def _messages(self, request: InferInput) -> list[Any]:
        out = []
        content = ContentPolicy(self._model, TEXT)  # text, and parts with a text form
        for index, message in enumerate(request.messages):
            text = message_text(message, f"$.messages[{index}]", content)
            if message.role == "tool" or message.tool_calls:
                raise InvalidInputError(
                    f"{self._model} has no tool-call format in ferrule-llamacpp; tool calls and "
                    "results need a Qwen3 model",
                    field=f"$.messages[{index}]",
                )
            out.append({"role": message.role, "content": text})
        return out

    def turn(self, request: InferInput) -> Turn:
        if request.tools:
            raise InvalidInputError(
                f"{self._model} has no tool-call format in ferrule-llamacpp; tools need a "
                "Qwen3 model (e.g. Qwen/Qwen3-0.6B)",
                field="$.tools",
            )
        try:
            rendered = self._formatter(messages=self._messages(request))
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
            parser=TextParser(),
        )
