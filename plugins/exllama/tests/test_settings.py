"""What ferrule-exllama hands exllamav2 for a request, and how it reads exllamav2's results.

No GPU here: these are the pure functions the backend passes straight to
``ExLlamaV2Sampler.Settings``, ``ExLlamaV2DynamicJob`` and the cache constructor. The
result dicts below are written by hand in the shape exllamav2's dynamic generator
documents for ``iterate()``; they are not model output.
"""

from __future__ import annotations

import itertools
import json

import pytest
from ferrule_exllama.attributes import ExLlamaAttributes
from ferrule_exllama.settings import (
    CACHE_CLASSES,
    PAGE_SIZE,
    ResultReader,
    cache_tokens,
    generator_arguments,
    job_arguments,
    plan_turn,
    result_fields,
    sampler_settings,
    stop_conditions,
    token_budget,
)
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message
from ferrule_kit.errors import InvalidToolCallError
from ferrule_kit.models import qwen3
from ferrule_kit.models.lm import InferInput, MessageAccumulator
from hypothesis import given
from hypothesis import strategies as st

MODEL = "Qwen/Qwen3-8B"
ASK = [Message("user", "What is the capital of France?")]

#: ExLlamaV2Sampler.Settings fields (exllamav2/generator/sampler.py, 0.3.x) we set.
SAMPLER_FIELDS = {
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "token_repetition_penalty",
    "token_presence_penalty",
}


def request(**fields) -> InferInput:
    return InferInput(messages=fields.pop("messages", ASK), **fields)


@pytest.mark.parametrize("reasoning", [True, False])
def test_sampling_defaults_to_qwens_values_for_the_mode(reasoning):
    sampler = sampler_settings(request(reasoning=reasoning), ExLlamaAttributes(MODEL), reasoning)
    assert set(sampler) == SAMPLER_FIELDS
    assert {k: sampler[k] for k in ("temperature", "top_p", "top_k", "min_p")} == qwen3.SAMPLING[
        reasoning
    ]
    # exllamav2's own default repetition penalty (1.025) is not Qwen's
    assert sampler["token_repetition_penalty"] == 1.0
    assert sampler["token_presence_penalty"] == 0.0


def test_the_request_overrides_the_component_which_overrides_qwen():
    attributes = ExLlamaAttributes(MODEL, temperature=0.3, top_k=5, min_p=0.1, presence_penalty=1.5)
    sampler = sampler_settings(request(temperature=0.9), attributes, reasoning=False)
    assert sampler["temperature"] == 0.9  # request
    assert sampler["top_k"] == 5 and sampler["min_p"] == 0.1  # component
    assert sampler["top_p"] == qwen3.SAMPLING[False]["top_p"]  # Qwen
    assert sampler["token_presence_penalty"] == 1.5


def test_temperature_zero_is_greedy_in_exllamav2s_terms():
    sampler = sampler_settings(request(temperature=0.0), ExLlamaAttributes(MODEL), reasoning=False)
    assert sampler["top_k"] == 1 and sampler["top_p"] == 0.0 and sampler["temperature"] == 1.0


def test_cache_modes_map_to_exllamav2_cache_classes():
    assert CACHE_CLASSES == {
        "fp16": "ExLlamaV2Cache",
        "q8": "ExLlamaV2Cache_Q8",
        "q4": "ExLlamaV2Cache_Q4",
    }


@given(max_seq_len=st.integers(256, 200_000), wanted=st.none() | st.integers(256, 400_000))
def test_the_cache_is_whole_pages_and_holds_at_least_one_sequence(max_seq_len, wanted):
    tokens = cache_tokens(ExLlamaAttributes(MODEL, cache_tokens=wanted), max_seq_len)
    assert tokens % PAGE_SIZE == 0
    assert tokens >= max(max_seq_len, wanted or 0)
    assert tokens - max(max_seq_len, wanted or 0) < PAGE_SIZE


def test_token_budget_is_the_request_limit_within_the_sequence():
    assert token_budget(100, 4096, None) == 3996
    assert token_budget(100, 4096, 50) == 50
    assert token_budget(4000, 4096, 500) == 96
    with pytest.raises(InvalidInputError) as info:
        token_budget(4096, 4096, 10)
    assert info.value.errors[0]["path"] == "$.messages"


def test_stop_conditions_are_token_ids_then_the_requests_strings():
    assert stop_conditions([151645, 151643, 151645], ["END", "", "END", "\n\n"]) == [
        151645,
        151643,
        "END",
        "\n\n",
    ]


def test_plan_renders_the_qwen3_prompt_with_the_modes_sampling():
    turn = plan_turn(request(reasoning=True, stop=["###"]), ExLlamaAttributes(MODEL))
    assert turn.prompt == qwen3.render_prompt(ASK, reasoning=True)
    assert turn.reasoning is True
    assert turn.sampler["temperature"] == qwen3.SAMPLING[True]["temperature"]
    assert turn.stop == ["###"]


@pytest.mark.parametrize("switch", [True, "minimal", "low", "medium", "high"])
def test_every_value_of_reasoning_but_false_turns_thinking_on(switch):
    assert plan_turn(request(reasoning=switch), ExLlamaAttributes(MODEL)).reasoning is True


def test_an_output_schema_turns_thinking_off():
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    turn = plan_turn(request(reasoning=True, output_schema=schema), ExLlamaAttributes(MODEL))
    assert turn.reasoning is False
    assert turn.prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert turn.output_schema == schema


def test_job_arguments():
    turn = plan_turn(request(stop=["STOP"]), ExLlamaAttributes(MODEL))
    arguments = job_arguments(
        turn,
        prompt_tokens=20,
        max_seq_len=1024,
        max_tokens=64,
        stop_token_ids=[151645, 151643],
        seed=7,
        constrained=True,
    )
    assert arguments == {
        "max_new_tokens": 64,
        "stop_conditions": [151645, 151643, "STOP"],
        "decode_special_tokens": True,
        "seed": 7,
        "filter_prefer_eos": True,
    }


