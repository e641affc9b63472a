"""The kernel's hooks (`ferrule_kernel.hookspecs`), one test each, named ``test_hook_<hook>``
(tests/test_hooks.py checks that every hook of every layer has one)."""

from __future__ import annotations

import asyncio

import attrs
import pluggy
import pytest
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidInputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    hookimpl,
)
from plugins_for_tests import Counter, CounterAttributes, CountInput, TextInput


def shout(inputs: TextInput) -> dict[str, str]:
    return {"text": inputs.text.upper()}


def whisper(inputs: TextInput) -> dict[str, str]:
    return {"text": inputs.text.lower()}


class Loud:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("shout", shout, TextInput)]


class Quiet:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [
            OperatorSpec("whisper", whisper, TextInput),
            OperatorSpec("shout", whisper, TextInput),
        ]


def test_hook_register_operators():
    kernel = Kernel(plugins=[Loud(), Quiet()], load_entry_points=False)
    # every plugin's result is kept; a name already taken stays with its first provider
    assert asyncio.run(kernel.call("shout", {"text": "Hi"})) == {"text": "HI"}
    assert asyncio.run(kernel.call("whisper", {"text": "Hi"})) == {"text": "hi"}
    assert sorted(info["operators"] for info in kernel.plugins()) == [["shout"], ["whisper"]]
    errors = [info["error"] for info in kernel.plugins() if info["error"]]
    assert len(errors) == 1 and "operator 'shout' is already provided by" in errors[0]


class Counters:
    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = (MethodSpec("increment", CountInput),)
        return [ComponentTypeSpec("tally", Counter, CounterAttributes, methods, aliases=("t",))]


def test_hook_register_component_types():
    kernel = Kernel(plugins=[Counters()], load_entry_points=False)

    async def use() -> dict[str, int]:
        await kernel.define("t", "c1", {"start": 1})  # by its alias
        return await kernel.call_method("c1", "increment", {"n": 2})

    assert asyncio.run(use()) == {"value": 3}
    assert kernel.components() == {"c1": "tally"}
    assert [t["name"] for t in kernel.component_types()] == ["tally"]


class GreetingSpecs:
    hookspec = pluggy.HookspecMarker("ferrule")

    @hookspec(firstresult=True)
    def ferrule_greeting(self, name: str) -> str | None:
        """A hook of a layer above the kernel."""


@attrs.define
class AddsGreeting:
    calls: int = 0

    @hookimpl
    def ferrule_add_hookspecs(self, pluginmanager: pluggy.PluginManager) -> None:
        self.calls += 1
        pluginmanager.add_hookspecs(GreetingSpecs)


class Greeter:
    @hookimpl
    def ferrule_greeting(self, name: str) -> str:
        return f"hello {name}"


def test_hook_add_hookspecs():
    adds = AddsGreeting()
    kernel = Kernel(load_entry_points=False)
    # historic: a plugin registered after the kernel was made is still called, once
    kernel.register(adds)
    kernel.register(Greeter())
    assert adds.calls == 1
    assert kernel.plugin_manager.hook.ferrule_greeting(name="Ada") == "hello Ada"


@attrs.define
class ElsewhereCounter:
    """A stand-in placed "elsewhere": the kernel only sees the type's methods."""

    inner: Counter
    placed: tuple[str, dict[str, object]]
    closed: bool = False

    async def increment(self, inputs: CountInput) -> dict[str, int]:
        return self.inner.increment(inputs)

    async def count_up(self, inputs: CountInput):  # type: ignore[no-untyped-def]
        async for item in self.inner.count_up(inputs):
            yield item

    def close(self) -> None:
        self.closed = True


class PlacesElsewhere:
    @hookimpl
    def ferrule_place_component(
        self,
        component_type: str,
        name: str,
        attributes: dict[str, object],
        placement: dict[str, object],
        spec: ComponentTypeSpec,
    ) -> object:
        if placement["kind"] != "elsewhere":
            return None
        assert [m.name for m in spec.methods] == ["increment", "count_up"]

        def factory(validated: CounterAttributes) -> ElsewhereCounter:
            return ElsewhereCounter(Counter(validated), (component_type, attributes))

        return factory


class CounterMethods:
    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = (
            MethodSpec("increment", CountInput),
            MethodSpec("count_up", CountInput, streaming=True),
        )
        return [ComponentTypeSpec("tally", Counter, CounterAttributes, methods)]


def test_hook_place_component():
    kernel = Kernel(plugins=[CounterMethods(), PlacesElsewhere()], load_entry_points=False)

    async def use() -> tuple[dict[str, int], list[dict[str, int]]]:
        await kernel.define("tally", "c1", {"start": 1}, placement={"kind": "elsewhere"})
        one = await kernel.call_method("c1", "increment", {"n": 2})
        streamed = [item async for item in kernel.iter_method("c1", "count_up", {"n": 2})]
        return one, streamed

    assert asyncio.run(use()) == ({"value": 3}, [{"value": 4}, {"value": 5}])
    stand_in = kernel.component("c1")
    assert stand_in.placed == ("tally", {"start": 1})
    # inputs are validated on this side before the stand-in sees them
    with pytest.raises(InvalidInputError) as caught:
        asyncio.run(kernel.call_method("c1", "increment", {"n": "two"}))
    assert caught.value.errors[0]["path"] == "$.n"
    asyncio.run(kernel.delete("c1"))
    assert stand_in.closed


@pytest.mark.parametrize(
    ("placement", "field"),
    [
        ("ray", "placement"),
        ({"replicas": 2}, "placement.kind"),
        ({"kind": "nowhere"}, "placement.kind"),
    ],
)
def test_a_placement_no_plugin_takes_names_its_field(placement: object, field: str):
    kernel = Kernel(plugins=[CounterMethods(), PlacesElsewhere()], load_entry_points=False)
    with pytest.raises(InvalidInputError) as caught:
        asyncio.run(kernel.define("tally", "c1", {}, placement=placement))
    assert caught.value.errors[0]["path"] == field
    assert kernel.components() == {}
