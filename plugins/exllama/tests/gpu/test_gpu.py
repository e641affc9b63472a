"""ferrule-exllama on a real GPU: correct and fast, on the FP16 and the EXL2 (fused) path.

Run with ``nox -s gpu`` (it installs torch, exllamav2, transformers and lm-format-enforcer
and runs this folder); everywhere else each test is skipped, saying what is missing. The
model is a random one of Qwen3-0.6B's shape built by the fixtures (conftest.py), so the
checks are about exllamav2 computing Qwen3 right and ferrule driving it right:

- logits against transformers' float32 reference on the same weights: cosine >= 0.9999 at
  every position and top-token agreement >= 98%, on a 256- and a 2.7k-token prompt (the
  latter prefilled in two chunks); exllamav2 without the workarounds fails this;
- greedy replies through ferrule identical to exllamav2's own generator's;
- JSON-schema replies valid 10 times out of 10;
- four concurrent streams complete (overlapping where flash-attn's paged attention is);
- a benchmark, ferrule against raw exllamav2: tokens per second and time to first token,
  written to bench/results/exllama.md (and printed).
"""

from __future__ import annotations

import importlib.util
import json
import random
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import attrs
import pytest
from ferrule_kit.content.messages import Message
from ferrule_kit.models import qwen3

GPU_PACKAGES = ("torch", "exllamav2", "transformers", "tokenizers", "safetensors")


def unavailable() -> str:
    """Why these tests cannot run here ("" where they can)."""
    missing = [name for name in GPU_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        return f"needs {', '.join(missing)} and an NVIDIA GPU: run nox -s gpu on one"
    import torch

    if not torch.cuda.is_available():
        return "needs an NVIDIA GPU: torch sees no CUDA device"
    return ""


UNAVAILABLE = unavailable()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(bool(UNAVAILABLE), reason=UNAVAILABLE)]

#: Letters in no merge of the test tokenizer, and spaces: one token per character.
ONE_TOKEN_CHARS = "jkquvxyz "
WEIGHTS = {"fp16": "FP16", "exl2": "EXL2 6.0 bpw"}
#: The workarounds that make exllamav2 compute Qwen3 right (the others are about speed).
CORRECTNESS = ("causal_mask", "head_norm", "rope_theta")


@attrs.frozen
class Reply:
    text: str
    tokens: int
    finish: str | None
    #: perf_counter at the request, at its first text, at its end.
    start: float
    first: float
    end: float
    #: The prompt's and the reply's token ids, where known.
    prompt_ids: list[int] = attrs.field(factory=list)
    ids: list[int] = attrs.field(factory=list)

    @property
    def time_to_first_token(self) -> float:
        return self.first - self.start

    @property
    def tokens_per_second(self) -> float:
        return (self.tokens - 1) / (self.end - self.first)


def ask(rt: Any, name: str, text: str, **options: Any) -> Reply:
    """One ``infer`` request through ferrule, read as a user of the Runtime reads it."""
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    pieces: list[str] = []
    first, finish, tokens = None, None, 0
    start = time.perf_counter()
    for item in rt.call_iter_method(name, "infer", {"messages": [message], **options}):
        for part in item["message"]["content"]:
            if part.get("type") == "text" and part.get("text"):
                if first is None:
                    first = time.perf_counter()
                pieces.append(part["text"])
        if item.get("finish_reason"):
            finish, tokens = item["finish_reason"], item["usage"]["output_tokens"]
    end = time.perf_counter()
    return Reply("".join(pieces), tokens, finish, start, end if first is None else first, end)


def render(text: str) -> str:
    """The prompt ferrule renders for one user message, thinking off."""
    return qwen3.render_prompt([Message("user", text)], reasoning=False)


