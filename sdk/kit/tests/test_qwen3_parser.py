"""`ferrule_kit.models.qwen3.Qwen3StreamParser`: Qwen3 output split into reasoning, text and tool calls,
the same however the output is chunked."""

from __future__ import annotations

import itertools
import json

import pytest
from ferrule_kit.content.messages import Message, ReasoningPart, ToolCall
from ferrule_kit.errors import InvalidToolCallError
from ferrule_kit.models.lm import MessageAccumulator
from ferrule_kit.models.qwen3 import SAMPLING, STOP_STRINGS, Qwen3StreamParser, render_prompt
from hypothesis import given
from hypothesis import strategies as st


def parse(
    chunks, *, reasoning: bool, call_lists: bool = False
) -> tuple[MessageAccumulator, Qwen3StreamParser]:
    parser = Qwen3StreamParser(reasoning, call_lists=call_lists)
    acc = MessageAccumulator()
    for chunk in chunks:
        for item in parser.feed(chunk):
            acc.add(item)
    for item in parser.close():
        acc.add(item)
    return acc, parser


def folded(chunks, *, reasoning: bool) -> dict:
    """What a stream folds to; tool-call ids are random, so only their shape is kept."""
    acc, parser = parse(chunks, reasoning=reasoning)
    calls = [acc.calls[i] for i in sorted(acc.calls)]
    assert all(c.id.startswith("call_") for c in calls)
    assert len({c.id for c in calls}) == len(calls)
    return {
        "text": "".join(acc.text),
        "reasoning": [part.text for part in acc.reasoning],
        "calls": [(c.name, c.arguments) for c in calls],
        "saw_tool_calls": parser.saw_tool_calls,
    }


def test_thinking_output_splits_into_reasoning_and_text():
    acc, parser = parse(["<think>\nLet me see.\n</think>\n\nParis."], reasoning=True)
    message = acc.message()
    assert message.reasoning == [ReasoningPart("Let me see.")]
    assert message.text == "Paris."
    assert not parser.saw_tool_calls


def test_thinking_output_without_the_opening_tag_is_reasoning_until_it_closes():
    acc, _ = parse(["The prompt opened the block.\n</think>\n\nAnswer"], reasoning=True)
    assert acc.message().reasoning == [ReasoningPart("The prompt opened the block.")]
    assert acc.message().text == "Answer"


def test_with_thinking_off_everything_is_text_tags_included():
    acc, _ = parse(["Hello <think>not reasoning</think> world"], reasoning=False)
    assert acc.message().reasoning == []
    assert acc.message().text == "Hello <think>not reasoning</think> world"


def test_several_tool_calls_after_text():
    output = (
        "Checking both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "°C"}}\n</tool_call>'
    )
    acc, parser = parse([output], reasoning=False)
    message = acc.message()
    assert message.text == "Checking both."
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Oslo", "unit": "°C"}),
    ]
    assert parser.saw_tool_calls


def test_a_tool_call_is_one_delta_with_id_name_and_the_arguments_as_json():
    parser = Qwen3StreamParser(reasoning=False)
    items = parser.feed('<tool_call>{"name": "f", "arguments": {"x": [1, 2]}}</tool_call>')
    assert len(items) == 1
    (call,) = items[0]["message"]["tool_calls"]
    assert call["index"] == 0 and call["id"].startswith("call_")
    assert call["function"]["name"] == "f"
    assert json.loads(call["function"]["arguments"]) == {"x": [1, 2]}


def test_a_call_without_arguments_has_empty_arguments():
    acc, _ = parse(['<tool_call>{"name": "now"}</tool_call>'], reasoning=False)
    assert acc.tool_calls() == [ToolCall(acc.calls[0].id, "now", {})]


def test_invalid_json_is_an_invalid_tool_call_not_a_crash():
    acc, parser = parse(
        ['<tool_call>\n{"name": "search", "arguments": {"q": "x"\n</tool_call>', "done"],
        reasoning=False,
    )
    assert parser.saw_tool_calls
    assert "".join(acc.text) == "done"
    with pytest.raises(InvalidToolCallError) as info:
        acc.tool_calls()
    assert info.value.details["name"] == "search"
    assert (
        info.value.details["arguments"]
        == '<tool_call>\n{"name": "search", "arguments": {"q": "x"\n</tool_call>'
    )


