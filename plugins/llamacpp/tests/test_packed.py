"""The default, packed batching on the shipped SmolLM2 model: prompts that arrive together are
read in one decode step, with the generating sequences' tokens, a long prompt is read in
chunks between their tokens, and a greedy reply differs from the request's solo reply
only where two tokens were nearly tied (the claim the README makes, tested here)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrule import Runtime
from ferrule_kit.content.messages import converter
from ferrule_kit.models.lm import InferInput
from ferrule_llamacpp import batching
from ferrule_llamacpp.formats import TextParser
from ferrule_llamacpp.jobs import Job, Sequence
from ferrule_llamacpp.stops import StopMatcher

#: Prompts of different lengths and replies of different lengths.
QUESTIONS = [
    ("Name three colours.", 24),
    ("Write a short poem about the sea at night, with the moon and the wind.", 30),
    ("Explain in two sentences what 2+2 is.", 16),
    ("Tell me a long story about a dragon who bakes bread.", 40),
    ("Pick a colour and say why.", 30),
    ("List the days of the week.", 28),
    ("Explain in one sentence what a CPU does.", 20),
    ("Say hello in French, Spanish and German, one per line.", 18),
]
#: How close (in logits) the two best tokens of a solo run must be where a packed reply
#: first goes another way: far above what reading a prompt in other pieces changes (0.08
#: at most, measured), far below the gaps of a wrong computation.
NEAR_TIE = 0.5


@pytest.fixture(scope="module")
def model(rt: Runtime, smollm2_gguf: Path) -> Any:
    # Repeat penalty 1.0: the solo logits below are the model's own, with nothing to redo.
    attributes = {"parallel": 8, "n_ctx": 1024, "repeat_penalty": 1.0}
    rt.define("llamacpp_language_model", "packed", attributes)
    return rt.kernel.component("packed")


def sequence(model: Any, question: str, max_tokens: int) -> Sequence:
    request = converter.structure(
        {"messages": [{"role": "user", "content": question}], "temperature": 0.0}, InferInput
    )
    turn, prompt = model._turn(request)
    job = Job(asyncio.get_running_loop())
    sampler = model._sampler(turn.sampling, None)
    return Sequence(
        job, prompt, sampler, limit=max_tokens, stops=StopMatcher([]), parser=TextParser()
    )


async def finished(job: Job) -> list[int]:
    """The job's tokens, once its stream has ended."""
    while True:
        item = await job.queue.get()
        if isinstance(item, BaseException):
            raise item
        if not isinstance(item, dict):
            return job.tokens


async def together(model: Any, sequences: list[Sequence]) -> list[list[int]]:
    """Submit all at once: the worker admits them in the same step."""
    decoder = model.decoder
    with decoder._cond:  # the worker admits nothing until all are in line
        for each in sequences:
            decoder.submit(each)
    return [await finished(each.job) for each in sequences]


async def test_prompts_that_arrive_together_are_read_in_one_step(model: Any) -> None:
    stats = model.decoder.stats
    steps_before = stats.prompt[0]
    await together(model, [sequence(model, q, 4) for q, _ in QUESTIONS[:4]])
    # Four prompts (each shorter than n_batch), one step.
    assert stats.prompt[0] - steps_before == 1
    assert stats.peak_prompts == 4


async def client(rt: Runtime, questions: list[str]) -> None:
    """A client in a loop: each request sent as soon as the reply before it has ended."""
    for question in questions:
        request = {"messages": [{"role": "user", "content": question}], "temperature": 0.0}
        async for _ in rt.acall_iter_method("packed", "infer", {**request, "max_tokens": 6}):
            pass


async def test_requests_sent_together_are_read_in_one_step_and_so_are_their_next(
    rt: Runtime, model: Any
) -> None:
    """Four clients start together, and each sends its next request when its reply ends:
    the first prompt ready waits for the three still being rendered and tokenized, and the
    first next request for the clients whose replies ended with its own, so each round's
    four prompts are read in one step (read as they came, the first would be read alone
    and the others after it)."""
    stats = model.decoder.stats
    steps_before = stats.prompt[0]
    rounds = [[f"{q} (round {r})" for r in range(3)] for q, _ in QUESTIONS[:4]]
    await asyncio.gather(*(client(rt, questions) for questions in rounds))
    assert stats.prompt[0] - steps_before == 3
    assert stats.peak_prompts == 4


async def test_replies_that_ended_long_ago_hold_no_request_back(rt: Runtime, model: Any) -> None:
    """Four replies end together; a request sent well after that (their clients did not
    come back at once) is read at once: the step waits for nobody."""
    await asyncio.gather(*(client(rt, [question]) for question, _ in QUESTIONS[:4]))
    await asyncio.sleep(2 * batching._GATHER)
    with model.decoder._cond:
        assert model.decoder._gathering() == 0.0


async def test_a_long_prompt_is_read_in_chunks_between_generated_tokens(
    rt: Runtime, smollm2_gguf: Path
) -> None:
    await rt.adefine("llamacpp_language_model", "chunks", {"parallel": 2, "n_batch": 32})
    model = rt.kernel.component("chunks")
    stats = model.decoder.stats
    short = sequence(model, "Count from one to fifty.", 60)
    model.decoder.submit(short)
    while not short.job.tokens:
        await asyncio.sleep(0.01)
    long = sequence(model, "Summarise: " + "the sea is calm and the sky is grey. " * 20, 2)
    model.decoder.submit(long)
    await finished(long.job)
    generated_meanwhile = len(short.job.tokens)
    await finished(short.job)
    # The long prompt (over 200 tokens) took several steps of 32 tokens, each of which also
    # decoded the other sequence's next token.
    assert len(long.prompt) > 200
    assert stats.mixed >= len(long.prompt) // 32 - 1
    assert 1 < generated_meanwhile < 60
    await rt.adelete("chunks")


async def test_greedy_replies_differ_from_solo_only_at_near_ties(model: Any) -> None:
    solo = []
    for question, limit in QUESTIONS:
        (tokens,) = await together(model, [sequence(model, question, limit)])
        solo.append(tokens)
    packed = await together(model, [sequence(model, q, n) for q, n in QUESTIONS])
    reversed_order = await together(model, [sequence(model, q, n) for q, n in QUESTIONS[::-1]])
    packed += reversed_order[::-1]
    assert model.decoder.peak_batch == 8
    prompts = [sequence(model, q, n).prompt for q, n in QUESTIONS]
    from llama_cpp import Llama

    direct = Llama(str(model.path), n_ctx=1024, n_threads=model.threads, logits_all=True)
    same = 0
    try:
        for index, tokens in enumerate(packed):
            prompt, reference = prompts[index % 8], solo[index % 8]
            if tokens == reference:
                same += 1
                continue
            at = next(i for i, (a, b) in enumerate(zip(tokens, reference, strict=False)) if a != b)
            # The logits where the packed reply left the solo one, computed apart by
            # llama-cpp-python (itself one more way to round): both tokens were all but
            # tied for first place.
            direct.reset()
            direct.eval(prompt + reference[:at])
            logits = np.array(direct.scores[direct.n_tokens - 1])
            best = float(logits.max())
            for token in (reference[at], tokens[at]):
                assert best - float(logits[token]) < NEAR_TIE, (
                    f"request {index % 8} left its solo reply at token {at} for one "
                    f"{best - float(logits[token]):.3f} below the best"
                )
    finally:
        direct.close()
    assert same >= len(packed) // 2  # near-ties are rare: most replies are the solo ones
