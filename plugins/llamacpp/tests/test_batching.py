"""Continuous batching on the shipped SmolLM2 model in deterministic mode: concurrent requests
are decoded together, and each one's greedy tokens are exactly those it gets alone (the
default, packed mode is tested in test_packed.py)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing import check_stream

SCHEMA = {
    "type": "object",
    # maxLength: the JSON ends within the request's max_tokens whatever the model writes.
    "properties": {
        "colour": {"enum": ["red", "green", "blue"]},
        "why": {"type": "string", "maxLength": 60},
    },
    "required": ["colour", "why"],
    "additionalProperties": False,
}


def ask(text: str, **options: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], "temperature": 0.0, **options}


#: Different prompts, lengths and ends: a token limit, stop strings, a JSON schema, one that
#: is cancelled after a few chunks. Keys of the test's own, not the request's:
#: "cancel_after" (text items before the stream is closed), "stop_at_word" (the request
#: stops at that word of the reply it gives without a stop string) and "limit_half" (its
#: max_tokens becomes half the tokens of that reply): no test depends on what the model
#: happens to say on this build of llama.cpp, only on greedy decoding being repeatable.
BASE_REQUESTS: list[dict[str, Any]] = [
    {**ask("Name three colours.", max_tokens=24), "limit_half": True},
    ask("Write a short poem about the sea at night, with the moon and the wind.", max_tokens=30),
    {**ask("Explain in two sentences what 2+2 is.", max_tokens=16), "stop_at_word": 2},
    {
        **ask("Tell me a long story about a dragon who bakes bread.", max_tokens=40),
        "cancel_after": 4,
    },
    ask("Pick a colour and say why, as JSON.", max_tokens=60, output_schema=SCHEMA),
    {**ask("List the days of the week.", max_tokens=28), "stop_at_word": 4},
    ask("Explain in one sentence what a CPU does.", max_tokens=20),
    {
        **ask("Say hello in French, Spanish and German, one per line.", max_tokens=18),
        "stop_at_word": 3,
    },
]


def stop_at(text: str, word: int) -> str:
    """A stop string that cuts ``text`` after some text: `` <the word-th word>`` or a later one."""
    for candidate in text.split()[word:]:
        stop = " " + candidate
        if text[: text.index(stop)].strip():
            return stop
    pytest.fail(f"the reply has too few words to stop in: {text!r}")


@pytest.fixture(scope="module")
def free(rt: Runtime, lm: str) -> dict[int, list[dict[str, Any]]]:
    """The requests that stop at a word or get half a limit, run without either first."""

    async def run_all() -> dict[int, list[dict[str, Any]]]:
        test_keys = ("stop_at_word", "limit_half")
        out = {}
        for index, request in enumerate(BASE_REQUESTS):
            if any(key in request for key in test_keys):
                plain = {k: v for k, v in request.items() if k not in test_keys}
                out[index] = await stream(rt, lm, plain)
        return out

    return asyncio.run(run_all())


@pytest.fixture(scope="module")
def requests(free: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """BASE_REQUESTS with their stop strings and limits taken from their free replies."""
    out = []
    for index, request in enumerate(BASE_REQUESTS):
        request = dict(request)
        if request.pop("stop_at_word", None) is not None:
            request["stop"] = [stop_at(text_of(free[index]), BASE_REQUESTS[index]["stop_at_word"])]
        if request.pop("limit_half", None):
            request["max_tokens"] = max(1, free[index][-1]["usage"]["output_tokens"] // 2)
        out.append(request)
    return out


def text_of(items: list[dict[str, Any]]) -> str:
    return "".join(i["message"]["content"][0]["text"] for i in items)


@pytest.fixture(scope="module")
def lm(rt: Runtime, smollm2_gguf: Path) -> str:
    attributes = {"parallel": 8, "n_ctx": 1024, "seed": 3, "deterministic": True}
    rt.define("llamacpp_language_model", "batched", attributes)
    return "batched"


async def stream(rt: Runtime, lm: str, request: dict[str, Any]) -> list[dict[str, Any]]:
    """The items of one request (all of them, or the first ``cancel_after`` text items and
    then the stream closed)."""
    request = dict(request)
    cancel_after = request.pop("cancel_after", None)
    items = []
    iterator = rt.acall_iter_method(lm, "infer", request)
    async for item in iterator:
        items.append(item)
        texts = [i for i in items if i["message"]["content"][0]["text"]]
        if cancel_after is not None and len(texts) == cancel_after:
            await iterator.aclose()
            break
    return items


@pytest.fixture(scope="module")
def alone(rt: Runtime, lm: str, requests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each request run on its own, one after another (uncancelled)."""

    async def run_all() -> list[list[dict[str, Any]]]:
        out = []
        for request in requests:
            uncancelled = {k: v for k, v in request.items() if k != "cancel_after"}
            out.append(await stream(rt, lm, uncancelled))
        return out

    results = asyncio.run(run_all())
    for items in results:
        check_stream(items)
    return results


