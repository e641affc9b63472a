"""Host policy wins (docs/security.md, "Host policy wins"): no built-in tool offers a model a
parameter that names a host policy, whatever tools are installed.

The walk covers every built-in tool there is when the test runs: the builtins
(`Tool.new_builtin`), the presets, every toolkit class of a ``ferrule.tools`` module, and a
tool made with `Tool.from_operator` of every installed operator. Each tool's parameters (the
ones the model sees) are checked against `ferrule_kit.network.hostpolicy.POLICY_NAMES` and against
the fields its operator marks `host_policy`; then a call naming each policy is refused
with a ``host_policy`` error, and nothing runs.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

import attrs
import ferrule.tools
import pytest
from ferrule import AsyncRuntime, Tool
from ferrule.tools.builtins import BUILTINS
from ferrule.tools.presets import PRESETS
from ferrule_kernel import InvalidInputError, Kernel
from ferrule_kit.network.hostpolicy import POLICY_NAMES, operator_policies, policy_fields

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    yield Kernel()


def toolkit_classes() -> list[type]:
    """Every class of a ``ferrule.tools`` module that provides tools (``list_tools``)."""
    found = []
    for module_info in pkgutil.iter_modules(ferrule.tools.__path__):
        module = importlib.import_module(f"ferrule.tools.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and hasattr(cls, "list_tools"):
                if not inspect.isabstract(cls) and cls.__name__ != "Toolset":
                    found.append(cls)
    return found


#: What a toolkit that needs an argument is built with, by the argument's name. The walk
#: reads the tools' parameters only, which do not depend on it: the store a toolkit
#: searches or writes is never reached.
ARGUMENTS: dict[str, Any] = {"knowledge": object(), "db": object()}


def build(cls: type) -> Any:
    """``cls`` built with its defaults and `ARGUMENTS` for what it requires."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    required = [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    unknown = [name for name in required if name not in ARGUMENTS]
    if unknown:
        pytest.fail(f"{cls.__qualname__} needs {unknown}: say in ARGUMENTS what to build it with")
    return cls(**{name: ARGUMENTS[name] for name in required})


async def model_tools(kernel: Kernel, rt: AsyncRuntime) -> dict[str, Tool]:
    """Every built-in tool, by where it comes from."""
    tools: dict[str, Tool] = {}
    for kind, make in BUILTINS.items():
        tools[f"builtin {kind}"] = make()
    for name, make in PRESETS.items():
        tools[f"preset {name}"] = make()
    for cls in toolkit_classes():
        toolkit = build(cls)
        for tool in await toolkit.list_tools():
            tools[f"toolkit {cls.__name__}.{tool.name}"] = tool
    for operator in kernel.operators():
        if operator.get("input_schema") is not None:
            name = operator["name"]
            tools[f"operator {name}"] = Tool.from_operator(name, runtime=rt)
    return tools


async def test_no_built_in_tool_offers_a_model_a_host_policy(kernel: Kernel) -> None:
    async with AsyncRuntime(kernel=kernel) as rt:
        tools = await model_tools(kernel, rt)
    assert any(k.startswith("builtin terminal") for k in tools)  # the walk found them
    assert any(k.startswith("operator terminal") for k in tools)
    offending = {}
    for where, tool in tools.items():
        marked = (
            set(operator_policies(kernel, where.split(" ", 1)[1])) if "operator" in where else set()
        )
        offered = set(tool.parameters.get("properties", {}))
        named = offered & (POLICY_NAMES | marked)
        if named:
            offending[where] = sorted(named)
    assert offending == {}, f"tools that offer a model a host policy: {offending}"


def test_every_operator_field_named_like_a_policy_is_marked_as_one(kernel: Kernel) -> None:
    """An operator's input field with a policy's name holds that policy: it is marked, so
    `Tool.from_operator` hides it and refuses it."""
    unmarked = {}
    for operator in kernel.operators():
        entry = kernel.registry.operators[operator["name"]]
        inputs = entry.named(entry.spec.inputs)
        if not attrs.has(inputs):
            continue
        named = {f.name for f in attrs.fields(inputs)} & POLICY_NAMES
        left = named - set(policy_fields(inputs))
        if left:
            unmarked[operator["name"]] = sorted(left)
    assert unmarked == {}, f"mark these fields host_policy(...): {unmarked}"


def policy_calls(kernel: Kernel) -> list[tuple[str, str]]:
    calls = []
    for operator in Kernel().operators():
        for field in operator_policies(kernel, operator["name"]):
            calls.append((operator["name"], field))
    return calls


@pytest.mark.parametrize(("operator", "field"), policy_calls(Kernel()))
async def test_a_call_naming_an_operators_policy_is_refused(
    kernel: Kernel, operator: str, field: str
) -> None:
    async with AsyncRuntime(kernel=kernel) as rt:
        tool = Tool.from_operator(operator, runtime=rt)
        with pytest.raises(InvalidInputError) as refused:
            await tool.call(**{field: sample(field)})
    assert refused.value.kind == "host_policy"
    assert refused.value.errors[0]["path"] == f"$.{field}"
    assert "set by the host" in refused.value.message


def sample(field: str) -> Any:
    return {"allow": ["id"], "proxy_url": "http://169.254.169.254/"}.get(field, 1)