# -- reading results ----------------------------------------------------------------------


def streaming(text: str = "", **fields) -> dict:
    return {"stage": "streaming", "eos": False, "serial": 0, "text": text, **fields}


def end(text: str = "", reason: str = "stop_token", **fields) -> dict:
    fields.setdefault("prompt_tokens", 12)
    fields.setdefault("new_tokens", 30)
    return {
        "stage": "streaming",
        "eos": True,
        "eos_reason": reason,
        "serial": 0,
        "text": text,
        **fields,
    }


def read_all(results, *, reasoning: bool) -> tuple[list[dict], MessageAccumulator]:
    reader = ResultReader(reasoning)
    items = [item for result in results for item in reader.read(result)]
    assert reader.finished
    acc = MessageAccumulator()
    for item in items:
        acc.add(item)
    return items, acc


def test_a_thinking_reply_streams_as_reasoning_then_text_and_ends_with_usage():
    results = [
        {"stage": "started", "eos": False, "serial": 0},
        {"stage": "prefill", "eos": False, "curr_progress": 12, "max_progress": 12},
        streaming("<thi"),
        streaming("nk>\nParis is"),
        streaming(" in France.\n</th"),
        streaming("ink>\n\nParis."),
        end(held={"text": "<|im_end|>"}, eos_triggering_token_str="<|im_end|>"),
    ]
    items, acc = read_all(results, reasoning=True)
    message = acc.message()
    assert [p.text for p in message.reasoning] == ["Paris is in France."]
    assert message.text == "Paris."
    assert items[-1]["finish_reason"] == "stop"
    assert items[-1]["usage"] == {"input_tokens": 12, "output_tokens": 30}
    assert all(item["finish_reason"] is None for item in items[:-1])


def test_text_held_back_for_a_stop_string_is_not_lost_at_a_stop_token():
    # "Done" was held (it might have begun the stop string "Done!!"), then <|im_end|> came.
    results = [
        streaming("All "),
        end(held={"text": "Done<|im_end|>"}, eos_triggering_token_str="<|im_end|>"),
    ]
    _, acc = read_all(results, reasoning=False)
    assert acc.message().text == "All Done"


def test_a_stop_string_ends_the_reply_with_the_text_before_it():
    _, acc = read_all(
        [streaming("one two"), end(" three", reason="stop_string", held={"text": " four"})],
        reasoning=False,
    )
    assert acc.message().text == "one two three"
    assert acc.finish_reason == "stop"


def test_max_new_tokens_is_length():
    items, _ = read_all([streaming("a"), end("b", reason="max_new_tokens")], reasoning=False)
    assert items[-1]["finish_reason"] == "length"


def test_tool_calls_finish_with_tool_calls():
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    items, acc = read_all(
        [streaming("Checking.\n" + call[:20]), streaming(call[20:]), end()], reasoning=False
    )
    assert items[-1]["finish_reason"] == "tool_calls"
    (tool_call,) = acc.tool_calls()
    assert (tool_call.name, tool_call.arguments) == ("get_weather", {"city": "Oslo"})
    assert acc.message().text == "Checking."


def test_a_reply_cut_inside_a_tool_call_is_an_invalid_call_and_length():
    items, acc = read_all(
        [streaming('<tool_call>\n{"name": "f", "arguments": {"a"'), end(reason="max_new_tokens")],
        reasoning=False,
    )
    assert items[-1]["finish_reason"] == "length"
    with pytest.raises(InvalidToolCallError):
        acc.tool_calls()


def test_a_constrained_reply_is_its_json_text():
    _, acc = read_all(
        [streaming('{"city": '), streaming('"Paris"}'), end(reason="end_filter")], reasoning=False
    )
    assert json.loads(acc.message().text) == {"city": "Paris"}
    assert acc.finish_reason == "stop"


@given(st.text(max_size=40), st.data())
def test_any_split_of_the_text_over_results_reads_the_same(text, data):
    cuts = sorted(data.draw(st.sets(st.integers(0, len(text)), max_size=6)))
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    _, whole = read_all([streaming(text), end()], reasoning=False)
    _, split = read_all([*map(streaming, pieces), end()], reasoning=False)
    assert split.message().text == whole.message().text == text.lstrip("\n")


def test_result_fields_keep_plain_values_only():
    tensor = object()  # stands for the torch tensors a real result carries
    result = end(
        "x",
        job=tensor,
        token_ids=tensor,
        held={"text": "y", "token_ids": tensor},
        eos_triggering_token_id=151645,
        eos_triggering_token_str="<|im_end|>",
        full_completion="xy",
        time_prefill=0.1,
    )
    fields = result_fields(result)
    assert fields == {
        "stage": "streaming",
        "text": "x",
        "eos": True,
        "eos_reason": "stop_token",
        "prompt_tokens": 12,
        "new_tokens": 30,
        "eos_triggering_token_str": "<|im_end|>",
        "held": {"text": "y"},
    }


def test_concurrent_requests_are_batched_only_with_paged_attention():
    # exllamav2's unpaged generator (no flash-attn) holds one sequence: requests queue.
    assert generator_arguments(paged=True) == {"paged": True}
    assert generator_arguments(paged=False) == {"paged": False, "max_batch_size": 1}
    assert generator_arguments(paged=True, parallel=4) == {"paged": True, "max_batch_size": 4}
    # Unpaged, exllamav2 holds one sequence whatever the component asks for.
    assert generator_arguments(paged=False, parallel=4) == {"paged": False, "max_batch_size": 1}
