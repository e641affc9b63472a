"""Real generation from the shipped SmolLM2-135M-Instruct GGUF, through a ferrule Runtime."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import jsonschema
import pytest
from ferrule import LocalModel, Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError, UnsupportedContentError
from ferrule_kit.models.lm import MessageAccumulator, parse_infer_input
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.testing import check_stream, fold
from ferrule_llamacpp import weights
from ferrule_llamacpp.backend import available_cores

QUESTION = [{"role": "user", "content": [{"type": "text", "text": "Name three colours."}]}]


@pytest.fixture(scope="module")
def lm(rt: Runtime, smollm2_gguf: Path) -> str:
    # The runtime seed's spelling: a tvm_language_model reaches this backend.
    rt.define("tvm_language_model", "smol", {"model": "SmolLM2-135M-Instruct", "seed": 7})
    return "smol"


def run(rt: Runtime, lm: str, **inputs) -> list[dict]:
    # The whole prompt read each time (no start kept from an earlier request): a prompt
    # read in other pieces may round differently, so a greedy reply repeats exactly only
    # when its prompt is read the same way.
    rt.kernel.component(lm).decoder.clear_cache()
    items = list(rt.call_iter_method(lm, "infer", {"messages": QUESTION, **inputs}))
    check_stream(items)
    return items


def text_of(items: list[dict]) -> str:
    return fold(items).message().text


def test_loads_with_the_models_context_and_all_cores(rt: Runtime, lm: str) -> None:
    model = rt.kernel.component(lm)
    assert model.architecture == "llama"
    assert model.n_ctx == 8192  # SmolLM2's trained context, not llama-cpp-python's 512
    assert model.threads == available_cores()


def test_greedy_reply_matches_llama_cpp_python_directly(
    rt: Runtime, lm: str, smollm2_gguf: Path
) -> None:
    """Same GGUF, same chat template, greedy, same repeat penalty (SmolLM2's default here):
    ferrule's stream reproduces the library's own create_chat_completion token for token."""
    from llama_cpp import Llama

    items = run(rt, lm, temperature=0.0, max_tokens=48)
    direct = Llama(str(smollm2_gguf), n_ctx=0, n_threads=available_cores(), verbose=False)
    try:
        reply = direct.create_chat_completion(
            [{"role": "user", "content": "Name three colours."}],
            temperature=0.0,
            max_tokens=48,
            repeat_penalty=weights.SMOLLM2_GENERATION["repeat_penalty"],
        )
    finally:
        direct.close()
    assert text_of(items) == reply["choices"][0]["message"]["content"]
    assert items[-1]["usage"] == {
        "input_tokens": reply["usage"]["prompt_tokens"],
        "output_tokens": reply["usage"]["completion_tokens"],
    }
    assert items[-1]["finish_reason"] == reply["choices"][0]["finish_reason"]
    assert len([i for i in items if i["message"]["content"][0]["text"]]) > 3, "it streams"


def test_max_tokens(rt: Runtime, lm: str) -> None:
    # Half of what the model says freely (whatever it says on this build): cut there.
    free = run(rt, lm, temperature=0.0, max_tokens=48)
    limit = max(1, free[-1]["usage"]["output_tokens"] // 2)
    items = run(rt, lm, temperature=0.0, max_tokens=limit)
    assert items[-1]["finish_reason"] == "length"
    assert items[-1]["usage"]["output_tokens"] == limit
    assert text_of(free).startswith(text_of(items))


def test_stop_string_cuts_the_reply(rt: Runtime, lm: str) -> None:
    full = text_of(run(rt, lm, temperature=0.0, max_tokens=48))
    stop = full[len(full) // 2 : len(full) // 2 + 3]
    items = run(rt, lm, temperature=0.0, max_tokens=48, stop=[stop])
    assert text_of(items) == full[: full.index(stop)]
    assert items[-1]["finish_reason"] == "stop"


def test_json_schema_output_is_valid_json(rt: Runtime, lm: str) -> None:
    schema = {
        "type": "object",
        # maxLength: the JSON ends within max_tokens whatever name the model makes up.
        "properties": {"name": {"type": "string", "maxLength": 40}, "age": {"type": "integer"}},
        "required": ["name", "age"],
        "additionalProperties": False,
    }
    messages = [{"role": "user", "content": "Describe a person as JSON with a name and an age."}]
    items = list(
        rt.call_iter_method(
            lm, "infer", {"messages": messages, "output_schema": schema, "max_tokens": 200}
        )
    )
    check_stream(items)
    assert items[-1]["finish_reason"] == "stop"
    jsonschema.validate(json.loads(text_of(items)), schema)


async def test_closing_the_stream_stops_generation(rt: Runtime, lm: str) -> None:
    model = rt.kernel.component(lm)
    before = model.generated_tokens
    stream = rt.acall_iter_method(
        lm, "infer", {"messages": QUESTION, "max_tokens": 2000, "temperature": 1.0}
    )
    async for item in stream:
        if item["message"]["content"][0]["text"]:
            break
    await stream.aclose()
    await asyncio.to_thread(model.wait_idle)
    # The worker stopped within a few tokens of the close, far short of max_tokens.
    assert model.generated_tokens - before < 50
    assert run(rt, lm, max_tokens=3)[-1]["usage"]["output_tokens"] <= 3, "still serves"


async def test_cancelling_while_the_prompt_is_read_aborts_it(rt: Runtime, lm: str) -> None:
    """A long prompt is read in chunks; a cancelled request leaves between two: its prompt
    is never read to the end."""
    model = rt.kernel.component(lm)
    before = model.generated_tokens
    long_prompt = " ".join(f"word{i}" for i in range(1600))  # ~7300 tokens of prompt
    stream = rt.acall_iter_method(
        lm, "infer", {"messages": [{"role": "user", "content": long_prompt}], "max_tokens": 1}
    )
    task = asyncio.ensure_future(stream.__anext__())
    await asyncio.sleep(0.3)  # the worker is reading the prompt (it takes seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await stream.aclose()
    await asyncio.to_thread(model.wait_idle)
    prompt_tokens = len(model.model.tokenize(long_prompt.encode(), False, False))
    assert max(model.decoder.slot_tokens()) < prompt_tokens, "the prompt was not read to the end"
    assert model.generated_tokens == before
    assert run(rt, lm, max_tokens=2)[-1]["finish_reason"] in ("length", "stop"), "still serves"


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
#: A conversation with a system message, a tool call and its result.
CALLED = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "Weather in Oslo?"},
    {
        "role": "assistant",
        "content": [],
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 3}'},
]


def test_tools_are_offered_in_smollm2s_function_calling_format(rt: Runtime, lm: str) -> None:
    """The tools go into the system turn as one JSON list, after the caller's system
    message; an earlier call is the assistant's ``<tool_call>[...]``, its result a
    ``<tool_response>`` user turn; all rendered by SmolLM2's own template (ChatML)."""
    model = rt.kernel.component(lm)
    request = parse_infer_input({"messages": CALLED, "tools": [WEATHER]})
    prompt = model._format.turn(request).prompt
    system, rest = prompt.split("<|im_end|>\n", 1)
    assert system.startswith("<|im_start|>system\nAnswer briefly.\n\nYou are an expert in")
    tools = system[system.index("<tools>") + 7 : system.index("</tools>")]
    assert json.loads(tools) == [WEATHER]
    assert rest == (
        "<|im_start|>user\nWeather in Oslo?<|im_end|>\n"
        '<|im_start|>assistant\n<tool_call>[\n{"name": "get_weather", "arguments": '
        '{"city": "Oslo"}}\n]</tool_call><|im_end|>\n'
        '<|im_start|>user\n<tool_response>\n{"temp": 3}\n</tool_response><|im_end|>\n'
        "<|im_start|>assistant\n"
    )


def test_smollm2s_call_list_is_parsed_into_tool_calls(rt: Runtime, lm: str) -> None:
    """What SmolLM2 writes for calls (a JSON list in ``<tool_call>``) becomes tool calls;
    ``[]`` is no call."""
    turn = rt.kernel.component(lm)._format.turn(
        parse_infer_input({"messages": QUESTION, "tools": [WEATHER]})
    )
    acc = MessageAccumulator()
    output = 'Checking.\n<tool_call>[\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n]'
    for chunk in (output[:14], output[14:40], output[40:], "</tool_call>"):
        for item in turn.parser.feed(chunk):
            acc.add(item)
    for item in turn.parser.close():
        acc.add(item)
    assert acc.message().text == "Checking."
    assert [(c.name, c.arguments) for c in acc.tool_calls()] == [("get_weather", {"city": "Oslo"})]
    assert turn.parser.saw_tool_calls


def test_a_request_with_tools_runs_to_a_reply(rt: Runtime, lm: str) -> None:
    """The 135M model rarely calls a tool, but a request offering tools is served: a text
    reply, or well-formed calls with finish_reason "tool_calls"."""
    items = run(rt, lm, tools=[WEATHER], max_tokens=48, temperature=0.0)
    acc = fold(items)
    calls = acc.tool_calls()  # raises on a malformed call
    if items[-1]["finish_reason"] == "tool_calls":
        assert calls
    else:
        assert acc.message().text.strip()


def test_a_forced_tool_choice_makes_it_call_the_tool(rt: Runtime, lm: str) -> None:
    """``tool_choice: "required"`` constrains the reply to one call of an offered tool."""
    items = run(rt, lm, tools=[WEATHER], tool_choice="required", max_tokens=64)
    (call,) = fold(items).tool_calls()
    assert call.name == "get_weather" and isinstance(call.arguments, dict)
    assert items[-1]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize(
    "inputs",
    [
        {"messages": QUESTION},
        {"messages": [{"role": "system", "content": "Answer briefly."}, *QUESTION]},
        {"messages": CALLED, "tools": [WEATHER]},
        {"messages": QUESTION, "tools": [WEATHER], "tool_choice": "none"},
        {"messages": QUESTION, "tools": [WEATHER], "tool_choice": "required"},
    ],
    ids=["plain", "system", "tools-and-a-call", "tool-choice-none", "forced-call"],
)
def test_count_tokens_is_what_infer_reads_and_decodes_nothing(
    rt: Runtime, lm: str, inputs: dict
) -> None:
    model = rt.kernel.component(lm)
    before = model.generated_tokens
    counted = rt.call_method(lm, "count_tokens", inputs)
    assert model.generated_tokens == before
    usage = run(rt, lm, **inputs, max_tokens=1, temperature=0.0)[-1]["usage"]
    assert counted == {"input_tokens": usage["input_tokens"]}
    plain = rt.call_method(lm, "count_tokens", {"messages": inputs["messages"]})
    if inputs.get("tools") and inputs.get("tool_choice") != "none":  # the tools are read
        assert counted["input_tokens"] > plain["input_tokens"]
    else:
        assert counted == plain


def test_other_chat_templates_refuse_tools_with_a_typed_error(rt: Runtime, lm: str) -> None:
    """A chat model with no known tool-call format refuses tools rather than guess one."""
    from ferrule_llamacpp.attributes import LlamaCppAttributes
    from ferrule_llamacpp.formats import ChatTemplateFormat

    model = rt.kernel.component(lm)
    plain = ChatTemplateFormat(
        LlamaCppAttributes(model="SmolLM2-135M-Instruct"),
        model.model,
        model.model.metadata(),
        "SmolLM2-135M-Instruct",
        {},
    )
    with pytest.raises(InvalidInputError) as info:
        plain.turn(parse_infer_input({"messages": QUESTION, "tools": [WEATHER]}))
    assert info.value.errors[0]["path"] == "$.tools"
    assert "Qwen3" in info.value.message


def test_images_are_refused_naming_the_part(rt: Runtime, lm: str) -> None:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
            ],
        }
    ]
    with pytest.raises(UnsupportedContentError) as info:
        list(rt.call_iter_method(lm, "infer", {"messages": messages}))
    assert info.value.errors[0]["path"] == "$.messages[0].content[1]"


