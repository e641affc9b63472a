"""A run's messages in Agno's shape (`ferrule.models.message.Message`) are a view of the
engine's (`ferrule_kit.content.messages.Message`): every path that goes engine -> Agno -> engine
(continuing a run, scrubbing one for storage, a run's dict read back) gives the engine's
message back exactly, tool result values, media parts and reasoning signatures included."""

from __future__ import annotations

import base64
import json
from typing import Any

from ferrule.agent.results import RunOutput, kit_messages
from ferrule.models.message import Message
from ferrule_kit.content.messages import Message as KitMessage
from ferrule_kit.content.messages import Part, ReasoningPart, ToolCall, ValuePart, converter
from ferrule_kit.testing.strategies import json_values, texts
from hypothesis import given, settings
from hypothesis import strategies as st

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

parts = st.one_of(
    texts,
    json_values.map(ValuePart),
    st.just(Part.image_from_bytes(PNG)),
)
reasoning = st.lists(
    st.builds(ReasoningPart, st.text(max_size=8), st.none() | st.text(min_size=1, max_size=8)),
    max_size=2,
)
calls = st.lists(
    st.builds(
        ToolCall,
        st.from_regex(r"c[0-9]{1,3}", fullmatch=True),
        st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
        st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    ),
    max_size=2,
)


@st.composite
def kit_messages_of_a_run(draw: Any) -> KitMessage:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    contents = draw(st.lists(parts, min_size=1 if role == "user" else 0, max_size=3))
    if role == "assistant":
        return KitMessage(role, contents, reasoning=draw(reasoning), tool_calls=draw(calls))
    if role == "tool":
        return KitMessage(role, contents, tool_call_id=draw(st.from_regex(r"c[0-9]{1,3}")))
    return KitMessage(role, contents)


@settings(max_examples=150, deadline=None)
@given(kit_messages_of_a_run())
def test_the_engine_message_comes_back_exactly_from_its_view(kit: KitMessage) -> None:
    view = Message.from_kit(kit)
    assert view.to_kit() == kit


@settings(max_examples=60, deadline=None)
@given(st.lists(kit_messages_of_a_run(), max_size=4))
def test_a_run_shows_its_messages_in_agnos_shape_and_keeps_the_engines(
    messages: list[KitMessage],
) -> None:
    run: RunOutput[Any] = RunOutput("r1", "completed", messages=messages)
    assert all(isinstance(m, Message) for m in run.messages)
    assert kit_messages(run.messages) == messages
    # a dict of before (the engine's messages, as the wire has them: a value is its JSON
    # text there) reads back as the view of those messages
    wire = [converter.unstructure(m) for m in messages]
    before = {"run_id": "r1", "messages": wire}
    read = converter.structure(wire, list[KitMessage])
    assert kit_messages(RunOutput.from_dict(before).messages) == read
    # Agno's dict reads back as Agno's fields
    again = RunOutput.from_dict(json.loads(run.to_json()))
    shown = [(m.role, m.content, m.tool_calls, m.tool_call_id) for m in run.messages]
    assert [(m.role, m.content, m.tool_calls, m.tool_call_id) for m in again.messages] == shown


def test_the_view_reads_as_agnos_message() -> None:
    run: RunOutput[Any] = RunOutput(
        "r1",
        "completed",
        messages=[
            KitMessage("user", "Add 2 and 3"),
            KitMessage(
                "assistant",
                [],
                reasoning=[ReasoningPart("adding", "sig")],
                tool_calls=[ToolCall("c1", "add", {"a": 2, "b": 3})],
            ),
            KitMessage("tool", [ValuePart({"sum": 5})], tool_call_id="c1"),
            KitMessage("assistant", "5"),
        ],
    )
    user, call, result, reply = run.messages
    assert (user.role, user.content, reply.content) == ("user", "Add 2 and 3", "5")
    assert call.reasoning_content == "adding"
    assert call.tool_calls == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'},
        }
    ]
    assert (result.content, result.tool_call_id) == ('{"sum": 5}', "c1")
    assert (result.tool_name, result.tool_args) == ("add", {"a": 2, "b": 3})
    assert not user.from_history and user.metrics is not None


def test_a_changed_view_is_what_the_engine_gets() -> None:
    kit = KitMessage("tool", [ValuePart({"sum": 5})], tool_call_id="c1")
    view = Message.from_kit(kit)
    view.content = "redacted"
    assert view.to_kit() == KitMessage("tool", "redacted", tool_call_id="c1")
    view = Message.from_kit(KitMessage("assistant", "hi", reasoning=[ReasoningPart("x", "s")]))
    view.tool_calls = [{"id": "c2", "function": {"name": "f", "arguments": "{}"}}]
    assert view.to_kit().tool_calls == [ToolCall("c2", "f", {})]


def test_a_caller_never_changes_the_engines_message_through_the_view() -> None:
    kit = KitMessage("assistant", "hi", tool_calls=[ToolCall("c1", "f", {"a": 1})])
    view = Message.from_kit(kit)
    given = view.to_kit()
    assert given == kit and given is not kit  # a copy of it
    given.tool_calls.clear()  # a caller changes the message it was given
    given.contents.append("later")
    assert (
        view.to_kit()
        == kit
        == KitMessage("assistant", "hi", tool_calls=[ToolCall("c1", "f", {"a": 1})])
    )