def generate(raw: Any, text: str, max_new_tokens: int) -> Reply:
    """The same prompt through exllamav2's own dynamic generator, greedy, as its examples
    drive it."""
    from exllamav2.generator import ExLlamaV2DynamicJob, ExLlamaV2Sampler

    ids = raw.tokenizer.encode(render(text), encode_special_tokens=True, add_bos=False)
    job = ExLlamaV2DynamicJob(
        input_ids=ids,
        gen_settings=ExLlamaV2Sampler.Settings.greedy(),
        max_new_tokens=max_new_tokens,
        stop_conditions=[raw.tokenizer.eos_token_id],
        decode_special_tokens=True,
    )
    pieces: list[str] = []
    ids_out: list[int] = []
    first, finish, tokens = None, None, 0
    start = time.perf_counter()
    raw.generator.enqueue(job)
    while raw.generator.num_remaining_jobs():
        for result in raw.generator.iterate():
            if result.get("stage") != "streaming":
                continue
            if result.get("token_ids") is not None:
                ids_out.extend(result["token_ids"][0].tolist())
            if result.get("text"):
                if first is None:
                    first = time.perf_counter()
                pieces.append(result["text"])
            if result["eos"]:
                finish, tokens = result["eos_reason"], result["new_tokens"]
    end = time.perf_counter()
    first = end if first is None else first
    prompt = ids[0].tolist()
    return Reply("".join(pieces), tokens, finish, start, first, end, prompt, ids_out)


def as_ferrule_reads(text: str) -> str:
    """The reply text ferrule streams for raw model output ``text`` (its Qwen3 parser drops
    the newlines that only format tags)."""
    parser = qwen3.Qwen3StreamParser(False)
    items = parser.feed(text) + parser.close()
    return "".join(
        part.get("text", "")
        for item in items
        for part in item["message"]["content"]
        if part.get("type") == "text"
    )


def prompt_text(tokenizer: Any, tokens: int, seed: int) -> tuple[str, int]:
    """A user message whose rendered prompt is about ``tokens`` long, and that length."""

    def length(text: str) -> int:
        ids = tokenizer.encode(render(text), encode_special_tokens=True, add_bos=False)
        return int(ids.shape[-1])

    rng = random.Random(seed)
    text = "j" + "".join(rng.choice(ONE_TOKEN_CHARS) for _ in range(tokens - length("j")))
    return text, length(text)


#: How far apart two tokens' logits may be and still count as a tie: exllamav2's kernels
#: add in an order that depends on the batch (and, for EXL2, on timing: its quantized
#: matmul accumulates with fp16 atomics), which moves logits by far less than this. A token
#: chosen wrongly lies some logits below the best on this model.
TIE = 0.1


def worst_cosine_and_agreement(logits: Any, reference: Any) -> tuple[float, float]:
    """The lowest cosine similarity over positions, and the share of positions whose top
    token is the reference's, or within a tie (`TIE`) of the reference's best: a random
    model's two best logits are often closer than fp16 arithmetic can tell apart (0.0005
    at the closest of 256 positions on the CPU, where fp16 transformers agreed with fp32 at
    98%)."""
    import torch.nn.functional as F

    logits, reference = logits.float().cuda(), reference.float().cuda()
    vocab = min(logits.shape[-1], reference.shape[-1])
    logits, reference = logits[:, :vocab], reference[:, :vocab]
    cosine = F.cosine_similarity(logits, reference, dim=-1).min().item()
    chosen = reference.gather(-1, logits.argmax(-1, keepdim=True)).squeeze(-1)
    agreement = (chosen >= reference.max(-1).values - TIE).float().mean().item()
    return cosine, agreement


# -- correctness ----------------------------------------------------------------------------


def test_the_config_carries_the_workarounds_this_machine_needs(raw, plan):
    from ferrule_exllama import patches

    # What Qwen3 needs whatever is installed: RMSNorm head norm, RoPE base 1e6.
    assert raw.config.arch.lm.headnorm == "rmsnorm"
    assert raw.config.rotary_embedding_base == 1e6
    assert getattr(raw.config, patches.ATTENTION, None) == plan.attention
    assert raw.config.no_sdpa == (plan.causal_mask.action == "no_sdpa")


@pytest.mark.parametrize("length", [256, 2700])
def test_logits_match_transformers_float32_reference(raw, reference, length):
    ids, expected = reference[length]
    cosine, agreement = worst_cosine_and_agreement(raw.logits(ids), expected)
    assert cosine >= 0.9999, (cosine, agreement)
    assert agreement >= 0.98, (cosine, agreement)


