"""Components built on other components (``ComponentTypeSpec.uses_components``): the
factory gets a `ComponentRequests`; what it defines is named ``<owner>/<role>``, lives
and dies with its owner (also when the owner's define fails), is refused a delete of its
own, and is asked with the trust of the define that made the owner."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from ferrule_kernel import (
    ComponentRequests,
    ComponentTypeSpec,
    InvalidInputError,
    Kernel,
    MethodSpec,
    PluginError,
    UnknownComponentError,
    hookimpl,
    local_only,
)


@attrs.frozen
class CounterAttributes:
    start: int = 0
    #: Refused from an untrusted caller (as a path on the server would be).
    path: str | None = attrs.field(default=None, validator=local_only("a file on the server"))


@attrs.frozen
class Nothing:
    pass


#: What was closed, in order (the fixture empties it).
CLOSED: list[str] = []


class Counter:
    def __init__(self, attributes: CounterAttributes) -> None:
        self.value = attributes.start

    def bump(self, _inputs: Nothing) -> dict[str, Any]:
        self.value += 1
        return {"value": self.value}

    def close(self) -> None:
        CLOSED.append("counter")


@attrs.frozen
class PairAttributes:
    start: int = 0
    path: str | None = None
    fail: bool = False


class Pair:
    """Two counters, bumped together."""

    def __init__(self, requests: ComponentRequests, names: list[str]) -> None:
        self.requests = requests
        self.names = names

    async def bump(self, _inputs: Nothing) -> dict[str, Any]:
        values = [(await self.requests.call_method(n, "bump", {}))["value"] for n in self.names]
        return {"values": values}

    def close(self) -> None:
        CLOSED.append("pair")


async def create_pair(attributes: PairAttributes, requests: ComponentRequests) -> Pair:
    chosen: dict[str, Any] = {"start": attributes.start}
    if attributes.path is not None:
        chosen["path"] = attributes.path
    names = [await requests.define("counter", role, chosen) for role in ("left", "right")]
    if attributes.fail:
        raise RuntimeError("the pair could not start")
    return Pair(requests, names)


class Plugin:
    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        bump = (MethodSpec("bump", Nothing, blocking=False),)
        return [
            ComponentTypeSpec("counter", Counter, CounterAttributes, bump),
            ComponentTypeSpec("pair", create_pair, PairAttributes, bump, uses_components=True),
        ]


@pytest.fixture
def kernel() -> Kernel:
    CLOSED.clear()
    return Kernel(plugins=[Plugin()], load_entry_points=False)


async def test_the_components_it_is_built_on_are_named_after_it(kernel: Kernel) -> None:
    await kernel.define("pair", "p", {"start": 5})
    assert kernel.components() == {"p": "pair", "p/left": "counter", "p/right": "counter"}
    assert await kernel.call_method("p", "bump", {}) == {"values": [6, 6]}
    assert await kernel.call_method("p/left", "bump", {}) == {"value": 7}  # normal requests
    assert await kernel.call_method("p", "bump", {}) == {"values": [8, 7]}


async def test_they_are_deleted_with_it_and_never_alone(kernel: Kernel) -> None:
    await kernel.define("pair", "p", {})
    with pytest.raises(InvalidInputError, match="part of 'p'") as refused:
        await kernel.delete("p/left")
    assert [e["path"] for e in refused.value.errors] == ["name"]
    await kernel.delete("p")
    assert kernel.components() == {}
    assert CLOSED == ["pair", "counter", "counter"]  # the owner first
    with pytest.raises(UnknownComponentError, match="was deleted"):
        await kernel.call_method("p/right", "bump", {})


async def test_a_failed_define_takes_them_with_it(kernel: Kernel) -> None:
    with pytest.raises(PluginError, match="could not start"):
        await kernel.define("pair", "p", {"fail": True})
    assert kernel.components() == {}
    assert CLOSED == ["counter", "counter"]
    await kernel.define("pair", "p", {})  # the names are free again
    assert set(kernel.components()) == {"p", "p/left", "p/right"}


async def test_aclose_deletes_owners_with_what_they_own(kernel: Kernel) -> None:
    await kernel.define("pair", "p", {})
    await kernel.define("counter", "alone", {})
    await kernel.aclose()
    assert kernel.components() == {}
    assert sorted(CLOSED) == ["counter", "counter", "counter", "pair"]


async def test_its_requests_are_as_trusted_as_its_define(kernel: Kernel) -> None:
    await kernel.define("pair", "mine", {"path": "/srv/counts"}, trusted=True)
    with pytest.raises(InvalidInputError) as refused:
        await kernel.define("pair", "theirs", {"path": "/srv/counts"})  # a network client
    assert [e["path"] for e in refused.value.errors] == ["$.path"]
    assert set(kernel.components()) == {"mine", "mine/left", "mine/right"}


async def test_a_name_already_taken_is_the_owner_s_define_error(kernel: Kernel) -> None:
    await kernel.define("counter", "p/left", {})
    with pytest.raises(Exception, match="already defined"):
        await kernel.define("pair", "p", {})
    assert kernel.components() == {"p/left": "counter"}


async def test_it_cannot_be_placed(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError, match="built on components") as refused:
        await kernel.define("pair", "p", {}, placement={"kind": "ray"})
    assert [e["path"] for e in refused.value.errors] == ["placement"]


async def test_an_owner_must_exist(kernel: Kernel) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await kernel.define("counter", "c", {}, owner="nobody")
    assert [e["path"] for e in refused.value.errors] == ["owner"]
    assert repr(ComponentRequests(kernel, "x", trusted=False)) == "ComponentRequests(owner='x')"
