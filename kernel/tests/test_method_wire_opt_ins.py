"""`MethodSpec.array_input` and `MethodSpec.value_output`: a method that takes a bare JSON
array as its input and answers a bare JSON value (Ailoy 0.1's vector-store protocol),
opt-in per method; every other method still takes and answers JSON objects only."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidInputError,
    InvalidOutputError,
    Kernel,
    MethodSpec,
    hookimpl,
)


@attrs.frozen
class Item:
    name: str


@attrs.frozen
class AddInput:
    items: list[Item]


@attrs.frozen
class AnyInput:
    value: Any = None


class Bag:
    def __init__(self, _attributes: object) -> None:
        self.names: list[str] = []

    def add(self, inputs: AddInput) -> dict[str, Any]:
        self.names += [item.name for item in inputs.items]
        return {"count": len(self.names)}

    def clear(self, _inputs: AnyInput) -> bool:
        self.names.clear()
        return True

    def give(self, inputs: AnyInput) -> Any:
        return inputs.value

    def strict(self, inputs: AnyInput) -> Any:
        return inputs.value


@attrs.frozen
class NoAttributes:
    pass


class Bags:
    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = (
            MethodSpec("add", AddInput, blocking=False, array_input="items"),
            MethodSpec("clear", AnyInput, blocking=False, value_output=True),
            MethodSpec("give", AnyInput, blocking=False, value_output=True),
            MethodSpec("strict", AnyInput, blocking=False),
        )
        return [ComponentTypeSpec("bag", Bag, NoAttributes, methods)]


@pytest.fixture
async def kernel() -> Kernel:
    kernel = Kernel(plugins=[Bags()], load_entry_points=False)
    await kernel.define("bag", "b", {})
    return kernel


async def test_a_bare_array_fills_the_named_field(kernel: Kernel) -> None:
    assert await kernel.call_method("b", "add", [{"name": "x"}, {"name": "y"}]) == {"count": 2}
    # the object form still works
    assert await kernel.call_method("b", "add", {"items": [{"name": "z"}]}) == {"count": 3}


async def test_a_bad_array_item_is_named_by_its_path(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError) as info:
        await kernel.call_method("b", "add", [{"name": "x"}, {"nom": "y"}])
    assert "items" in info.value.message and "[1]" in info.value.message


async def test_without_the_opt_in_an_array_is_refused(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError, match="expected object, got array"):
        await kernel.call_method("b", "strict", [1, 2])


async def test_a_value_output_may_be_true_null_or_an_object(kernel: Kernel) -> None:
    assert await kernel.call_method("b", "clear", {}) is True
    assert await kernel.call_method("b", "give", {"value": None}) is None
    assert await kernel.call_method("b", "give", {"value": {"a": [1]}}) == {"a": [1]}


async def test_a_value_output_must_still_be_json(kernel: Kernel) -> None:
    with pytest.raises(InvalidOutputError, match="not a JSON number"):
        await kernel.call_method("b", "give", {"value": math.nan})


async def test_without_the_opt_in_a_bare_value_is_an_invalid_output(kernel: Kernel) -> None:
    with pytest.raises(InvalidOutputError, match="expected an object, got boolean"):
        await kernel.call_method("b", "strict", {"value": True})
