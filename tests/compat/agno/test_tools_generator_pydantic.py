"""Generator tools whose parameters are pydantic models (Agno's #8711): the sync and the
async generator get the model itself and stream their events, and the coroutine too."""

from __future__ import annotations


def test_generator_tools_get_pydantic_models_and_stream_their_events(wire, program):
    query = {"query": {"text": "ml", "period": "week", "limit": 2}}
    wire.calls_many(("find", query), ("afind", query), ("afind_once", query))
    wire.says("All three ran.")
    scope = program("tools_async_generator_pydantic")
    first, second = wire.bodies
    calls = {c["function"]["name"]: c["id"] for c in second["messages"][-4]["tool_calls"]}
    assert [p[:3] for p in scope["progress"]] == [
        ("find", "Query", "start"),
        ("afind", "Query", "start"),
        ("afind", "week", "done"),
    ]
    # Each event names the call that yielded it.
    assert [p[3] for p in scope["progress"]] == [calls["find"], calls["afind"], calls["afind"]]
    results = {m["tool_call_id"]: m["content"] for m in second["messages"][-3:]}
    assert "['ml', 'ml']" in results[calls["find"]]
    assert "['ML', 'ML']" in results[calls["afind"]]
    assert results[calls["afind_once"]] == '{"found": "ml", "limit": 2}'
    schema = first["tools"][1]["function"]["parameters"]["properties"]["query"]
    assert schema.get("$ref") or schema.get("properties") or schema.get("allOf")