@pytest.mark.parametrize("body", ['{"arguments": {}}', "[1, 2]", '{"name": 3}', ""])
def test_json_that_is_not_a_call_is_an_invalid_tool_call(body):
    acc, _ = parse([f"<tool_call>{body}</tool_call>"], reasoning=False)
    with pytest.raises(InvalidToolCallError) as info:
        acc.tool_calls()
    assert info.value.details["name"] == ""
    assert info.value.details["arguments"] == f"<tool_call>{body}</tool_call>"


def test_with_call_lists_a_block_holding_a_list_is_one_call_per_item():
    output = (
        "Both.\n<tool_call>[\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}},\n'
        '{"name": "now"}\n]</tool_call>'
    )
    acc, parser = parse([output], reasoning=False, call_lists=True)
    message = acc.message()
    assert message.text == "Both."
    assert [(c.name, c.arguments) for c in message.tool_calls] == [
        ("get_weather", {"city": "Paris"}),
        ("now", {}),
    ]
    assert [acc.calls[i].name for i in sorted(acc.calls)] == ["get_weather", "now"]
    assert parser.saw_tool_calls


def test_with_call_lists_an_empty_list_is_no_call():
    acc, parser = parse(["<tool_call>[]</tool_call>"], reasoning=False, call_lists=True)
    assert acc.message().tool_calls == [] and acc.message().text == ""
    assert not parser.saw_tool_calls


@pytest.mark.parametrize("call_lists", [False, True])
def test_a_list_with_anything_but_calls_is_one_invalid_call(call_lists):
    body = '[{"name": "f", "arguments": {}}, 1]'
    acc, _ = parse([f"<tool_call>{body}</tool_call>"], reasoning=False, call_lists=call_lists)
    with pytest.raises(InvalidToolCallError) as info:
        acc.tool_calls()
    assert info.value.details["arguments"] == f"<tool_call>{body}</tool_call>"


def test_without_call_lists_a_list_of_calls_stays_invalid():
    body = '[{"name": "f", "arguments": {}}]'
    acc, _ = parse([f"<tool_call>{body}</tool_call>"], reasoning=False)
    with pytest.raises(InvalidToolCallError):
        acc.tool_calls()


def test_unterminated_think_stays_reasoning():
    acc, _ = parse(["<think>\nstill thinking when max_tokens hit\n"], reasoning=True)
    assert acc.message().reasoning == [ReasoningPart("still thinking when max_tokens hit\n")]
    assert acc.message().text == ""


def test_unterminated_tool_call_with_a_complete_body_is_a_call():
    acc, _ = parse(['<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n'], reasoning=False)
    assert [(c.name, c.arguments) for c in acc.tool_calls()] == [("f", {"a": 1})]


def test_unterminated_tool_call_cut_mid_json_is_an_invalid_call():
    acc, _ = parse(['<tool_call>\n{"name": "f", "argu'], reasoning=False)
    with pytest.raises(InvalidToolCallError) as info:
        acc.tool_calls()
    assert info.value.details == {
        "tool_call_id": acc.calls[0].id,
        "name": "f",
        "arguments": '<tool_call>\n{"name": "f", "argu',
    }


def test_only_a_possible_tag_prefix_is_held_back():
    parser = Qwen3StreamParser(reasoning=False)
    assert [i["message"]["content"][0]["text"] for i in parser.feed("Hello <")] == ["Hello "]
    assert [i["message"]["content"][0]["text"] for i in parser.feed("b>")] == ["<b>"]
    assert parser.feed("<tool_") == []
    assert [i["message"]["content"][0]["text"] for i in parser.feed("x")] == ["<tool_x"]
    assert [i["message"]["content"][0]["text"] for i in parser.close()] == []


def test_a_held_back_prefix_at_the_end_is_flushed_as_text():
    acc, _ = parse(["a < b and c <tool_c"], reasoning=False)
    assert acc.message().text == "a < b and c <tool_c"


