"""The repeat and presence penalties ferrule applies to a row of logits give what
llama.cpp's own penalties sampler gives, bit for bit: on any logits and any history
(hypothesis), and token for token on the shipped SmolLM2 model past the window's end."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path

import llama_cpp
import numpy as np
import pytest
from ferrule_llamacpp.sampling import Penalties, Sampler
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_cpp._internals import LlamaContext, LlamaModel, LlamaSampler


def llama_penalized(
    logits: np.ndarray, history: list[int], last_n: int, repeat: float, present: float
) -> np.ndarray:
    """llama.cpp's penalties sampler, after accepting ``history``, applied to ``logits``."""
    sampler = llama_cpp.llama_sampler_init_penalties(len(logits), last_n, repeat, 0.0, present)
    try:
        for token in history:
            llama_cpp.llama_sampler_accept(sampler, token)
        data = (llama_cpp.llama_token_data * len(logits))(
            *(llama_cpp.llama_token_data(i, float(x), 0.0) for i, x in enumerate(logits))
        )
        candidates = llama_cpp.llama_token_data_array(data, len(logits), -1, False)
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return np.array([d.logit for d in data], dtype=np.float32)
    finally:
        llama_cpp.llama_sampler_free(sampler)


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, list[int], int, float, float]:
    vocab = draw(st.integers(1, 40))
    logits = np.array(
        draw(st.lists(st.floats(width=32, allow_nan=False), min_size=vocab, max_size=vocab)),
        dtype=np.float32,
    )
    history = draw(st.lists(st.integers(0, vocab - 1), max_size=120))
    last_n = draw(st.integers(1, 80))
    repeat = draw(st.floats(0.5, 3.0, width=32))
    present = draw(st.floats(-2.0, 2.0, width=32))
    return logits, history, last_n, repeat, present


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_penalties_are_llama_cpps_on_any_logits_and_history(
    case: tuple[np.ndarray, list[int], int, float, float],
) -> None:
    logits, history, last_n, repeat, present = case
    penalties = Penalties(last_n, repeat, present)
    for token in history:
        penalties.accept(token)
    ours = logits.copy()
    penalties.apply(ours)
    expected = llama_penalized(logits, history, last_n, repeat, present)
    assert ours.tobytes() == expected.tobytes()


def test_penalties_that_change_nothing_are_not_applied() -> None:
    assert not Penalties.needed(64, 1.0, 0.0)
    assert not Penalties.needed(0, 1.3, 0.5)
    assert Penalties.needed(64, 1.1, 0.0) and Penalties.needed(64, 1.0, -0.5)


@pytest.fixture(scope="module")
def context(smollm2_gguf: Path) -> Iterator[LlamaContext]:
    model = LlamaModel(
        path_model=str(smollm2_gguf), params=llama_cpp.llama_model_default_params(), verbose=False
    )
    params = llama_cpp.llama_context_default_params()
    params.n_ctx = 512
    params.n_threads = params.n_threads_batch = 2
    context = LlamaContext(model=model, params=params, verbose=False)
    yield context
    context.close()
    model.close()


def decode(context: LlamaContext, tokens: list[int], start: int) -> None:
    batch = llama_cpp.llama_batch_init(len(tokens), 0, 1)
    try:
        batch.n_tokens = len(tokens)
        for i, token in enumerate(tokens):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, start + i, 1
            batch.seq_id[i][0] = 0
            batch.logits[i] = i == len(tokens) - 1
        assert llama_cpp.llama_decode(context.ctx, batch) == 0
    finally:
        llama_cpp.llama_batch_free(batch)


@pytest.mark.parametrize("chained", [False, True], ids=["argmax", "llama.cpp greedy"])
@pytest.mark.parametrize(("repeat", "present"), [(1.3, 0.0), (1.1, 0.7), (1.0, -1.5)])
def test_a_greedy_reply_is_the_one_llama_cpps_own_samplers_give(
    context: LlamaContext, repeat: float, present: float, chained: bool
) -> None:
    """100 tokens, past the end of a 64-token window, against a chain of llama.cpp's own
    penalties and greedy samplers: the same token at every step (llama.cpp's chains copy
    the logits, ours changes the row, so it samples last), with the highest logit taken
    as the greedy token or with a chain that ends in llama.cpp's greedy sampler; and the
    penalties change some steps' token."""
    n_vocab = context.model.n_vocab()
    reference = LlamaSampler()
    reference.add_penalties(n_vocab, 64, repeat, 0.0, present)
    reference.add_greedy()
    chain = None
    if chained:
        chain = LlamaSampler()
        chain.add_greedy()
    ours = Sampler(chain, n_vocab, Penalties(64, repeat, present))
    unpenalized = LlamaSampler()
    unpenalized.add_greedy()
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(context.ctx), True)
    prompt = context.model.tokenize(b"Write a long list of fruits and their colours:", True, False)
    decode(context, prompt, 0)
    changed = 0
    try:
        for step in range(100):
            expected = reference.sample(context, -1)
            changed += unpenalized.sample(context, -1) != expected
            assert ours.sample(context, -1) == expected, f"step {step}"
            decode(context, [expected], len(prompt) + step)
    finally:
        for sampler in (reference, unpenalized, ours):
            sampler.close()
    assert changed > 0
