"""A test model's function that fails as providers do: the retry and fallback tests'."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import FerruleError


class Failing:
    """A test model's function: fails each request with the next of ``errors`` (None:
    answers ``reply``), counting the requests."""

    def __init__(self, reply: str, errors: list[FerruleError | None]) -> None:
        self.reply, self.errors, self.requests = reply, list(errors), 0

    def __call__(self, inputs: Any) -> str:
        self.requests += 1
        error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error
        return self.reply
