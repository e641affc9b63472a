"""Plugins the kernel tests register directly (plain objects with hook implementations)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Literal

import attrs
from ferrule_kernel import (
    ComponentTypeSpec,
    MethodSpec,
    OperatorSpec,
    hookimpl,
    in_range,
)


@attrs.frozen
class Options:
    temperature: float = 1.0
    mode: Literal["fast", "slow"] = "fast"


@attrs.frozen
class NestedInput:
    text: str
    # repeat() builds text * count: refuse sizes no test means (hypothesis finds them)
    count: int = attrs.field(default=1, validator=in_range(0, 1000))
    tags: list[str] = attrs.Factory(list)
    options: Options = attrs.Factory(Options)


@attrs.frozen
class TextInput:
    text: str


@attrs.frozen
class CountInput:
    n: int


@attrs.frozen
class CounterAttributes:
    start: int = 0


def repeat(inputs: NestedInput) -> dict[str, Any]:
    return {"text": inputs.text * inputs.count, "tags": inputs.tags, "mode": inputs.options.mode}


def fail(inputs: TextInput) -> dict[str, Any]:
    raise RuntimeError(f"boom: {inputs.text}")


def bad_output(inputs: TextInput) -> Any:
    return ["not", "an", "object"]


async def count_async(inputs: CountInput):
    for i in range(inputs.n):
        await asyncio.sleep(0)
        yield {"i": i}


async def fail_midway(inputs: CountInput):
    for i in range(inputs.n):
        yield {"i": i}
    raise ValueError("stream broke")


class Recorder:
    """Records what the cancellable producers did, so tests can check they stopped."""

    def __init__(self) -> None:
        self.produced = 0
        self.closed = threading.Event()
        self.release = threading.Event()


recorder = Recorder()


async def endless(inputs: CountInput):
    try:
        while True:
            recorder.produced += 1
            yield {"i": recorder.produced}
            await asyncio.sleep(0.001)
    finally:
        recorder.closed.set()


def endless_blocking(inputs: CountInput):
    try:
        while True:
            recorder.produced += 1
            yield {"i": recorder.produced}
    finally:
        recorder.closed.set()


def wait_for_release(inputs: TextInput) -> dict[str, str]:
    # Blocks its thread until the test releases it: the loop must keep serving meanwhile.
    if not recorder.release.wait(timeout=10):
        raise TimeoutError("never released")
    return {"text": inputs.text}


class Counter:
    def __init__(self, attributes: CounterAttributes) -> None:
        self.value = attributes.start
        self.closed = False

    def increment(self, inputs: CountInput) -> dict[str, int]:
        self.value += inputs.n
        return {"value": self.value}

    async def count_up(self, inputs: CountInput):
        for _ in range(inputs.n):
            self.value += 1
            yield {"value": self.value}

    def close(self) -> None:
        self.closed = True


class FailingFactory:
    def __init__(self, attributes: CounterAttributes) -> None:
        raise OSError("no such device")


class TestPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [
            OperatorSpec("repeat", repeat, NestedInput, blocking=False),
            OperatorSpec("fail", fail, TextInput),
            OperatorSpec("bad_output", bad_output, TextInput, blocking=False),
            OperatorSpec("count_async", count_async, CountInput, streaming=True),
            OperatorSpec("fail_midway", fail_midway, CountInput, streaming=True),
            OperatorSpec("endless", endless, CountInput, streaming=True),
            OperatorSpec("endless_blocking", endless_blocking, CountInput, streaming=True),
            OperatorSpec("wait_for_release", wait_for_release, TextInput),
            OperatorSpec("lazy_echo", "lazy_target_for_tests:echo", TextInput),
            OperatorSpec("missing_module", "no_such_module_anywhere:echo", TextInput),
        ]

    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        methods = (
            MethodSpec("increment", CountInput),
            MethodSpec("count_up", CountInput, streaming=True),
        )
        return [
            ComponentTypeSpec("counter", Counter, CounterAttributes, methods, aliases=("abacus",)),
            ComponentTypeSpec("failing", FailingFactory, CounterAttributes, methods),
        ]


class BrokenHookPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        raise RuntimeError("registration exploded")


class WrongReturnPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[Any]:
        return ["not a spec"]


class ConflictingPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("repeat", repeat, NestedInput)]


#: What the tests' host tells the kernel about names it has no plugin for (the ferrule
#: top layer hands the kernel its catalog the same way).
INSTALL_HINTS = {
    ("operator", "split_text"): "It is provided by ferrule-split-text: pip install it.",
    ("component_type", "tvm_language_model"): "It is provided by ferrule-llamacpp.",
}


def install_hint(kind: str, name: str) -> str | None:
    return INSTALL_HINTS.get((kind, name))