@pytest.mark.parametrize("workaround", CORRECTNESS)
def test_each_correctness_workaround_is_needed(load_exl, reference, plan, workaround):
    # The logits check above can fail: with any one of the workarounds left out, exllamav2
    # misses its bar. The causal mask is checked on exllamav2's own attention (the path
    # without flash-attn, where it applies) whatever is installed: there ferrule's fix
    # must meet the bar too.
    torch_attention = workaround == "causal_mask"
    if not torch_attention and getattr(plan, workaround).action == "none":
        pytest.skip(f"not needed here: {getattr(plan, workaround).reason}")
    ids, expected = reference[2700]
    if torch_attention:
        fixed = worst_cosine_and_agreement(load_exl(torch_attention=True).logits(ids), expected)
        print(f"exllamav2's own attention, every workaround: {fixed}")
        assert fixed[0] >= 0.9999, fixed
    left_out = load_exl(leave_out=workaround, torch_attention=torch_attention)
    cosine, agreement = worst_cosine_and_agreement(left_out.logits(ids), expected)
    print(f"without {workaround}: worst cosine {cosine:.6f}, top-token agreement {agreement:.4f}")
    assert cosine < 0.9999, (cosine, agreement)


def agree_up_to_a_tie(raw, prompt_ids, ours, theirs):
    """``ours`` and ``theirs`` (greedy replies' token ids after ``prompt_ids``) are the same,
    or part where exllamav2's own logits cannot tell the two tokens apart; the position where
    they part, or None."""
    if ours == theirs:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b),
        min(len(ours), len(theirs)),
    )
    assert at < min(len(ours), len(theirs)), ("one reply is a prefix of the other", at)
    logits = raw.logits(list(prompt_ids) + ours[:at])[-1]
    best = logits.max().item()
    gaps = (best - logits[ours[at]].item(), best - logits[theirs[at]].item())
    print(f"replies part at token {at} of {len(ours)}: logit gaps to the best {gaps}")
    assert max(gaps) <= TIE, (at, gaps)
    return at


@pytest.mark.parametrize("length", [64, 2700])
def test_greedy_replies_match_exllamav2s_own_generator(raw, ferrule_lm, spy, length):
    # Token for token, or parting only at a tie (for EXL2 two runs of exllamav2 itself can
    # part: its quantized matmul adds with fp16 atomics, in no fixed order).
    rt, name = ferrule_lm
    text, _ = prompt_text(raw.tokenizer, length, seed=length)
    theirs = generate(raw, text, 128)
    with spy() as tokens:
        ours = ask(rt, name, text, temperature=0, max_tokens=128)
    assert (theirs.finish, theirs.tokens) == ("max_new_tokens", 128)
    assert (ours.finish, ours.tokens) == ("length", 128)
    (prompt,) = tokens.by_prompt
    assert list(prompt) == theirs.prompt_ids
    if agree_up_to_a_tie(raw, prompt, tokens.only(), theirs.ids) is None:
        assert ours.text == as_ferrule_reads(theirs.text)


SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"enum": ["yes", "no", "maybe"]},
        "confident": {"type": "boolean"},
        "reasons": {"type": "array", "items": {"enum": ["tide", "wind"]}, "maxItems": 2},
    },
    "required": ["answer", "confident"],
}


def follows_schema(text: str) -> bool:
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and set(SCHEMA["required"]) <= set(value) <= set(SCHEMA["properties"])
        and value["answer"] in ("yes", "no", "maybe")
        and isinstance(value["confident"], bool)
        and (
            "reasons" not in value
            or (
                isinstance(value["reasons"], list)
                and len(value["reasons"]) <= 2
                and set(value["reasons"]) <= {"tide", "wind"}
            )
        )
    )


def test_json_schema_replies_are_valid_every_time(ferrule_lm):
    rt, name = ferrule_lm
    replies = [
        ask(rt, name, f"Will the ship sail tonight? ({attempt})", output_schema=SCHEMA)
        for attempt in range(10)
    ]
    invalid = [
        (r.finish, r.text) for r in replies if r.finish != "stop" or not follows_schema(r.text)
    ]
    assert not invalid, invalid


