"""A request is trusted only when its caller says so: fields that name code or server files
(`local_only`) are refused from anyone else, which is what `ferrule serve` is."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from ferrule_kernel import (
    ComponentTypeSpec,
    InvalidInputError,
    Kernel,
    MethodSpec,
    OperatorSpec,
    caller_is_trusted,
    hookimpl,
    local_only,
    refused_for_trust,
)


@attrs.frozen
class Target:
    text: str = ""
    module: str | None = attrs.field(default=None, validator=local_only("code to import"))


@attrs.frozen
class Seen:
    trusted: bool = attrs.field(factory=caller_is_trusted)


def what(inputs: Target) -> dict[str, Any]:
    return {"module": inputs.module}


class Thing:
    def __init__(self, attributes: Target) -> None:
        self.module = attributes.module

    def seen(self, inputs: Seen) -> dict[str, Any]:
        return {"trusted": inputs.trusted}


class TrustPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("what", what, Target, blocking=False)]

    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        return [ComponentTypeSpec("thing", Thing, Target, [MethodSpec("seen", Seen)])]


@pytest.fixture
def kernel() -> Kernel:
    return Kernel(plugins=[TrustPlugin()], load_entry_points=False)


async def test_a_local_only_field_is_refused_unless_the_caller_is_trusted(kernel):
    with pytest.raises(InvalidInputError) as info:
        await kernel.call("what", {"module": "os:system"})
    assert info.value.errors == [
        {
            "path": "$.module",
            "message": "names code to import, which is accepted from code in the server's own "
            "process only, never over the network",
            "refused": "untrusted",  # well formed: only trust refused it
        }
    ]
    assert refused_for_trust(info.value)
    with pytest.raises(InvalidInputError, match=r"\$\.module: names code to import"):
        await kernel.define("thing", "t", {"module": "os:system"})
    with pytest.raises(InvalidInputError, match=r"\$\.module: names code to import"):
        kernel.prepare("what", {"module": "os:system"}, streaming=False)
    # absent, it is fine from anyone
    assert await kernel.call("what", {"text": "x"}) == {"module": None}


async def test_a_trusted_caller_may_name_local_code(kernel):
    assert await kernel.call("what", {"module": "m:f"}, trusted=True) == {"module": "m:f"}
    await kernel.define("thing", "t", {"module": "m:f"}, trusted=True)
    assert kernel.component("t").module == "m:f"


async def test_trust_holds_during_validation_only_and_for_that_request_only(kernel):
    await kernel.define("thing", "t", {})
    assert await kernel.call_method("t", "seen", {}) == {"trusted": False}
    assert await kernel.call_method("t", "seen", {}, trusted=True) == {"trusted": True}
    assert await kernel.call_method("t", "seen", {}) == {"trusted": False}
    assert kernel.prepare("t.seen", {}, trusted=True).arg == Seen(True)
    assert not caller_is_trusted()


async def test_a_field_wrong_for_anyone_is_not_a_trust_refusal(kernel):
    # refused_for_trust tells a server which errors are the client's asking too much (400)
    # from input that no caller could send.
    with pytest.raises(InvalidInputError) as info:
        await kernel.call("what", {"module": 7})
    assert not refused_for_trust(info.value)
