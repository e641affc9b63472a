"""The Qwen3 path on a tiny Qwen3-architecture GGUF written by the test suite (random
weights, so the text is noise: these tests hold the mechanics, not the words)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule_kit.models import qwen3
from ferrule_kit.models.lm import parse_infer_input
from ferrule_kit.testing import check_stream, fold

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": [{"type": "text", "text": "What is the weather in Oslo?"}]},
]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def lm(rt: Runtime, tiny_qwen3: Path) -> str:
    rt.define("llamacpp_language_model", "q", {"model": str(tiny_qwen3)})
    return "q"


@pytest.fixture(scope="module")
def vocab(tiny_qwen3: Path) -> Any:
    # Imported here, not at collection: the backend sets how llama.cpp's threads wait
    # before the library first loads (ferrule_llamacpp.openmp).
    from llama_cpp import Llama

    return Llama(str(tiny_qwen3), vocab_only=True, verbose=False)


def run(rt: Runtime, lm: str, **inputs) -> list[dict]:
    items = list(
        rt.call_iter_method(lm, "infer", {"messages": MESSAGES, "temperature": 0.0, **inputs})
    )
    check_stream(items)
    return items


def prompt_tokens(vocab: Any, **inputs) -> int:
    request = parse_infer_input({"messages": MESSAGES, **inputs})
    text = qwen3.render_prompt(request.messages, request.tools, reasoning=request.reasoning_on)
    return len(vocab.tokenize(text.encode(), add_bos=False, special=True))


def generated_text(items: list[dict]) -> str:
    """Everything the model produced, whichever delta kind the parser made of it."""
    out = []
    for item in items:
        message = item["message"]
        out.append(message["content"][0]["text"])
        out += [p["text"] for p in message.get("reasoning", ())]
        out += [c["function"]["arguments"] for c in message.get("tool_calls", ())]
    return "".join(out)


def test_llama_cpp_loads_the_qwen3_file_with_its_context(rt: Runtime, lm: str) -> None:
    model = rt.kernel.component(lm)
    assert model.architecture == "qwen3"
    assert model.n_ctx == 1024  # the file's qwen3.context_length


def test_special_tokens_are_single_tokens(vocab: Any) -> None:
    text = b"<|im_start|>user\n<think></think><tool_call>"
    tokens = vocab.tokenize(text, add_bos=False, special=True)
    for tag in (b"<|im_start|>", b"<think>", b"</think>", b"<tool_call>"):
        (token,) = vocab.tokenize(tag, add_bos=False, special=True)
        assert tokens.count(token) == 1
    assert vocab.detokenize(tokens, special=True) == text


@pytest.mark.parametrize("reasoning", [False, True])
def test_prompt_is_the_qwen3_render_and_usage_counts_it(
    rt: Runtime, lm: str, vocab: Any, reasoning: bool
) -> None:
    items = run(rt, lm, max_tokens=12, reasoning=reasoning)
    usage = items[-1]["usage"]
    assert usage["input_tokens"] == prompt_tokens(vocab, reasoning=reasoning)
    assert usage["output_tokens"] == 12
    assert items[-1]["finish_reason"] == "length"


def test_tools_are_rendered_into_the_prompt(rt: Runtime, lm: str, vocab: Any) -> None:
    items = run(rt, lm, max_tokens=4, tools=[WEATHER])
    assert items[-1]["usage"]["input_tokens"] == prompt_tokens(vocab, tools=[WEATHER])
    assert items[-1]["usage"]["input_tokens"] > prompt_tokens(vocab)


@pytest.mark.parametrize(
    "inputs",
    [
        {"reasoning": False},
        {"reasoning": True},
        {"reasoning": True, "tools": [WEATHER]},
        # a forced call is a grammar, answered without thinking: its prompt has no think turn
        {"reasoning": True, "tools": [WEATHER], "tool_choice": "required"},
    ],
    ids=["plain", "thinking", "tools", "forced-call"],
)
def test_count_tokens_is_what_infer_reads_and_decodes_nothing(
    rt: Runtime, lm: str, inputs: dict
) -> None:
    model = rt.kernel.component(lm)
    before = model.generated_tokens
    counted = rt.call_method(lm, "count_tokens", {"messages": MESSAGES, **inputs})
    assert model.generated_tokens == before
    usage = run(rt, lm, max_tokens=1, **inputs)[-1]["usage"]
    assert counted == {"input_tokens": usage["input_tokens"]}


def test_streams_in_many_items(rt: Runtime, lm: str) -> None:
    items = run(rt, lm, max_tokens=40)
    assert len(items) > 10
    assert generated_text(items)


def test_greedy_is_deterministic_and_stop_strings_cut_it(rt: Runtime, lm: str) -> None:
    first = generated_text(run(rt, lm, max_tokens=60))
    assert generated_text(run(rt, lm, max_tokens=60)) == first
    # A stop string taken from the middle of the output ends the reply just before it.
    middle = len(first) // 2
    stop = next(
        first[i : i + 2] for i in range(middle, len(first) - 1) if "\ufffd" not in first[i : i + 2]
    )
    items = run(rt, lm, max_tokens=60, stop=[stop])
    assert items[-1]["finish_reason"] == "stop"
    assert generated_text(items) == first[: first.index(stop)]


def test_the_reply_folds_into_a_message(rt: Runtime, lm: str) -> None:
    """With thinking on, the stream still folds into one message with its usage."""
    acc = fold(run(rt, lm, max_tokens=30, reasoning=True))
    assert acc.finish_reason == "length"
    assert acc.usage["output_tokens"] == 30


# -- a scripted Qwen3 model: thinking, text and a tool call through llama.cpp -------------


@pytest.fixture(scope="module")
def scripted(rt: Runtime, scripted_qwen3: Path) -> str:
    rt.define("local_language_model", "scripted", {"model": str(scripted_qwen3)})
    return "scripted"


def test_thinking_text_and_a_tool_call_come_out_as_their_deltas(rt: Runtime, scripted: str) -> None:
    items = run(rt, scripted, tools=[WEATHER], reasoning=True)
    acc = fold(items)
    message = acc.message()
    assert [p.text for p in message.reasoning] == ["The user wants the weather in Oslo."]
    assert message.text == "Let me check."
    (call,) = message.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Oslo"})
    assert call.id.startswith("call_")
    assert acc.finish_reason == "tool_calls"
    assert acc.usage["output_tokens"] == 7  # the script's pieces, not the end-of-turn token


def test_the_tool_result_goes_back_in_the_qwen3_prompt(
    rt: Runtime, scripted: str, scripted_qwen3: Path
) -> None:
    first = fold(run(rt, scripted, tools=[WEATHER], reasoning=True)).message()
    history = [
        *MESSAGES,
        first.to_dict(),
        {"role": "tool", "tool_call_id": first.tool_calls[0].id, "content": '{"temp": 3}'},
    ]
    items = list(
        rt.call_iter_method(
            scripted,
            "infer",
            {"messages": history, "tools": [WEATHER], "reasoning": True, "temperature": 0.0},
        )
    )
    check_stream(items)
    request = parse_infer_input({"messages": history, "tools": [WEATHER], "reasoning": True})
    prompt = qwen3.render_prompt(request.messages, request.tools, reasoning=True)
    assert '<tool_response>\n{"temp": 3}\n</tool_response>' in prompt
    from llama_cpp import Llama

    vocab = Llama(str(scripted_qwen3), vocab_only=True, verbose=False)
    expected = len(vocab.tokenize(prompt.encode(), add_bos=False, special=True))
    assert items[-1]["usage"]["input_tokens"] == expected


def test_without_thinking_the_tags_stay_text(rt: Runtime, scripted: str) -> None:
    message = fold(run(rt, scripted, tools=[WEATHER])).message()
    assert not message.reasoning
    assert message.text.startswith("<think>")
    assert [c.name for c in message.tool_calls] == ["get_weather"]