def test_four_concurrent_streams_complete(raw, ferrule_lm):
    rt, name = ferrule_lm

    def stream(index: int) -> Reply:
        return ask(rt, name, f"Tell story number {index}.", temperature=0, max_tokens=48)

    with ThreadPoolExecutor(4) as pool:
        replies = list(pool.map(stream, range(4)))
    assert [(r.finish, r.tokens) for r in replies] == [("length", 48)] * 4
    if raw.paged:
        # Batched: every stream has begun before any has ended.
        assert max(r.first for r in replies) < min(r.end for r in replies)


# -- concurrent requests --------------------------------------------------------------------

#: Requests run alone and together: different prompts, lengths and stop strings; one asks
#: for JSON (`SCHEMA`) and one is left mid-stream when run with others (`CANCELLED`).
CANCELLED = 3


def mixed_requests(tokenizer: Any) -> list[tuple[str, dict[str, Any]]]:
    requests = []
    for index in range(8):
        text, _ = prompt_text(tokenizer, 24 + 20 * index, seed=500 + index)
        options: dict[str, Any] = {"temperature": 0, "max_tokens": 24 + 12 * index}
        if index == 2:
            text, options = (
                f"Will the ship sail? {text}",
                {"output_schema": SCHEMA, "temperature": 0},
            )
        elif index == CANCELLED:
            options["max_tokens"] = 200  # far more than it reads before leaving
        elif index % 3 == 1:
            options["stop"] = ["qa", "qz"]  # filler tokens begin with "q": some stop early
        requests.append((text, options))
    return requests


def ask_then_leave(rt: Any, name: str, text: str, pieces: int, **options: Any) -> str:
    """Reads ``pieces`` pieces of text of a reply, then stops reading (ferrule cancels it)."""
    message = {"role": "user", "content": [{"type": "text", "text": text}]}
    stream = rt.call_iter_method(name, "infer", {"messages": [message], **options})
    received: list[str] = []
    for item in stream:
        received += [p["text"] for p in item["message"]["content"] if p.get("text")]
        if len(received) >= pieces:
            break
    stream.close()
    return "".join(received)


def test_concurrent_replies_are_the_replies_run_alone(raw, ferrule_lm, spy):
    # Greedy: each request's tokens are those of the same request run alone, whether 1, 2,
    # 4 or 8 run together (batched where flash-attn's paged attention is), up to ties
    # (`TIE`: the batch changes the order kernels add in).
    rt, name = ferrule_lm
    requests = mixed_requests(raw.tokenizer)
    alone: dict[int, tuple[Reply, tuple[int, ...], list[int]]] = {}
    for index, (text, options) in enumerate(requests):
        with spy() as tokens:
            reply = ask(rt, name, text, **options)
        ((prompt, ids),) = tokens.by_prompt.items()
        alone[index] = (reply, prompt, ids)
    assert follows_schema(alone[2][0].text), alone[2][0].text
    assert len(alone[CANCELLED][2]) > 16  # long enough to be left mid-stream

    for together in (1, 2, 4, 8):

        def run(index: int) -> Any:
            text, options = requests[index]
            if index == CANCELLED:
                return ask_then_leave(rt, name, text, 4, **options)
            return ask(rt, name, text, **options)

        with spy() as tokens, ThreadPoolExecutor(together) as pool:
            replies = list(pool.map(run, range(together)))
        for index, reply in enumerate(replies):
            alone_reply, prompt, alone_ids = alone[index]
            ids = tokens.by_prompt[prompt]
            if index == CANCELLED:
                # Left after 4 pieces: a prefix of the reply alone, and ended early.
                assert alone_reply.text.startswith(reply), (together, reply)
                assert len(ids) < len(alone_ids), (together, len(ids))
                agree_up_to_a_tie(raw, prompt, ids, alone_ids[: len(ids)])
                continue
            parted = agree_up_to_a_tie(raw, prompt, ids, alone_ids)
            if parted is None:
                assert (reply.text, reply.finish) == (alone_reply.text, alone_reply.finish)
                assert reply.tokens == alone_reply.tokens
            if index == 2:
                assert follows_schema(reply.text), (together, reply.text)
    # The component still serves after the cancellation.
    text, options = requests[0]
    with spy() as tokens:
        assert ask(rt, name, text, **options).finish == alone[0][0].finish
    agree_up_to_a_tie(raw, alone[0][1], tokens.by_prompt[alone[0][1]], alone[0][2])


