"""Fixtures the agent tests share: `langmodel`, which defines a model on a runtime as
Ailoy 0.2's `LangModel` (what ``Agent(lm)``, the Ailoy form, is built with) and deletes
it after the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from ferrule import LangModel


@pytest.fixture
def langmodel() -> Iterator[Callable[[Any, Any], LangModel]]:
    """``langmodel(rt, model)``: ``model`` defined on ``rt`` as a `LangModel`, from
    synchronous test code (deleted when the test ends)."""
    made: list[LangModel] = []

    def define(rt: Any, model: Any) -> LangModel:
        lm: LangModel = rt.sync_bridge.run(LangModel.new(model, runtime=rt))
        made.append(lm)
        return lm

    yield define
    for lm in made:
        lm.delete()