def test_tags_split_token_by_token():
    output = (
        '<think>\nhm\n</think>\n\nok\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'
    )
    assert folded(list(output), reasoning=True) == {
        "text": "ok",
        "reasoning": ["hm"],
        "calls": [("f", "{}")],
        "saw_tool_calls": True,
    }


def test_sampling_and_stop_strings_are_qwens():
    assert SAMPLING[True] == {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "min_p": 0.0}
    assert SAMPLING[False] == {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0}
    assert STOP_STRINGS == ["<|im_end|>", "<|endoftext|>"]


# -- properties ---------------------------------------------------------------------------

TAGS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
_fragments = st.one_of(
    st.text(alphabet=st.sampled_from('ab <>/\n{}":,\\é'), max_size=6),
    # Tags, and their prefixes up to the longest (one character short).
    st.sampled_from([*TAGS, *(tag[:-1] for tag in TAGS), "<", "</", "<tool_", "\n\n"]),
    st.sampled_from(
        [
            '{"name": "f", "arguments": {"x": 1}}',
            '{"name": "g"}',
            '{"name": "h", "arguments": {"s": "</tool"}}',
            '{"name": "bad", "arguments": {',
            "[]",
        ]
    ),
)
outputs = st.lists(_fragments, max_size=12).map("".join)


@st.composite
def output_and_split(draw):
    output = draw(outputs)
    cuts = sorted(draw(st.sets(st.integers(0, len(output)), max_size=len(output) + 1)))
    bounds = [0, *cuts, len(output)]
    return output, [output[a:b] for a, b in itertools.pairwise(bounds)]


@given(output_and_split(), st.booleans())
def test_any_split_of_the_output_folds_to_the_same_message(case, reasoning):
    output, chunks = case
    whole = folded([output], reasoning=reasoning)
    assert folded(chunks, reasoning=reasoning) == whole
    assert folded(list(output), reasoning=reasoning) == whole  # token by token: every cut at once


@given(outputs)
def test_with_thinking_off_and_no_tool_call_the_text_is_the_output(output):
    if "<tool_call>" in output:
        return
    assert folded(list(output), reasoning=False)["text"] == output.lstrip("\n")


safe_text = st.text(alphabet=st.characters(blacklist_characters="<"), max_size=20).map(
    lambda s: s.strip("\n")
)
args = st.dictionaries(safe_text, st.integers() | safe_text | st.booleans(), max_size=3)


@given(
    reasoning=st.booleans(),
    thought=safe_text,
    text=safe_text,
    calls=st.lists(
        st.tuples(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True), args), max_size=3
    ),
    data=st.data(),
)
def test_what_the_template_renders_for_a_reply_parses_back_to_that_reply(
    reasoning, thought, text, calls, data
):
    # The model is trained to produce the assistant turn the template renders; parsing it
    # must give back the message it was rendered from.
    if not reasoning:
        thought = ""
    message = Message(
        "assistant",
        text,
        reasoning=[ReasoningPart(thought)] if thought else [],
        tool_calls=[ToolCall(f"c{i}", name, a) for i, (name, a) in enumerate(calls)],
    )
    rendered = render_prompt(
        [Message("user", "q"), message], reasoning=reasoning, add_generation_prompt=False
    )
    reply = rendered.split("<|im_start|>assistant\n", 1)[1].removesuffix("<|im_end|>\n")
    if not reasoning:  # the prompt ended with the empty think block
        reply = reply.removeprefix("<think>\n\n</think>\n\n")
    cuts = sorted(data.draw(st.sets(st.integers(0, len(reply)), max_size=8)))
    bounds = [0, *cuts, len(reply)]
    acc, _ = parse([reply[a:b] for a, b in itertools.pairwise(bounds)], reasoning=reasoning)
    parsed = acc.message()
    assert parsed.text == text
    assert [p.text for p in parsed.reasoning] == ([thought] if thought else [])
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [
        (c.name, c.arguments) for c in message.tool_calls
    ]
