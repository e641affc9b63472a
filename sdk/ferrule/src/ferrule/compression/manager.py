"""Agno's ``agno.compression.manager``: `CompressionManager`, which has a model rewrite
long tool results into short ones so that a run's later model requests carry less.

An agent with ``compress_tool_results=True`` (or a ``compression_manager``) calls it
before each model request of a run: when the run holds ``compress_tool_results_limit``
tool results not compressed yet (3 when no limit is set), or when the request would take
``compress_token_limit`` tokens or more, every tool result not compressed yet is sent to
the manager's ``model`` (the agent's own when None), each in a request of its own and all
at once, with ``compress_tool_call_instructions`` (`DEFAULT_COMPRESSION_PROMPT` when None)
as the system message. The model sees each compressed result in place of the original for
the rest of the run; the run's messages (``RunOutput.messages``, the stored session) keep
the originals. A result whose compression fails is sent as it is, and not tried again.

``stats`` adds up over every run of the manager: ``tool_results_compressed``,
``original_size`` and ``compressed_size`` (characters), what `CompressionCompletedEvent`
reports. `compress` / `acompress` do the same to a list of Agno `Message`s, setting each
tool message's ``compressed_content``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs
from ferrule_kernel import FerruleError, InvalidInputError, RequestCancelledError, get_logger

__all__ = ["DEFAULT_COMPRESSION_PROMPT", "CompressionManager"]

log = get_logger("ferrule.compression")

#: The compression model's instructions when the manager is given none.
DEFAULT_COMPRESSION_PROMPT = """\
You shorten the result of a tool call so that an assistant can keep working with it in less
space. Reply with the shortened result only.

Keep every fact the assistant may need: numbers, amounts, prices, measurements, dates and
times (written briefly), names of people, organisations, products and places, identifiers,
URLs, versions and codes, and any quotation or source the task may rely on.

Shorten descriptions to their key attributes, explanations to their point, lists to the
items that matter for the task.

Leave out introductions and conclusions, hedging, commentary about the result itself,
markup and JSON punctuation, repetition, and background the task does not need.

