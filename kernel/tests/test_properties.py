"""Random requests never crash the kernel: each is served or refused with a typed error
that names the field."""

from __future__ import annotations

import asyncio
import json

from ferrule_kernel import FerruleError, InvalidInputError, Kernel
from hypothesis import given
from hypothesis import strategies as st
from plugins_for_tests import TestPlugin

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)
field_names = st.sampled_from(["text", "count", "tags", "options", "mode", "temperature", "extra"])
near_valid_inputs = st.fixed_dictionaries(
    {},
    optional={
        "text": json_values | st.text(),
        "count": json_values | st.integers(),
        "tags": json_values | st.lists(st.text(max_size=3), max_size=3),
        "options": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "mode": json_values | st.sampled_from(["fast", "slow"]),
                "temperature": json_values,
            },
        ),
        "extra": json_values,
    },
)

KERNEL = Kernel(plugins=[TestPlugin()], load_entry_points=False)


def _serve(operator, inputs):
    return asyncio.run(KERNEL.call(operator, inputs))


@given(near_valid_inputs | json_values)
def test_malformed_input_is_served_or_refused_naming_fields(inputs):
    try:
        result = _serve("repeat", inputs)
    except InvalidInputError as exc:
        assert exc.errors, "an input error must list the bad fields"
        for error in exc.errors:
            assert error["path"].startswith("$"), error
            assert error["message"]
        valid_paths = {
            "$",
            "$.text",
            "$.count",
            "$.tags",
            "$.options",
            "$.options.mode",
            "$.options.temperature",
        }
        for error in exc.errors:
            path = error["path"]
            if path in valid_paths or path.startswith("$.tags["):
                continue
            # otherwise: a field the request sent that the input class does not have
            assert error["message"] == "unknown field", error
            parent = "$.options" if path.startswith("$.options") else "$"
            sent = inputs if parent == "$" else inputs.get("options")
            assert isinstance(sent, dict), (error, inputs)
            named = {
                f"{parent}.{k}"
                if k.isidentifier()
                else f"{parent}[{json.dumps(k, ensure_ascii=False)}]"
                for k in sent
            }
            assert path in named, (error, inputs)
    else:
        assert isinstance(inputs, dict) and isinstance(inputs["text"], str)
        assert result["text"] == inputs["text"] * inputs.get("count", 1)


@given(st.text(max_size=20) | json_values, json_values)
def test_any_operator_name_and_input_gives_a_result_or_a_typed_error(operator, inputs):
    try:
        _serve(operator, inputs)
    except FerruleError as exc:
        assert exc.message
        assert exc.kind


@given(st.lists(st.sampled_from(["define", "delete", "call", "iter"]), max_size=12), st.data())
def test_random_component_request_sequences_keep_the_registry_consistent(actions, data):
    kernel = Kernel(plugins=[TestPlugin()], load_entry_points=False)
    defined: set[str] = set()

    async def run():
        for action in actions:
            name = data.draw(st.sampled_from(["a", "b"]))
            try:
                if action == "define":
                    await kernel.define("counter", name, {"start": 1})
                    assert name not in defined
                    defined.add(name)
                elif action == "delete":
                    await kernel.delete(name)
                    defined.discard(name)
                elif action == "call":
                    await kernel.call_method(name, "increment", {"n": 1})
                else:
                    async for _ in kernel.iter(f"{name}.count_up", {"n": 2}):
                        pass
            except FerruleError:
                pass
            assert set(kernel.components()) == defined

    asyncio.run(run())