@pytest.mark.parametrize("concurrent", [1, 2, 4, 8])
async def test_greedy_tokens_are_the_same_alone_and_batched(
    rt: Runtime,
    lm: str,
    requests: list[dict[str, Any]],
    alone: list[list[dict[str, Any]]],
    concurrent: int,
) -> None:
    model = rt.kernel.component(lm)
    decoder = model.decoder
    # Rotate which requests run together, so each count mixes different kinds.
    chosen = [(concurrent + i) % len(requests) for i in range(concurrent)]
    decoder.peak_batch = 0
    results = await asyncio.gather(*(stream(rt, lm, requests[i]) for i in chosen))
    await asyncio.to_thread(model.wait_idle)
    # Decoded together (how many overlap depends on when each arrives and ends).
    assert decoder.peak_batch >= min(concurrent, 2)
    for index, items in zip(chosen, results, strict=True):
        reference = alone[index]
        if "cancel_after" in requests[index]:
            # Cut off: its chunks so far are the first chunks of the whole reply.
            assert items == reference[: len(items)]
            assert items[-1].get("finish_reason") is None
        else:
            assert items == reference, (
                f"request {index} differs when run with {concurrent - 1} others"
            )


def test_the_schema_request_gives_valid_json(alone: list[list[dict[str, Any]]]) -> None:
    text = text_of(alone[4])
    assert json.loads(text)["colour"] in ("red", "green", "blue")
    assert alone[4][-1]["finish_reason"] == "stop"


def test_stops_and_limits_apply_per_request(
    requests: list[dict[str, Any]],
    free: dict[int, list[dict[str, Any]]],
    alone: list[list[dict[str, Any]]],
) -> None:
    ends = [items[-1] for items in alone]
    texts = [text_of(items) for items in alone]
    # The limit cut the reply at that many tokens, where the free reply went on.
    limit = requests[0]["max_tokens"]
    assert ends[0]["finish_reason"] == "length" and ends[0]["usage"]["output_tokens"] == limit
    assert text_of(free[0]).startswith(texts[0]) and len(texts[0]) < len(text_of(free[0]))
    # Each stop string cut its own reply where it first came in the free reply.
    for index in (2, 5, 7):
        (stop,) = requests[index]["stop"]
        whole = text_of(free[index])
        assert ends[index]["finish_reason"] == "stop", texts[index]
        assert texts[index] == whole[: whole.index(stop)] and texts[index].strip()


