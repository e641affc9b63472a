"""The prompt cache (``cache_ram``): what a slot held before another request took it, kept
within its budget and loaded back for a request that starts the same way; the cache on its
own, then on the shipped SmolLM2 model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing import check_stream
from ferrule_llamacpp.prompt_cache import PromptCache
from hypothesis import given
from hypothesis import strategies as st


def test_the_longest_start_is_found_and_a_longer_save_replaces_its_starts() -> None:
    cache = PromptCache(capacity=100)
    cache.save([1, 2, 3], b"abc")
    cache.save([1, 2, 3, 4, 5], b"abcde")  # holds all [1, 2, 3] did: that one goes
    cache.save([1, 9], b"xy")
    assert len(cache) == 2 and cache.size == 7
    entry, shared = cache.best([1, 2, 3, 4, 7])
    assert entry is not None and entry.tokens == [1, 2, 3, 4, 5] and shared == 4
    cache.save([1, 2], b"ab")  # an entry already holds all of it: nothing new
    assert len(cache) == 2 and cache.saves == 3
    assert cache.best([5, 6]) == (None, 0)


def test_the_least_recently_used_go_first_and_a_state_over_budget_is_not_kept() -> None:
    cache = PromptCache(capacity=10)
    cache.save([1], b"1111")
    cache.save([2], b"2222")
    entry, _ = cache.best([1])
    assert entry is not None
    cache.used(entry)  # [1] is now the most recently used
    cache.save([3], b"3333")  # over 10 bytes: [2] goes
    assert cache.best([2]) == (None, 0)
    assert cache.best([1])[1] == 1 and cache.best([3])[1] == 1
    cache.save([4], b"x" * 11)
    assert cache.best([4]) == (None, 0) and cache.size == 8 and cache.hits == 1


def test_a_prompt_a_slot_holds_again_is_kept_longer_without_counting_a_hit() -> None:
    cache = PromptCache(capacity=8)
    cache.save([1, 2], b"1111")
    cache.save([3], b"3333")
    held = cache.holding([1])
    assert held is not None and held.tokens == [1, 2]
    cache.touch(held)  # [1, 2] is now the most recently used
    cache.save([5], b"5555")  # over 8 bytes: [3] goes, not [1, 2]
    assert [e.tokens for e in cache] == [[1, 2], [5]]
    assert cache.hits == 0 and cache.saves == 3


@given(
    st.integers(min_value=0, max_value=64),
    st.lists(
        st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=6), st.binary(max_size=20))
    ),
)
def test_the_cache_keeps_within_its_budget_and_counts_what_it_holds(
    capacity: int, saves: list[tuple[list[int], bytes]]
) -> None:
    cache = PromptCache(capacity)
    for tokens, state in saves:
        cache.save(tokens, state)
        assert cache.size <= capacity
        assert cache.size == sum(len(e.state) for e in cache)
        # no entry is a start of another (the longer holds all the shorter does)
        held = [e.tokens for e in cache]
        assert not any(a != b and b[: len(a)] == a for a in held for b in held)


def request(system: str, question: str) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return {"messages": messages, "temperature": 0.0, "max_tokens": 8}


SYSTEM_A = "You are a gardener who answers in one short sentence. " * 6
SYSTEM_B = "You are a sailor who answers in one short sentence. " * 6


async def reply(rt: Runtime, name: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    items = [item async for item in rt.acall_iter_method(name, "infer", body)]
    check_stream(items)
    return items


async def test_a_conversation_back_after_another_took_its_slot_is_loaded_not_read(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    await rt.adefine("llamacpp_language_model", "cached", {"parallel": 1, "n_ctx": 512})
    decoder = rt.kernel.component("cached").decoder
    cache = decoder.prompt_cache
    await reply(rt, "cached", request(SYSTEM_A, "Name a flower."))
    await reply(rt, "cached", request(SYSTEM_B, "Name a ship."))  # the one slot: A is saved
    assert cache.saves == 1 and len(cache) == 1
    read = decoder.stats.prompt[1]
    items = await reply(rt, "cached", request(SYSTEM_A, "Name a tree."))
    assert cache.hits == 1
    # only the new question was read, not the system prompt the cache held
    assert decoder.stats.prompt[1] - read < 20 < items[-1]["usage"]["input_tokens"]
    assert cache.saves == 2  # B's turn was saved as A's took the slot back
    await rt.adelete("cached")


async def test_without_a_cache_the_prompt_is_read_again(rt: Runtime, smollm2_gguf: Path) -> None:
    attributes = {"parallel": 1, "n_ctx": 512, "cache_ram": 0}
    await rt.adefine("llamacpp_language_model", "uncached", attributes)
    decoder = rt.kernel.component("uncached").decoder
    assert decoder.prompt_cache is None
    await reply(rt, "uncached", request(SYSTEM_A, "Name a flower."))
    await reply(rt, "uncached", request(SYSTEM_B, "Name a ship."))
    read = decoder.stats.prompt[1]
    items = await reply(rt, "uncached", request(SYSTEM_A, "Name a tree."))
    # the chat template's first tokens are shared with B's prompt; the system prompt is not
    assert decoder.stats.prompt[1] - read > items[-1]["usage"]["input_tokens"] - 10
    await rt.adelete("uncached")


@pytest.mark.parametrize("value", [-1, 1 << 17, "lots"])
def test_cache_ram_is_validated(rt: Runtime, value: Any) -> None:
    with pytest.raises(InvalidInputError) as info:
        rt.define("llamacpp_language_model", "bad", {"cache_ram": value})
    assert "cache_ram" in info.value.errors[0]["path"]
