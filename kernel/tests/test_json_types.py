"""A description's ``inputs`` and ``outputs`` are types: an attrs class is a JSON object of
its fields (the usual case); any other type made of JSON-compatible parts (``list[Item]``,
``Item | None``, ``bool``, ``Literal[True]``) is a JSON value of that type, structured and
checked by the same converter, with the same field-level errors."""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs
import pytest
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidInputError,
    InvalidOutputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    hookimpl,
)


@attrs.frozen
class Item:
    name: str


@attrs.frozen
class AnyInput:
    value: Any = None


@attrs.frozen
class Nothing:
    pass


Items = list[Item]
MaybeNothing = Nothing | None
MaybeItem = Item | None


class Bag:
    def __init__(self, _attributes: object) -> None:
        self.names: list[str] = []

    def add(self, items: list[Item]) -> dict[str, Any]:
        self.names += [item.name for item in items]
        return {"count": len(self.names)}

    def clear(self, _inputs: Nothing | None) -> bool:
        self.names.clear()
        return True

    def first(self, _inputs: Nothing | None) -> dict[str, Any] | None:
        return {"name": self.names[0]} if self.names else None

    def give(self, inputs: AnyInput) -> Any:
        return inputs.value

    def strict(self, inputs: AnyInput) -> Any:
        return inputs.value


class Bags:
    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = (
            MethodSpec("add", Items, blocking=False),
            MethodSpec("clear", MaybeNothing, blocking=False, outputs=Literal[True]),
            MethodSpec("first", MaybeNothing, blocking=False, outputs=MaybeItem),
            MethodSpec("give", AnyInput, blocking=False, outputs=Any),
            MethodSpec("strict", AnyInput, blocking=False),
        )
        return [ComponentTypeSpec("bag", Bag, Nothing, methods)]

    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("count", lambda items: {"count": len(items)}, Items, blocking=False)]


@pytest.fixture
async def kernel() -> Kernel:
    kernel = Kernel(plugins=[Bags()], load_entry_points=False)
    await kernel.define("bag", "b", {})
    return kernel


async def test_a_list_input_takes_a_bare_json_array(kernel: Kernel) -> None:
    assert await kernel.call_method("b", "add", [{"name": "x"}, {"name": "y"}]) == {"count": 2}
    assert await kernel.call("count", [{"name": "x"}]) == {"count": 1}


async def test_a_bad_array_item_is_named_by_its_path(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError) as info:
        await kernel.call_method("b", "add", [{"name": "x"}, {"nom": "y"}])
    assert {e["path"] for e in info.value.errors} >= {"$[1].name"}
    with pytest.raises(InvalidInputError) as not_a_list:
        await kernel.call_method("b", "add", {"items": [{"name": "x"}]})
    assert [e["path"] for e in not_a_list.value.errors] == ["$"]
    assert "expected array, got object" in not_a_list.value.message


async def test_an_optional_input_takes_null_or_an_object(kernel: Kernel) -> None:
    assert await kernel.call_method("b", "clear", None) is True
    assert await kernel.call_method("b", "clear", {}) is True
    with pytest.raises(InvalidInputError) as extra:
        await kernel.call_method("b", "clear", {"all": True})
    assert [e["path"] for e in extra.value.errors] == ["$.all"]


async def test_an_attrs_input_still_takes_only_an_object(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError, match="expected object, got array"):
        await kernel.call_method("b", "strict", [1, 2])


async def test_declared_outputs_may_be_json_values(kernel: Kernel) -> None:
    assert await kernel.call_method("b", "first", None) is None
    await kernel.call_method("b", "add", [{"name": "x"}])
    assert await kernel.call_method("b", "first", None) == {"name": "x"}
    assert await kernel.call_method("b", "give", {"value": None}) is None
    assert await kernel.call_method("b", "give", {"value": [1, "a"]}) == [1, "a"]


async def test_a_value_output_must_be_json_and_of_its_type() -> None:
    class Wrong:
        def __init__(self, _attributes: object) -> None:
            pass

        def clear(self, _inputs: object) -> object:
            return False  # declared Literal[True]

        def first(self, _inputs: object) -> object:
            return {"nom": "x"}  # declared Item | None

    class Plugin:
        @hookimpl
        def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
            methods = (
                MethodSpec("clear", MaybeNothing, blocking=False, outputs=Literal[True]),
                MethodSpec("first", MaybeNothing, blocking=False, outputs=MaybeItem),
            )
            return [ComponentTypeSpec("wrong", Wrong, Nothing, methods)]

    kernel = Kernel(plugins=[Plugin()], load_entry_points=False)
    await kernel.define("wrong", "w", {})
    with pytest.raises(InvalidOutputError):
        await kernel.call_method("w", "clear", None)
    with pytest.raises(InvalidOutputError) as info:
        await kernel.call_method("w", "first", None)
    assert "$.nom" in {e["path"] for e in info.value.errors}


async def test_a_value_output_must_still_be_json(kernel: Kernel) -> None:
    with pytest.raises(InvalidOutputError, match="not a JSON number"):
        await kernel.call_method("b", "give", {"value": math.nan})


async def test_without_declared_outputs_a_bare_value_is_an_invalid_output(kernel: Kernel) -> None:
    with pytest.raises(InvalidOutputError, match="expected an object, got boolean"):
        await kernel.call_method("b", "strict", {"value": True})


def test_the_listing_shows_the_input_type_s_schema(kernel: Kernel) -> None:
    (bag,) = kernel.component_types()
    schemas = {m["name"]: m["input_schema"] for m in bag["methods"]}
    assert schemas["add"]["type"] == "array"
