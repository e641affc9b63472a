"""Agno's ``agno.knowledge.chunking.agentic``: `AgenticChunking`, chunks where a model says
the text turns to another subject.

While text is left, the model reads its next ``max_chunk_size`` characters (blank space made
single spaces) and answers with the position to cut at (a number); the chunk is the text up
to there. An answer that is not a number in range cuts at ``max_chunk_size``. A document
that fits in a chunk is its own. ``custom_prompt`` adds your instructions to the model's.
The model is an Agno model object (``OpenAIChat(id=...)``, ``Claude(...)``...), asked with
`Model.aresponse`; the default is ``OpenAIChat("gpt-5.4-mini")``.
"""

from __future__ import annotations

import importlib
from typing import Any

from ferrule_kernel import InvalidInputError

from ..document.base import Document
from .strategy import ChunkingStrategy

__all__ = ["DEFAULT_INSTRUCTIONS", "MAX_CHUNK_SIZE", "AgenticChunking"]

#: The longest chunk by default, in characters.
MAX_CHUNK_SIZE = 5000
#: What the model is asked, with ``custom_instructions``, ``max_chunk_size`` and ``text``.
DEFAULT_INSTRUCTIONS = (
    "Find the best place to end the first chunk of the text below, so that the chunk "
    "reads as one whole: at a change of subject or a paragraph's end, never mid-sentence. "
    "Answer with the character position to cut at, a number and nothing else.\n"
    "Further instructions: {custom_instructions}\n"
    "The chunk may hold at most {max_chunk_size} characters.\n"
    "Text:\n{text}"
)


def _model(model: Any) -> Any:
    if model is None:
        # Models sit above knowledge (they run on the agent's loop): this module names none
        # (the layering contract), the default is found by name when it is made.
        openai = importlib.import_module("ferrule.models.openai")
        return openai.OpenAIChat("gpt-5.4-mini")
    if isinstance(model, str) or not hasattr(model, "aresponse"):
        raise InvalidInputError(
            "model is a model object (OpenAIChat(id=...), Claude(...)...)", field="model"
        )
    return model


class AgenticChunking(ChunkingStrategy):
    """``AgenticChunking(model=OpenAIChat(id="gpt-5.4-mini"), max_chunk_size=2000)`` (see
    the module docstring)."""

    model: Any
    chunk_size: int
    custom_prompt: str | None

    def __init__(
        self, model: Any = None, max_chunk_size: int | None = None, custom_prompt: str | None = None
    ) -> None:
        self.model = _model(model)
        self.chunk_size = MAX_CHUNK_SIZE if max_chunk_size is None else max_chunk_size
        self.custom_prompt = custom_prompt

    def _prompt(self, text: str) -> str:
        return DEFAULT_INSTRUCTIONS.format(
            custom_instructions=self.custom_prompt or "none",
            max_chunk_size=self.chunk_size,
            text=text[: self.chunk_size],
        )

    async def _answer(self, text: str) -> str:
        from ...models.message import Message

        answer = await self.model.aresponse([Message(role="user", content=self._prompt(text))])
        return str(getattr(answer, "content", "") or "")

    def _cut_at(self, answer: str) -> int:
        try:
            position = int(answer.strip())
        except ValueError:
            return self.chunk_size
        return position if 0 < position <= self.chunk_size else self.chunk_size

    def chunk(self, document: Document) -> list[Document]:
        from ...shared_runtime import default_runtime

        chunks: list[Document] = default_runtime().sync_bridge.run(self.achunk(document))
        return chunks

    async def achunk(self, document: Document) -> list[Document]:
        if len(document.content) <= self.chunk_size:
            return [document]
        left = self.clean_text(document.content).strip()
        pieces = []
        while left:
            at = self._cut_at(await self._answer(left))
            pieces.append(left[:at].strip())
            left = left[at:].strip()
        return self._chunks(document, [p for p in pieces if p])