def test_prompt_longer_than_the_context_is_refused(rt: Runtime, lm: str) -> None:
    huge = "hello " * 9000
    with pytest.raises(InvalidInputError) as info:
        list(rt.call_iter_method(lm, "infer", {"messages": [{"role": "user", "content": huge}]}))
    assert "8192" in info.value.message


def test_local_model_default_runs_smollm2_offline(smollm2_gguf: Path) -> None:
    with Runtime() as runtime:
        route = LocalModel().route(runtime.kernel)
        assert route.component_type == "llamacpp_language_model"
        assert route.attributes == {"model": DEFAULT_LOCAL_MODEL}
        runtime.define(route.component_type, "default", {**route.attributes, "download": False})
        items = list(
            runtime.call_iter_method("default", "infer", {"messages": QUESTION, "max_tokens": 8})
        )
        check_stream(items)
        assert text_of(items).strip()


def test_unknown_model_file_is_a_typed_error() -> None:
    with Runtime() as runtime, pytest.raises(InvalidInputError) as info:
        runtime.define("llamacpp_language_model", "x", {"model": "/nonexistent/model.gguf"})
    assert "/nonexistent/model.gguf" in info.value.message


def test_a_broken_gguf_is_a_model_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with Runtime() as runtime, pytest.raises(ModelError) as info:
        runtime.define("llamacpp_language_model", "x", {"model": str(bad)})
    assert str(bad) in info.value.message


