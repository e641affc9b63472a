"""`ferrule_kit.models.qwen3.render_prompt` against Qwen3's official chat template, rendered by jinja2
the way transformers' apply_chat_template renders it.

The template (test_qwen3_chat_template.jinja) is Qwen/Qwen3-0.6B's ``chat_template``,
kept here verbatim as the reference the renderer must match.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, ReasoningPart, TextPart, ToolCall
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.models.lm import FunctionDescription, ToolDescription
from ferrule_kit.models.qwen3 import render_prompt
from hypothesis import given
from hypothesis import strategies as st
from jinja2.ext import loopcontrols  # a test dependency: pip install 'ferrule[test]'
from jinja2.sandbox import ImmutableSandboxedEnvironment
from parts_for_tests import ColorPart, StickerPart

TEMPLATE_PATH = Path(__file__).with_name("test_qwen3_chat_template.jinja")


def _reference_template():
    # transformers' environment: sandboxed, trim/lstrip blocks, loopcontrols, and a
    # `tojson` that neither sorts keys nor escapes HTML.
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.filters["tojson"] = lambda value, **_: json.dumps(value, ensure_ascii=False)
    return env.from_string(TEMPLATE_PATH.read_text())


TEMPLATE = _reference_template()


def template_input(message: Message) -> dict:
    """The dict a chat server hands the template for one of our messages."""
    out: dict = {"role": message.role, "content": message.text}
    if message.role == "assistant":
        out["reasoning_content"] = "".join(part.text for part in message.reasoning)
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ]
    return out


def reference(messages, tools=(), *, reasoning=False, add_generation_prompt=True) -> str:
    return TEMPLATE.render(
        messages=[template_input(m) for m in messages],
        tools=[
            {
                "type": "function",
                "function": {
                    "name": t.function.name,
                    "description": t.function.description,
                    "parameters": t.function.parameters,
                },
            }
            for t in tools
        ]
        or None,
        enable_thinking=reasoning,
        add_generation_prompt=add_generation_prompt,
    )


WEATHER = ToolDescription(
    FunctionDescription(
        "get_weather",
        "Current weather in a city",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
)


def test_system_and_user_with_thinking_off_ends_with_the_empty_think_block():
    messages = [Message("system", "Be brief."), Message("user", "Hi")]
    prompt = render_prompt(messages)
    assert prompt == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    assert prompt == reference(messages)


def test_thinking_on_leaves_the_generation_prompt_open():
    messages = [Message("user", "Hi")]
    assert (
        render_prompt(messages, reasoning=True)
        == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    )
    assert render_prompt(messages, reasoning=True) == reference(messages, reasoning=True)


def test_tools_block_tool_calls_and_grouped_tool_responses():
    messages = [
        Message("system", "You help."),
        Message("user", "Weather in Paris and Oslo?"),
        Message(
            "assistant",
            "",
            reasoning=[ReasoningPart("Two cities, two calls.")],
            tool_calls=[
                ToolCall("call_a", "get_weather", {"city": "Paris"}),
                ToolCall("call_b", "get_weather", {"city": "Oslo"}),
            ],
        ),
        Message("tool", '{"temp": 18}', tool_call_id="call_a"),
        Message("tool", '{"temp": 4}', tool_call_id="call_b"),
    ]
    prompt = render_prompt(messages, [WEATHER], reasoning=True)
    assert prompt == reference(messages, [WEATHER], reasoning=True)
    tool_json = json.dumps(
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather in a city",
                "parameters": WEATHER.function.parameters,
            },
        }
    )
    assert prompt.startswith("<|im_start|>system\nYou help.\n\n# Tools\n")
    assert f"<tools>\n{tool_json}\n</tools>" in prompt
    # The assistant turn after the last user query keeps its reasoning; calls follow it.
    assert (
        "<|im_start|>assistant\n<think>\nTwo cities, two calls.\n</think>\n\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call><|im_end|>\n'
    ) in prompt
    assert prompt.endswith(
        '<|im_start|>user\n<tool_response>\n{"temp": 18}\n</tool_response>\n'
        '<tool_response>\n{"temp": 4}\n</tool_response><|im_end|>\n<|im_start|>assistant\n'
    )


def test_reasoning_of_turns_before_the_last_query_is_dropped():
    messages = [
        Message("user", "Q1"),
        Message("assistant", "A1", reasoning=[ReasoningPart("old thoughts")]),
        Message("user", "Q2"),
    ]
    prompt = render_prompt(messages, reasoning=True)
    assert "old thoughts" not in prompt
    assert "<|im_start|>assistant\nA1<|im_end|>\n" in prompt
    assert prompt == reference(messages, reasoning=True)


def test_string_arguments_are_inserted_verbatim_as_the_template_does():
    messages = [
        Message("user", "go"),
        Message("assistant", "ok", tool_calls=[ToolCall("c", "f", '{"raw": true}')]),
    ]
    prompt = render_prompt(messages, add_generation_prompt=False)
    assert '\n<tool_call>\n{"name": "f", "arguments": {"raw": true}}\n</tool_call>' in prompt
    assert prompt == reference(messages, add_generation_prompt=False)


def test_parts_without_a_text_form_are_refused_with_the_field_named(sticker):
    with pytest.raises(UnsupportedContentError) as info:
        render_prompt(
            [Message("user", "hi"), Message("user", [TextPart("look"), StickerPart("s1")])]
        )
    assert info.value.errors[0]["path"] == "$.messages[1].content[1]"
    assert info.value.details == {
        **info.value.details,
        "provider": "qwen3",
        "content_type": "sticker",
    }


def test_parts_with_a_text_form_are_rendered_as_their_text(color):
    # e.g. a document's text: set apart from the text parts by blank lines
    message = Message("user", ["Which colour is this?", ColorPart("#ff8800"), "Name it."])
    prompt = render_prompt([message])
    assert (
        "<|im_start|>user\nWhich colour is this?\n\n[colour #ff8800]\n\nName it.<|im_end|>"
        in prompt
    )


def test_no_messages_is_invalid_input():
    with pytest.raises(InvalidInputError):
        render_prompt([])


# -- the property: any conversation renders as the template renders it -------------------

# Text that exercises the template's string tests and our escaping: tags, braces,
# quotes, backslashes, newlines at the edges, non-ASCII.
_PIECES = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
        "<|im_end|>",
        "\n",
        "\n\n",
        "{",
        "}",
        '"',
        "\\",
        "é",
        "😀",
        " ",
    ]
)
texts = st.lists(st.one_of(st.text(max_size=8), _PIECES), max_size=5).map("".join)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
arguments = st.one_of(st.dictionaries(texts, json_values, max_size=3), texts)
tool_calls = st.builds(ToolCall, id=st.text(max_size=5), name=texts, arguments=arguments)
_edges = st.sampled_from(["", "\n", "\n\n"])
# Newlines at the edges matter: the template strips them around reasoning and content.
edged = st.builds(lambda head, body, tail: head + body + tail, _edges, texts, _edges)
contents = st.one_of(edged, st.lists(edged.map(TextPart), max_size=3))


@st.composite
def messages_(draw):
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    if role == "assistant":
        return Message(
            "assistant",
            draw(contents),
            reasoning=draw(st.lists(edged.map(ReasoningPart), max_size=2)),
            tool_calls=draw(st.lists(tool_calls, max_size=3)),
        )
    if role == "user" and draw(st.booleans()):
        # A user turn that looks like a pasted tool response does not count as a query.
        return Message("user", "<tool_response>" + draw(texts) + "</tool_response>")
    # (a user message has content: Message refuses one without)
    said = draw(contents.filter(bool) if role == "user" else contents)
    return Message(role, said, tool_call_id="call_1" if role == "tool" else None)


tools = st.builds(
    ToolDescription,
    st.builds(
        FunctionDescription,
        name=texts,
        description=texts,
        parameters=st.dictionaries(texts, json_values, max_size=3),
    ),
)


@given(
    messages=st.lists(messages_(), min_size=1, max_size=8),
    tools=st.lists(tools, max_size=2),
    reasoning=st.booleans(),
    add_generation_prompt=st.booleans(),
)
def test_any_conversation_renders_exactly_as_the_official_template(
    messages, tools, reasoning, add_generation_prompt
):
    expected = reference(
        messages, tools, reasoning=reasoning, add_generation_prompt=add_generation_prompt
    )
    assert (
        render_prompt(
            messages, tools, reasoning=reasoning, add_generation_prompt=add_generation_prompt
        )
        == expected
    )