# -- speed ----------------------------------------------------------------------------------

ROUNDS, NEW_TOKENS = 3, 128


@pytest.mark.parametrize("length", [64, 2700])
def test_benchmark_ferrule_against_raw_exllamav2(raw, ferrule_lm, report, variant, length):
    rt, name = ferrule_lm
    measured: dict[str, list[Reply]] = {"raw": [], "ferrule": []}
    for attempt in range(ROUNDS + 1):  # the first round warms up
        text, prompt_tokens = prompt_text(raw.tokenizer, length, seed=1000 * length + attempt)
        theirs = generate(raw, text, NEW_TOKENS)
        ours = ask(rt, name, text, temperature=0, max_tokens=NEW_TOKENS)
        assert theirs.tokens == ours.tokens == NEW_TOKENS
        if attempt:
            measured["raw"].append(theirs)
            measured["ferrule"].append(ours)
    row = {"weights": WEIGHTS[variant], "prompt_tokens": prompt_tokens}
    for side, replies in measured.items():
        row[f"{side}_tps"] = statistics.median(r.tokens_per_second for r in replies)
        row[f"{side}_ttft"] = statistics.median(r.time_to_first_token for r in replies)
    report["rows"].append(row)


STREAMS, PER_LEVEL, STREAM_TOKENS = (1, 2, 4, 8), 8, 96


def streams_at_once(rt: Any, name: str, texts: list[str]) -> tuple[float, list[Reply]]:
    """Sends every text at once; the wall time until the last reply ended, and the replies
    (time to first token counted from the moment all were sent)."""
    start = time.perf_counter()
    with ThreadPoolExecutor(len(texts)) as pool:
        replies = list(
            pool.map(
                lambda text: ask(rt, name, text, temperature=0, max_tokens=STREAM_TOKENS), texts
            )
        )
    return time.perf_counter() - start, [attrs.evolve(r, start=start) for r in replies]


def test_benchmark_concurrent_streams(raw, ferrule_lm, model_dir, report, variant):
    # Aggregate tokens per second and time to first token with 1, 2, 4 and 8 requests sent
    # at once, against the same requests on a component that runs one at a time
    # (parallel=1), in the same process. No pass/fail on the figures: they are the report.
    rt, name = ferrule_lm
    attributes = {"model": str(model_dir), "max_seq_len": 1024, "cache_tokens": 1024, "parallel": 1}
    rt.define("exllama_language_model", "one-at-a-time", attributes)
    try:
        texts = [prompt_text(raw.tokenizer, 64, seed=2000 + i)[0] for i in range(PER_LEVEL)]
        for side in (name, "one-at-a-time"):  # warm-up
            streams_at_once(rt, side, texts[:2])
        for streams in STREAMS:
            row: dict[str, Any] = {"weights": WEIGHTS[variant], "streams": streams}
            for side, key in ((name, "batched"), ("one-at-a-time", "serial")):
                walls, replies = 0.0, []
                for first in range(0, PER_LEVEL, streams):
                    wall, some = streams_at_once(rt, side, texts[first : first + streams])
                    walls += wall
                    replies += some
                assert [r.tokens for r in replies] == [STREAM_TOKENS] * PER_LEVEL
                ttft = [r.time_to_first_token for r in replies]
                row[f"{key}_tps"] = STREAM_TOKENS * PER_LEVEL / walls
                cuts = statistics.quantiles(ttft, n=100, method="inclusive")
                row[f"{key}_p50"], row[f"{key}_p99"] = cuts[49], cuts[98]
            report["concurrency"].append(row)
    finally:
        rt.delete("one-at-a-time")