async def test_deleting_the_model_under_a_live_stream_ends_it_with_a_typed_error(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    await rt.adefine("llamacpp_language_model", "doomed", {"model": str(smollm2_gguf)})
    stream = rt.acall_iter_method("doomed", "infer", {"messages": QUESTION, "max_tokens": 2000})
    await stream.__anext__()
    await rt.adelete("doomed")
    with pytest.raises(ModelError, match="deleted while generating"):
        async for _ in stream:
            pass


async def test_the_same_schema_twice_gives_json_twice(rt: Runtime, lm: str) -> None:
    schema = {
        "type": "object",
        "properties": {"colour": {"enum": ["red", "green", "blue"]}},
        "required": ["colour"],
    }
    for _ in range(2):
        items = [
            i
            async for i in rt.acall_iter_method(
                lm, "infer", {"messages": QUESTION, "output_schema": schema, "max_tokens": 60}
            )
        ]
        assert json.loads(text_of(items))["colour"] in ("red", "green", "blue")


def test_the_readme_poem_ends_on_its_own(rt: Runtime, smollm2_gguf: Path) -> None:
    """The README's first prompt: with repeat penalty 1.0 and no cap, SmolLM2 repeated one
    line until its 8192-token context was full. Its defaults now end it: on its own (an
    end-of-turn token) for nearly every seed, and within the cap always."""
    poem = [{"role": "user", "content": "Please give me a short poem about AI"}]
    reasons = []
    for seed in range(4):
        rt.define("llamacpp_language_model", f"poem{seed}", {"seed": seed})
        items = list(rt.call_iter_method(f"poem{seed}", "infer", {"messages": poem}))
        rt.delete(f"poem{seed}")
        check_stream(items)
        assert items[-1]["usage"]["output_tokens"] <= weights.SMOLLM2_GENERATION["max_tokens"]
        assert len(text_of(items).split()) > 10
        reasons.append(items[-1]["finish_reason"])
    assert reasons.count("stop") >= 3, reasons


def test_an_aliased_qwen_id_runs_the_offline_model_without_qwen_weights(
    smollm2_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The seeds name Qwen/Qwen3-0.6B; $FERRULE_MODEL_ALIASES runs them here unchanged,
    # through LocalModel and through a component defined by that id alike.
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", f"Qwen/Qwen3-0.6B={DEFAULT_LOCAL_MODEL}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with Runtime() as runtime:
        route = LocalModel("Qwen/Qwen3-0.6B").route(runtime.kernel)
        assert route.attributes == {"model": DEFAULT_LOCAL_MODEL}
        runtime.define("tvm_language_model", "qwen", {"model": "Qwen/Qwen3-0.6B"})
        items = list(
            runtime.call_iter_method("qwen", "infer", {"messages": QUESTION, "max_tokens": 8})
        )
        check_stream(items)
        assert text_of(items).strip()
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", "Qwen/Qwen3-0.6B")
    with Runtime() as runtime, pytest.raises(InvalidInputError) as info:
        runtime.define("tvm_language_model", "qwen", {"model": "Qwen/Qwen3-0.6B"})
    assert "FERRULE_MODEL_ALIASES" in info.value.message
