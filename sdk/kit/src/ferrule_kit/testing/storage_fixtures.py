"""What the storage conformance checks share: the store under test, records, strategies.

`StorageUnderTest` is what a backend's ``storage`` fixture yields; the helpers build the
wire dicts of runs and messages; `json_values` and `runs` are hypothesis strategies of
what a store must give back exactly.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs
from hypothesis import HealthCheck
from hypothesis import strategies as st

from ferrule_kit.stores.storage import RunsResult, converter

__all__ = [
    "SHARED_STORE",
    "StorageUnderTest",
    "assistant_message",
    "ids",
    "json_objects",
    "json_values",
    "make_run",
    "message_texts",
    "new_id",
    "runs",
    "tool_message",
    "user_message",
]


@attrs.define
class StorageUnderTest:
    """A defined, empty storage component, and how a child process opens the same store."""

    #: A `ferrule.Runtime` (sync calls; ``acall_method`` for concurrent ones).
    runtime: Any
    component: str
    component_type: str
    #: ``define`` attributes and environment variables a child process opens the store with.
    attributes: dict[str, Any]
    env: dict[str, str] = attrs.Factory(dict)

    def call(self, method: str, inputs: dict[str, Any], result: type | None = None) -> Any:
        """Call ``method``; with ``result``, check the output structures into that class."""
        output = self.runtime.call_method(self.component, method, inputs)
        json.dumps(output)  # JSON-shaped at the boundary
        if result is not None:
            converter.structure(output, result)
        return output

    async def acall(self, method: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return await self.runtime.acall_method(self.component, method, inputs)

    def run_ids(self, session_id: str, **window: Any) -> list[str]:
        runs = self.call("get_runs", {"session_id": session_id, **window}, RunsResult)["runs"]
        return [run["run_id"] for run in runs]


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant_message(text: str, tool_call: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    if tool_call is not None:
        message["tool_calls"] = [
            {"id": tool_call, "type": "function", "function": {"name": "f", "arguments": {}}}
        ]
    return message


def tool_message(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "content": [{"type": "text", "text": text}], "tool_call_id": call_id}


def make_run(session_id: str, run_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"run_id": run_id or new_id("run"), "session_id": session_id, **fields}


def message_texts(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"][0]["text"] if m["content"] else "" for m in messages]


# -- hypothesis strategies --------------------------------------------------------------

_text = st.text(max_size=30)
#: Ids: any text a store keeps (no NUL, no lone surrogate), 1 to 40 characters.
ids = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), min_size=1, max_size=40
)
#: Any JSON value: what a store must give back exactly (floats of every magnitude, -0.0,
#: big integers, NUL and other control characters, non-ASCII text, nested containers).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(_text, json_values, max_size=5)
_statuses = st.sampled_from(["pending", "running", "completed", "paused", "cancelled", "error"])
# Text parts only: media part types belong to content plugins (`ferrule_kit.content.parts`), which
# a store's tests need not install; to a store, a part is JSON all the same.
_parts = _text.map(lambda t: {"type": "text", "text": t})
_tool_call_wire = st.builds(
    lambda i, n, a: {"id": i, "type": "function", "function": {"name": n, "arguments": a}},
    ids,
    ids,
    json_objects,
)
_messages = st.one_of(
    st.builds(
        lambda role, parts: {"role": role, "content": parts},
        st.sampled_from(["system", "user"]),
        st.lists(_parts, min_size=1, max_size=3),
    ),
    st.builds(
        lambda parts, reasoning, calls: {
            "role": "assistant",
            "content": parts,
            "reasoning": reasoning,
            "tool_calls": calls,
        },
        st.lists(_parts, max_size=2),
        st.lists(
            st.builds(
                lambda t, s: {"type": "text", "text": t, **({"signature": s} if s else {})},
                _text,
                st.none() | _text,
            ),
            max_size=2,
        ),
        st.lists(_tool_call_wire, max_size=2),
    ),
    st.builds(
        lambda parts, call_id: {"role": "tool", "content": parts, "tool_call_id": call_id},
        st.lists(_parts, max_size=2),
        ids,
    ),
)
_tool_executions = st.fixed_dictionaries(
    {"tool_call_id": ids, "name": ids},
    optional={
        "arguments": json_values,
        "result": json_values,
        "error": st.none() | _text,
        "duration": st.none() | st.floats(min_value=0, max_value=1e6),
    },
)
_requirements = st.fixed_dictionaries(
    {"tool_call": _tool_call_wire},
    optional={
        "kind": st.sampled_from(["confirmation", "user_input", "external_execution"]),
        "confirmed": st.none() | st.booleans(),
        "reason": st.none() | _text,
        "values": json_objects,
    },
)
#: Runs as callers send them (session and run ids are made unique per example).
runs = st.fixed_dictionaries(
    {"run_id": ids, "session_id": ids},
    optional={
        "user_id": st.none() | ids,
        "agent_id": st.none() | ids,
        "status": _statuses,
        "input": json_values,
        "messages": st.lists(_messages, max_size=4),
        "tool_calls": st.lists(_tool_executions, max_size=3),
        "requirements": st.lists(_requirements, max_size=2),
        "metrics": json_objects,
        "content": json_values,
        "content_type": st.none() | _text,
        "error": st.none() | st.fixed_dictionaries({"kind": _text, "message": _text}),
        "metadata": json_objects,
        # min_value=0.0 excludes -0.0, which the contract refuses like any negative time.
        "created_at": st.none() | st.floats(min_value=0.0, allow_infinity=False),
    },
)

#: Examples share the test's store (each uses fresh ids); a store's round trips may be slow
#: on a loaded machine; and each backend's subclass runs the same test (an example found on
#: one backend is a valid one for every other). None of these is a failure.
SHARED_STORE = [
    HealthCheck.function_scoped_fixture,
    HealthCheck.too_slow,
    HealthCheck.differing_executors,
]
