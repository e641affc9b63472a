"""The ``llamacpp_language_model`` component: GGUF models on llama-cpp-python.

llama.cpp calls block for as long as a prompt takes to read or a token to compute, so
they never run on the event loop. Each component owns one llama.cpp context and one worker
thread that decodes the requests to the model together, ``parallel`` at a time, each a
sequence of its own (`ferrule_llamacpp.batching`); the worker hands a step's deltas to the
async ``infer`` generators through the loop as the next step starts (`ferrule_llamacpp.jobs`).
When the consumer stops — closes the stream, is cancelled, or the runtime's loop goes away —
its sequence leaves at the next step (a prompt is read in chunks of ``n_batch`` tokens).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import random
from collections.abc import AsyncIterator
from typing import Any

from ferrule_kernel import InvalidInputError, get_logger
from ferrule_kit.errors import ModelError
from ferrule_kit.models.control_text import ControlTextGuard
from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.tool_choice import constrained_inputs, honour_tool_choice

from . import openmp, weights
from .attributes import LlamaCppAttributes
from .batching import BatchDecoder
from .formats import (
    QWEN3_ARCHITECTURES,
    SMOLLM2_BASENAMES,
    ChatTemplateFormat,
    Qwen3Format,
    SmolLM2Format,
    Turn,
)
from .jobs import END, Job, Sequence
from .sampling import Penalties, Sampler
from .stops import StopMatcher

log = get_logger("ferrule.llamacpp")

#: Compiled grammars kept per component (output schemas repeat across an agent's turns).
_GRAMMAR_CACHE = 16
#: Generated tokens the repeat penalty looks back on (llama-cpp-python's last_n_tokens_size).
_PENALTY_LAST_N = 64
#: The KV cache's tokens over all sequences when n_ctx is not given: each sequence gets
#: this / parallel, at most the model's trained context (8192 each at the default 4; the
#: cache holds parallel x n_ctx, and Qwen3's 40 960 x 4 would be ~19 GB for the 0.6B).
DEFAULT_KV_TOKENS = 32768


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def control_texts(model: Any) -> list[str]:
    """The texts llama.cpp reads as a token only when parsing special tokens: those of its
    control and unknown tokens (user-defined ones, such as Qwen's ``<think>``, it reads as
    tokens in any text)."""
    import llama_cpp

    vocab = model.vocab
    wanted = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
    texts = []
    for token in range(model.n_vocab()):
        if llama_cpp.llama_vocab_get_attr(vocab, token) & wanted:
            text = llama_cpp.llama_vocab_get_text(vocab, token)
            if text:
                texts.append(text.decode("utf-8", errors="replace"))
    return texts


class LlamaCppLanguageModel:
    """A GGUF chat model loaded in llama.cpp, with the ``infer`` method of `ferrule_kit.models.lm`."""

    def __init__(self, attributes: LlamaCppAttributes) -> None:
        with openmp.prepared():  # how its threads wait: read when the library loads
            import llama_cpp
        from llama_cpp._internals import LlamaModel
        from llama_cpp._logger import set_verbose

        self.model_id = attributes.model
        self.path = weights.locate(
            attributes.model, download=attributes.download, cache_dir=attributes.cache_dir
        )
        self.threads = attributes.n_threads or available_cores()
        set_verbose(False)  # llama.cpp's own log lines: errors only (as Llama(verbose=False))
        try:
            #: The llama_cpp._internals.LlamaModel: weights, vocabulary, metadata.
            self.model = LlamaModel(
                path_model=str(self.path),
                params=llama_cpp.llama_model_default_params(),
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp could not load {self.path}: {exc}", model=self.model_id
            ) from None
        metadata = self.model.metadata()
        #: The context each sequence gets.
        self.n_ctx = attributes.n_ctx or min(
            self.model.n_ctx_train(), DEFAULT_KV_TOKENS // attributes.parallel
        )
        self.parallel = attributes.parallel
        self.architecture = metadata.get("general.architecture", "")
        self._format: Qwen3Format | ChatTemplateFormat
        try:
            if self.architecture in QWEN3_ARCHITECTURES:
                self._format = Qwen3Format(attributes)
            else:
                entry = weights.lookup(attributes.model)
                generation = entry.generation if entry is not None else {}
                family = (
                    SmolLM2Format
                    if metadata.get("general.basename", "").lower() in SMOLLM2_BASENAMES
                    else ChatTemplateFormat
                )
                self._format = family(attributes, self.model, metadata, self.model_id, generation)
            self._decoder = BatchDecoder(
                self.model,
                model_id=self.model_id,
                parallel=self.parallel,
                n_ctx=self.n_ctx,
                n_batch=attributes.n_batch,
                threads=self.threads,
                piece=self._piece,
                deterministic=attributes.deterministic,
                cache_bytes=attributes.cache_ram << 20,
            )
        except BaseException:
            self.model.close()
            raise
        self._seed = attributes.seed
        #: The vocabulary's control tokens' texts: parsed as tokens in the template's text
        #: only, never in the request's (see `ferrule_kit.models.control_text`).
        self._guard = ControlTextGuard(control_texts(self.model))
        self._pieces: dict[int, bytes] = {}
        self._grammars: dict[str, str] = {}
        log.debug(
            "model_loaded",
            model=self.model_id,
            path=str(self.path),
            architecture=self.architecture,
            n_ctx=self.n_ctx,
            parallel=self.parallel,
            threads=self.threads,
        )

    @property
    def generated_tokens(self) -> int:
        """Tokens generated by this component so far, over all requests."""
        return self._decoder.generated_tokens

    @property
    def decoder(self) -> BatchDecoder:
        """The decode loop (its ``running`` and ``waiting`` counts, its slots)."""
        return self._decoder

    # -- the infer method ------------------------------------------------------------------

    @honour_tool_choice  # a forced call: a JSON-schema grammar, as output_schema
    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        job = Job(asyncio.get_running_loop())
        with self._decoder.arriving():  # read with prompts sent at the same time
            # Rendering, tokenizing and compiling a grammar take milliseconds: off the loop.
            sequence = await asyncio.to_thread(self._sequence, inputs, job)
            self._decoder.submit(sequence)
        try:
            while True:
                item = await job.queue.get()
                if item is END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            job.cancelled.set()

    async def count_tokens(self, inputs: InferInput) -> dict[str, int]:
        """The prompt tokens ``infer`` would read for ``inputs`` (its usage's
        ``input_tokens``): the turn rendered and tokenized as ``infer`` does, nothing decoded."""
        request = constrained_inputs(inputs)  # what honour_tool_choice hands to infer
        prompt = await asyncio.to_thread(lambda: self.prompt_tokens(request))
        return {"input_tokens": len(prompt)}

    def prompt_tokens(self, request: InferInput) -> list[int]:
        """The tokens ``infer`` reads for ``request`` (blocking: call it off the loop)."""
        return self._turn(request)[1]

    def wait_idle(self) -> None:
        """Block until every request submitted so far has ended."""
        self._decoder.wait_idle()

    async def close(self) -> None:
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._decoder.close()
        self.model.close()

    # -- a request, ready to decode ----------------------------------------------------------

    def _turn(self, request: InferInput) -> tuple[Turn, list[int]]:
        """The request rendered, and the prompt's tokens: special tokens parsed in the
        template's text only (a control token's text in the request is read as text), no
        BOS added (the template writes its own)."""
        escaped, escapes = self._guard.escape(request)
        turn = self._format.turn(escaped)
        tokens: list[int] = []
        for segment in self._guard.segments(turn.prompt, escapes):
            tokens += self.model.tokenize(segment.text.encode("utf-8"), False, segment.special)
        return turn, tokens

    def _sequence(self, request: InferInput, job: Job) -> Sequence:
        turn, prompt = self._turn(request)
        room = self.n_ctx - len(prompt)
        if room <= 0:
            raise InvalidInputError(
                f"the prompt is {len(prompt)} tokens; {self.model_id}'s context holds {self.n_ctx} "
                "(shorten the conversation or define the component with a larger n_ctx)",
                field="$.messages",
            )
        sampling = turn.sampling
        sampler = self._sampler(sampling, self._grammar(request.output_schema))
        return Sequence(
            job,
            prompt,
            sampler,
            limit=min(sampling["max_tokens"], room),
            stops=StopMatcher([*turn.stops, *request.stop]),
            parser=turn.parser,
        )

    def _sampler(self, sampling: dict[str, Any], grammar: str | None) -> Sampler:
        """The request's sampler, as llama-cpp-python's ``Llama`` builds its chain (so a
        greedy reply is the one ``create_chat_completion`` gives): repeat penalties (applied
        by `Sampler`, see `ferrule_llamacpp.sampling`), the grammar, then greedy at
        temperature 0 (without a grammar, `Sampler` takes the highest logit itself), else
        top-k, top-p, min-p, temperature and a seeded draw."""
        import llama_cpp
        from llama_cpp._internals import LlamaSampler

        temperature = sampling["temperature"]
        if temperature == 0.0 and grammar is None:
            chain = None  # greedy: the row's highest logit (see Sampler)
        else:
            chain = LlamaSampler()
            if grammar is not None:
                constraint = llama_cpp.llama_sampler_init_grammar(
                    self.model.vocab, grammar.encode("utf-8"), b"root"
                )
                if not constraint:
                    chain.close()
                    raise InvalidInputError(
                        "llama.cpp could not compile this JSON schema's grammar",
                        field="$.output_schema",
                    )
                llama_cpp.llama_sampler_chain_add(chain.sampler, constraint)
            if temperature == 0.0:
                chain.add_greedy()
            else:
                chain.add_top_k(sampling["top_k"])
                chain.add_top_p(sampling["top_p"], 1)
                chain.add_min_p(sampling["min_p"], 1)
                chain.add_temp(temperature)
                chain.add_dist(self._seed if self._seed is not None else random.getrandbits(32))
        penalty = (_PENALTY_LAST_N, sampling["repeat_penalty"], sampling["presence_penalty"])
        return Sampler(
            chain, self.model.n_vocab(), Penalties(*penalty) if Penalties.needed(*penalty) else None
        )

    def _piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            import llama_cpp

            special = self._format.special_tokens
            size = 64
            while True:
                buffer = ctypes.create_string_buffer(size)
                n = llama_cpp.llama_token_to_piece(
                    self.model.vocab, token, buffer, size, 0, special
                )
                if n >= 0:
                    break
                size = -n  # the piece is longer than the buffer: it says how long
            piece = self._pieces[token] = buffer.raw[:n]
        return piece

    def _grammar(self, schema: dict[str, Any] | None) -> str | None:
        """The GBNF grammar of a JSON schema (cached: the conversion is Python and slow)."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp.llama_grammar import json_schema_to_gbnf

            try:
                grammar = json_schema_to_gbnf(json.dumps(schema))
            except Exception as exc:
                raise InvalidInputError(
                    f"cannot turn this JSON schema into a grammar: {exc}", field="$.output_schema"
                ) from None
            if len(self._grammars) >= _GRAMMAR_CACHE:
                self._grammars.pop(next(iter(self._grammars)), None)  # the oldest
            self._grammars[key] = grammar
        return grammar