Be brief, and lose no fact."""

#: What the model of one compression request is asked (the system message, the user's).
Ask = Callable[[str, str], Awaitable[str | None]]


def _limit(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(
            f"{attribute.name} must be a whole number of at least 1, not {value!r}",
            field=attribute.name,
        )


def _text(_: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(
            f"{attribute.name} must be a string, not {type(value).__name__}",
            field=attribute.name,
        )


@attrs.define
class CompressionManager:
    """When and how a run's tool results are compressed (see the module docstring)."""

    #: The model that compresses (an Agno model class such as ``OpenAIChat``, a ferrule
    #: ``APIModel`` / ``LocalModel`` or `LangModel`); None: the agent's own.
    model: Any = None
    compress_tool_results: bool = attrs.field(default=True)
    compress_tool_results_limit: int | None = attrs.field(default=None, validator=_limit)
    compress_token_limit: int | None = attrs.field(default=None, validator=_limit)
    compress_tool_call_instructions: str | None = attrs.field(default=None, validator=_text)
    stats: dict[str, Any] = attrs.Factory(dict)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.compress_tool_results, bool):
            raise InvalidInputError(
                "compress_tool_results must be True or False", field="compress_tool_results"
            )
        if self.compress_tool_results_limit is None and self.compress_token_limit is None:
            self.compress_tool_results_limit = 3

    # -- the decision and the work, over any run's tool results ---------------------------

    def is_due(self, uncompressed: int, tokens: int | None) -> bool:
        """Whether to compress now: ``uncompressed`` tool results waiting, the request
        taking ``tokens`` (None: not counted)."""
        if not self.compress_tool_results:
            return False
        if self.compress_token_limit is not None and tokens is not None:
            if tokens >= self.compress_token_limit:
                return True
        limit = self.compress_tool_results_limit
        return limit is not None and uncompressed >= limit

    async def compress_results(
        self, results: Sequence[tuple[str | None, str]], ask: Ask
    ) -> list[str | None]:
        """Each of ``results`` (a tool's name, its result as text) compressed by ``ask``,
        all at once; None for one whose compression failed (the result stays as it is).
        ``stats`` counts the compressed ones."""
        instructions = self.compress_tool_call_instructions or DEFAULT_COMPRESSION_PROMPT

        async def one(name: str | None, text: str) -> str | None:
            request = f"Tool Results to Compress: Tool: {name or 'unknown'}\n{text}\n"
            try:
                return await ask(instructions, request)
            except RequestCancelledError:
                raise
            except FerruleError as exc:
                log.warning("tool_result_compression_failed", tool=name, error=exc.kind)
                return None

        compressed = await asyncio.gather(*(one(name, text) for name, text in results))
        for (_, text), short in zip(results, compressed, strict=True):
            if short:
                self.stats["tool_results_compressed"] = (
                    self.stats.get("tool_results_compressed", 0) + 1
                )
                self.stats["original_size"] = self.stats.get("original_size", 0) + len(text)
                self.stats["compressed_size"] = self.stats.get("compressed_size", 0) + len(short)
        return [short or None for short in compressed]

    # -- Agno's calls, on a list of Agno Messages ------------------------------------------

    def should_compress(
        self,
        messages: list[Any],
        tools: list[Any] | None = None,
        model: Any = None,
        response_format: Any = None,
    ) -> bool:
        """Whether ``messages`` (Agno `Message`s) are due for compression; ``model`` (an
        Agno model class) counts their tokens when there is a ``compress_token_limit``."""
        return bool(_wait(self.ashould_compress(messages, tools, model, response_format)))

    async def ashould_compress(
        self,
        messages: list[Any],
        tools: list[Any] | None = None,
        model: Any = None,
        response_format: Any = None,
    ) -> bool:
        tokens = None
        if self.compress_token_limit is not None and model is not None:
            tokens = await model.acount_tokens(messages, tools, response_format)
        return self.is_due(len(_uncompressed(messages)), tokens)

    def compress(self, messages: list[Any], run_metrics: Any = None) -> None:
        """Compress every tool message of ``messages`` not compressed yet (its
        ``compressed_content`` set), with the manager's model (an Agno model class)."""
        _wait(self.acompress(messages, run_metrics))

    async def acompress(self, messages: list[Any], run_metrics: Any = None) -> None:
        if not self.compress_tool_results:
            return
        waiting = _uncompressed(messages)
        if not waiting:
            return
        model = self.model
        if not hasattr(model, "aresponse"):
            raise InvalidInputError(
                "CompressionManager.compress needs model= set to a model class "
                "(OpenAIChat(...), Claude(...)...)",
                field="model",
            )
        from ..models.message import Message

        async def ask(system: str, user: str) -> str | None:
            asked = [Message(role="system", content=system), Message(role="user", content=user)]
            response = await model.aresponse(messages=asked)
            return response.content if isinstance(response.content, str) else None

        results = [(m.tool_name, _text_of(m)) for m in waiting]
        for message, short in zip(waiting, await self.compress_results(results, ask), strict=True):
            message.compressed_content = short if short is not None else _text_of(message)


def _uncompressed(messages: list[Any]) -> list[Any]:
    return [m for m in messages if m.role == "tool" and m.compressed_content is None]


def _text_of(message: Any) -> str:
    content = message.content
    return content if isinstance(content, str) else str(content or "")


def estimated_tokens(text: str) -> int:
    """A request's tokens, estimated as ferrule's `Model.count_tokens` does: a token per
    four characters."""
    return math.ceil(len(text) / 4)


def _wait(coroutine: Any) -> Any:
    from ..shared_runtime import default_runtime

    return default_runtime().sync_bridge.run(coroutine)
