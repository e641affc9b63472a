"""How a request becomes exllamav2 settings, and exllamav2's results become ``infer`` deltas.

Pure functions and one small class, no torch: everything here is tested on machines
without a GPU. `ferrule_exllama.backend` hands these values to exllamav2 as they are
(`ExLlamaV2Sampler.Settings(**sampler)`, `ExLlamaV2DynamicJob(**job)`, ...).
"""

from __future__ import annotations

from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.models import qwen3
from ferrule_kit.models.control_text import ControlTextGuard, Escapes
from ferrule_kit.models.lm import FinishReason, InferInput, Usage, finish

from .attributes import CacheMode, ExLlamaAttributes

#: The dynamic generator allocates its cache in pages of this many tokens.
PAGE_SIZE = 256

#: exllamav2 cache classes by our cache option. (The FP8 `ExLlamaV2Cache_8bit` is not
#: offered: the dynamic generator refuses it; its Q8 cache is the 8-bit choice.)
CACHE_CLASSES: dict[CacheMode, str] = {
    "fp16": "ExLlamaV2Cache",
    "q8": "ExLlamaV2Cache_Q8",
    "q4": "ExLlamaV2Cache_Q4",
}

#: exllamav2's ``eos_reason`` -> the contract's finish reason.
FINISH_REASONS: dict[str, FinishReason] = {
    "stop_token": "stop",
    "stop_string": "stop",
    "end_filter": "stop",
    "max_new_tokens": "length",
}


