"""Fixtures of the idiom programs: each test here is our own program of one idiom of Ailoy's
README and guides (tags v0.1.0 and v0.2.5), spelled as the guide spells it with ``ailoy``
replaced by ``ferrule``, and checked on what it did.

Three kinds of model stand in for the guides' ones, offline:

- the guides' Qwen3 ids run the offline SmolLM2 (the aliases of ``../conftest.py``), where
  the idiom's outcome is something a 135M model does (answer, stream, stop);
- a scripted model (ferrule-testmodel) where the outcome needs a model that follows the
  prompt (calls a tool, thinks, recalls): `Script` records every request it was sent, so
  the test checks what reached the model, not only what came back;
- the providers of the API idioms are loopback servers speaking their wire
  (``loopback_provider`` of ``../conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import ferrule as ai
import pytest
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import InferInput
from ferrule_testmodel import TestModel


@attrs.define
class Script:
    """A scripted model's turns, answered in order, and every request it was sent."""

    turns: list[Any]
    requests: list[InferInput] = attrs.field(factory=list)

    def answer(self, request: InferInput) -> Any:
        self.requests.append(request)
        if len(self.requests) > len(self.turns):
            raise AssertionError(f"the model was asked {len(self.requests)} times")
        return self.turns[len(self.requests) - 1]

    def model(self) -> TestModel:
        return TestModel(function=self.answer)

    def seen(self, index: int = -1) -> list[Message]:
        """The messages of request ``index``."""
        return self.requests[index].messages

    def seen_text(self, index: int = -1) -> str:
        """Every text of request ``index``, one message a line (``role: text``)."""
        return "\n".join(f"{m.role}: {m.text}" for m in self.seen(index))


@pytest.fixture
def runtime() -> Iterator[ai.Runtime]:
    with ai.Runtime() as rt:
        yield rt