async def test_past_the_cap_requests_wait_in_line_in_order(
    rt: Runtime, smollm2_gguf: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await rt.adefine("llamacpp_language_model", "two", {"parallel": 2, "n_ctx": 512, "seed": 1})
    decoder = rt.kernel.component("two").decoder
    started: list[int] = []

    async def run(index: int) -> None:
        request = ask(f"Count to {index + 3}.", max_tokens=6)
        async for _ in rt.acall_iter_method("two", "infer", request):
            if index not in started:
                started.append(index)

    tasks = []
    caplog.set_level(logging.INFO, logger="ferrule.llamacpp")
    for index in range(5):  # one after another, so they reach the model in this order
        tasks.append(asyncio.ensure_future(run(index)))
        while decoder.running + decoder.waiting + sum(t.done() for t in tasks) < index + 1:
            await asyncio.sleep(0.005)
    await asyncio.gather(*tasks)
    assert decoder.peak_batch <= 2
    # The three that waited started in the order they came, after the first two.
    assert started[2:] == [2, 3, 4]
    queued = [r for r in caplog.records if getattr(r, "ferrule_event", "") == "request_queued"]
    assert queued and all(r.ferrule_fields["parallel"] == 2 for r in queued)
    await rt.adelete("two")


def test_parallel_is_validated(rt: Runtime) -> None:
    with pytest.raises(InvalidInputError) as info:
        rt.define("llamacpp_language_model", "bad", {"parallel": 0})
    assert "parallel" in info.value.errors[0]["path"]


def test_each_sequence_gets_the_context_it_was_given(rt: Runtime, lm: str) -> None:
    model = rt.kernel.component(lm)
    assert (model.n_ctx, model.parallel) == (1024, 8)
    too_long = " ".join(f"w{i}" for i in range(900))  # > 1024 tokens with the template
    with pytest.raises(InvalidInputError) as info:
        list(rt.call_iter_method(lm, "infer", ask(too_long)))
    assert "1024" in info.value.message


def test_ferrule_batch_decodes_its_runs_together(tmp_path: Path, smollm2_gguf: Path) -> None:
    """``ferrule batch --concurrency N`` on a local model: N sequences decoded at once (the
    model's ``parallel``), and the progress line gives tokens/s."""
    from ferrule.cli.batch import _BatchModel
    from ferrule.cli.chat import ModelId

    with Runtime() as runtime:
        route = _BatchModel(ModelId("SmolLM2-135M-Instruct", None, {}), 3).route(runtime.kernel)
    assert route.attributes["parallel"] == 3

    prompts = ["Name a colour.", "Name a fruit.", "Name a city.", "Name an animal."]
    (tmp_path / "in.jsonl").write_text(
        "".join(json.dumps({"id": i, "prompt": p}) + "\n" for i, p in enumerate(prompts))
    )
    command = [sys.executable, "-m", "ferrule.cli", "batch", "in.jsonl", "-o", "out.jsonl"]
    done = subprocess.run(
        [*command, "-m", "SmolLM2-135M-Instruct", "--concurrency", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert sorted(line["id"] for line in lines) == ["0", "1", "2", "3"]
    assert all(line["output"].strip() for line in lines)
    rates = re.findall(r"([\d.]+) tokens/s", done.stderr)
    assert rates and float(rates[-1]) > 0, done.stderr


async def test_a_request_gets_the_start_it_shares_with_another_slot_loaded(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    """Requests that share a long system prompt (the default mode): one that lands in an
    empty slot gets the shared start loaded from where it is held and reads only the
    rest. (Read in other pieces than alone, its reply may round differently: see
    test_packed.py; the deterministic mode copies nothing.)"""
    await rt.adefine("llamacpp_language_model", "sharing", {"parallel": 3, "n_ctx": 512})
    decoder = rt.kernel.component("sharing").decoder
    system = "You are a careful assistant who answers briefly and plainly. " * 8

    def request(question: str) -> dict[str, Any]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
        return {"messages": messages, "temperature": 0.0, "max_tokens": 10}

    await stream(rt, "sharing", request("Name a colour."))
    assert decoder.slot_tokens()[1:] == [0, 0]
    read_before = decoder.stats.prompt[1]
    # Two at once: one takes slot 0 (the shared start held there), the other slot 1,
    # which gets that start loaded: from slot 0, or from the prompt cache, which kept
    # slot 0's first conversation when a new question took the slot.
    both = await asyncio.gather(
        stream(rt, "sharing", request("Name a colour.")),
        stream(rt, "sharing", request("Name a fruit.")),
    )
    assert decoder.stats.copies + decoder.prompt_cache.hits == 1
    assert all(tokens > 80 for tokens in decoder.slot_tokens()[:2])
    # Nothing but the new ends of the two prompts was read (each at least its last token).
    assert decoder.stats.prompt[1] - read_before < 30
    for items in both:
        check_stream(items)
        assert items[-1]["usage"]["output_tokens"] > 0
    await rt.adelete("sharing")


def shared_start(system: str, question: str) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return {"messages": messages, "temperature": 0.0, "max_tokens": 8}


#: System prompts of different lengths, so that a slot's token count says whose it holds.
SYSTEMS = [
    f"You are assistant {n}. " + "Answer briefly and plainly. " * (4 + 3 * n) for n in range(3)
]


async def slots_by_system(rt: Runtime, name: str) -> list[int]:
    """Run one request per system prompt at once; for each slot, the system prompt it holds."""
    decoder = rt.kernel.component(name).decoder
    await asyncio.gather(*(stream(rt, name, shared_start(s, "Name a colour.")) for s in SYSTEMS))
    order = sorted(range(len(SYSTEMS)), key=lambda slot: decoder.slot_tokens()[slot])
    return [order.index(slot) for slot in range(len(SYSTEMS))]


async def test_a_request_takes_the_free_slot_that_holds_its_start(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    """All slots free: a prompt goes to the slot holding its start (read no prompt twice,
    copy nothing), not to the lowest; llama-server picks its slot so too."""
    await rt.adefine("llamacpp_language_model", "choosing", {"parallel": 3, "n_ctx": 512})
    decoder = rt.kernel.component("choosing").decoder
    holds = await slots_by_system(rt, "choosing")
    before = decoder.slot_tokens()
    copies, read = decoder.stats.copies, decoder.stats.prompt[1]
    last = holds[2]  # the slot holding the third system prompt (not slot 0 if they differ)
    items = await stream(rt, "choosing", shared_start(SYSTEMS[last], "Name a fruit."))
    check_stream(items)
    after = decoder.slot_tokens()
    assert after[:2] == before[:2]
    assert decoder.stats.copies == copies
    assert decoder.stats.prompt[1] - read < 20  # the new question, not the system prompt
    await rt.adelete("choosing")


async def test_a_free_slot_that_splits_the_busy_ids_is_passed_over(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    """Slot 0 busy: a request whose start slot 2 holds takes slot 1 and gets that start
    copied in, since busy slots 0 and 2 would cost every step a second pass over the
    weights (llama.cpp decodes only consecutive sequence ids together)."""
    await rt.adefine("llamacpp_language_model", "passes", {"parallel": 3, "n_ctx": 512})
    decoder = rt.kernel.component("passes").decoder
    holds = await slots_by_system(rt, "passes")
    long_run = rt.acall_iter_method(
        "passes", "infer", {**ask("Tell me a long story about a dragon."), "max_tokens": 400}
    )
    await anext(long_run)  # a new prompt shares nothing: it takes slot 0
    assert decoder.running == 1
    before, copies = decoder.slot_tokens(), decoder.stats.copies
    items = await stream(rt, "passes", shared_start(SYSTEMS[holds[2]], "Name a fruit."))
    await long_run.aclose()
    check_stream(items)
    assert decoder.stats.copies == copies + 1
    after = decoder.slot_tokens()
    assert after[2] == before[2] and after[1] != before[1]
    await rt.adelete("passes")


async def test_the_deterministic_mode_reads_every_prompt_whole(
    rt: Runtime, lm: str, requests: list[dict[str, Any]], alone: list[list[dict[str, Any]]]
) -> None:
    """The same request again, its prompt still in the slot: read whole all the same, so
    the reply is the one it got before (a start kept would have the rest read in another
    piece, which can round differently)."""
    decoder = rt.kernel.component(lm).decoder
    read_before = decoder.stats.prompt[1]
    again = await stream(rt, lm, requests[6])
    assert again == alone[6]
    assert decoder.stats.prompt[1] - read_before == again[-1]["usage"]["input_tokens"]
    assert decoder.stats.copies == 0


async def test_deterministic_long_prompts_are_read_in_the_pieces_they_have_alone(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    """Two prompts of several n_batch pieces, arriving together: each is still read in
    pieces of n_batch tokens from its start (never one cut short to share a step), so
    each reply is the one it gets alone."""
    attributes = {"parallel": 2, "n_ctx": 512, "n_batch": 32, "deterministic": True}
    await rt.adefine("llamacpp_language_model", "pieces", attributes)
    texts = [
        "Summarise: " + "the sea is calm and the sky is grey. " * 12,
        "Summarise: " + "a cat sleeps on the warm red mat. " * 10,
    ]
    stats = rt.kernel.component("pieces").decoder.stats
    alone = [await stream(rt, "pieces", ask(text, max_tokens=12)) for text in texts]
    reads_alone = stats.prompt[0]
    together = await asyncio.gather(*(stream(rt, "pieces", ask(t, max_tokens=12)) for t in texts))
    # As many reads (one per piece) as alone: no piece was cut short to fill a step.
    assert stats.prompt[0] - reads_alone == reads_alone
    assert together == alone
    assert all(items[-1]["usage"]["input_tokens"] > 100 for items in alone)
    await rt.adelete("pieces")