def cache_tokens(attributes: ExLlamaAttributes, max_seq_len: int) -> int:
    """The cache's size in tokens: a whole number of pages, at least one sequence."""
    wanted = max(attributes.cache_tokens or max_seq_len, max_seq_len)
    return -(-wanted // PAGE_SIZE) * PAGE_SIZE


def generator_arguments(paged: bool, parallel: int | None = None) -> dict[str, Any]:
    """Keyword arguments of ``ExLlamaV2DynamicGenerator`` besides the model, cache and
    tokenizer. ``paged``: flash-attn >= 2.5.7 is installed (exllamav2's
    ``attn.has_flash_attn_with_paged``). Its paged attention lets the generator batch
    concurrent requests, at most ``parallel`` of them (None: exllamav2's own cap, 256 with
    its defaults; the cache's pages limit it too); the rest wait in order. Without it the
    generator runs unpaged, where exllamav2 supports one sequence at a time, so requests
    queue and run one after another."""
    if not paged:
        return {"paged": False, "max_batch_size": 1}
    return {"paged": True} if parallel is None else {"paged": True, "max_batch_size": parallel}


def sampler_settings(
    request: InferInput, attributes: ExLlamaAttributes, reasoning: bool
) -> dict[str, Any]:
    """Keyword arguments of ``ExLlamaV2Sampler.Settings`` for one request.

    Qwen's recommended values for the mode, overridden by the component's attributes,
    overridden by the request. Temperature 0 means greedy, which exllamav2 spells
    top_k=1 (its temperature must stay positive).
    """
    sampling: dict[str, Any] = dict(qwen3.SAMPLING[reasoning])
    for name in ("temperature", "top_p", "top_k", "min_p"):
        value = getattr(attributes, name)
        if value is not None:
            sampling[name] = value
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None:
            sampling[name] = value
    if sampling["temperature"] == 0:
        sampling.update(temperature=1.0, top_k=1, top_p=0.0, min_p=0.0)
    return {
        **sampling,
        "token_repetition_penalty": attributes.repetition_penalty,
        "token_presence_penalty": attributes.presence_penalty,
    }


def token_budget(prompt_tokens: int, max_seq_len: int, max_tokens: int | None) -> int:
    """``max_new_tokens`` for a prompt: the request's limit, within what the sequence holds."""
    room = max_seq_len - prompt_tokens
    if room <= 0:
        raise InvalidInputError(
            f"the prompt is {prompt_tokens} tokens; the model's sequences hold {max_seq_len} "
            "(shorten the conversation or define the component with a larger max_seq_len)",
            field="$.messages",
        )
    return min(max_tokens or room, room)


def stop_conditions(stop_token_ids: list[int], stop: list[str]) -> list[int | str]:
    """Qwen3's end-of-turn tokens (by id: exact, never held back) and the request's stop strings."""
    return [*dict.fromkeys(stop_token_ids), *dict.fromkeys(s for s in stop if s)]


@attrs.frozen
class Turn:
    """One request, ready for exllamav2."""

    prompt: str
    reasoning: bool
    sampler: dict[str, Any]
    stop: list[str]
    output_schema: dict[str, Any] | None
    #: Where the request's own control texts sit in ``prompt`` (see `prompt_ids`).
    escapes: Escapes | None = None


def plan_turn(
    request: InferInput, attributes: ExLlamaAttributes, guard: ControlTextGuard | None = None
) -> Turn:
    # A JSON-schema constraint holds from the first token, leaving no room for a think
    # block: a request with output_schema is answered without thinking (as on llama.cpp).
    reasoning = request.reasoning_on and request.output_schema is None
    escaped, escapes = guard.escape(request) if guard is not None else (request, None)
    return Turn(
        prompt=qwen3.render_prompt(escaped.messages, escaped.tools, reasoning=reasoning),
        reasoning=reasoning,
        sampler=sampler_settings(request, attributes, reasoning),
        stop=list(request.stop),
        output_schema=request.output_schema,
        escapes=escapes,
    )


def guard_tokenizer(tokenizer: Any) -> ControlTextGuard:
    """Make an ``ExLlamaV2Tokenizer`` read special tokens only where asked, and return the
    guard of their texts (see `ferrule_kit.models.control_text`).

    exllamav2 finds special tokens itself (``encode_special_tokens=True`` splits the text
    at their texts) and hands the rest to its Hugging Face tokenizer, which by default
    finds them again in any text, so ``encode_special_tokens=False`` alone would still read
    a typed ``<|im_start|>`` as the token. Its ``encode_special_tokens`` switch makes it
    read them as text; added tokens that are not special (Qwen's ``<think>``) it still
    reads as tokens, as Qwen's own tokenizer does.
    """
    tokenizer.tokenizer_model.hf_tokenizer.encode_special_tokens = True
    return ControlTextGuard(tokenizer.extended_piece_to_id)


def prompt_ids(tokenizer: Any, turn: Turn) -> list[int]:
    """The prompt's token ids: special tokens read in the template's text only."""
    ids: list[int] = []
    for segment in ControlTextGuard.segments(turn.prompt, turn.escapes):
        encoded = tokenizer.encode(
            segment.text, encode_special_tokens=segment.special, add_bos=False
        )
        ids += encoded.flatten().tolist()
    return ids


def job_arguments(
    turn: Turn,
    *,
    prompt_tokens: int,
    max_seq_len: int,
    max_tokens: int | None,
    stop_token_ids: list[int],
    seed: int,
    constrained: bool,
) -> dict[str, Any]:
    """Keyword arguments of ``ExLlamaV2DynamicJob`` besides input_ids, gen_settings and filters."""
    return {
        "max_new_tokens": token_budget(prompt_tokens, max_seq_len, max_tokens),
        "stop_conditions": stop_conditions(stop_token_ids, turn.stop),
        # Decode every token as its text: the parser needs <think> and <tool_call>, whichever
        # way the model's tokenizer flags them; end-of-turn tokens stop the job unemitted.
        "decode_special_tokens": True,
        "seed": seed,
        # With a schema, end as soon as the grammar allows (the JSON value is complete).
        "filter_prefer_eos": constrained,
    }


#: The result keys `ResultReader` reads (exllamav2/generator/dynamic.py documents them).
RESULT_KEYS = (
    "stage",
    "text",
    "eos",
    "eos_reason",
    "prompt_tokens",
    "new_tokens",
    "eos_triggering_token_str",
)


def result_fields(result: dict[str, Any]) -> dict[str, Any]:
    """What of an ``iterate()`` result crosses to the event loop: plain values, no tensors."""
    out = {key: result[key] for key in RESULT_KEYS if key in result}
    held = result.get("held")
    if held and held.get("text"):
        out["held"] = {"text": held["text"]}
    return out


class ResultReader:
    """Turns one job's ``generator.iterate()`` results into ``infer`` delta items.

    Reads `RESULT_KEYS` and the ``held`` text (see `result_fields`).
    """

    def __init__(self, reasoning: bool) -> None:
        self._parser = qwen3.Qwen3StreamParser(reasoning)
        self.finished = False

    def read(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        if result.get("stage") != "streaming":
            return []
        out = self._parser.feed(result.get("text") or "")
        if not result.get("eos"):
            return out
        if result.get("eos_reason") == "stop_token":
            # The stop token's own piece ends the held-back text (held while it might begin
            # a stop string); what precedes it is reply text the job never emitted.
            held = (result.get("held") or {}).get("text") or ""
            trigger = result.get("eos_triggering_token_str") or ""
            out += self._parser.feed(held.removesuffix(trigger))
        out += self._parser.close()
        reason = FINISH_REASONS.get(str(result.get("eos_reason")), "stop")
        if reason == "stop" and self._parser.saw_tool_calls:
            reason = "tool_calls"
        usage = Usage(
            input_tokens=result.get("prompt_tokens", 0), output_tokens=result.get("new_tokens", 0)
        )
        out.append(finish(reason, usage))
        self.finished = True
        return out
