"""Continuous batching: the requests to one model decoded together in one llama.cpp context.

Each running request is a sequence of its own (a ``seq_id``) in one context whose KV cache
has a separate stream per sequence (``kv_unified=False``): one worker thread loops over
decode steps, and in each step

1. requests waiting in line (in order) take the free sequence slots;
2. one ``llama_decode`` holds every generating sequence's last sampled token and the next
   chunk of each prompt still being read (``n_batch`` prompt tokens in all per step,
   shared out in the order the requests came), as llama-server does: prompts that arrive
   together are read together, and a long prompt is read in chunks between the others'
   tokens;
3. each sequence whose logits the step produced samples its next token (a prompt read to
   its end, its first) with its own sampler chain (penalties, grammar,
   top-k/top-p/min-p/temperature or greedy, its own seed).

A request leaves as soon as it ends (end of generation, a stop string, its token limit, its
consumer gone): its slot is free for the next one at the next step.

Packed so, a reply can differ from the request's solo reply where two tokens are all but
tied: llama.cpp cuts a decode over several KV streams into micro-batches of equal token
counts per sequence, so a prompt read among others is cut where it is not alone, and a few
numbers round differently (tested: the first token where a packed greedy reply leaves its
solo one was within 0.5 logits of the best; see tests/test_packed.py).

The deterministic mode (``deterministic=True``) makes outputs depend on the request
alone: each prompt is read whole (no start kept or copied), in pieces of ``n_batch``
tokens from its start, each in a ``llama_decode`` of its own, then the generating
sequences in one more. Each sequence's tokens then sit in their own stream at the same
cells as when it runs alone, and every matrix product sees the same shapes for that
sequence's rows except the weight products of a decode step, whose kernels compute each
row the same way whatever the row count. Flash attention is off: its CPU kernel splits the
keys of a lone query across threads (more than 511 cached tokens) but not those of
several, which changes rounding. With greedy decoding a request's tokens are the same
alone and among others (tested for 1 to 8 at once); with a unified KV cache they were not.

A slot keeps its tokens when its request ends. A new request takes a free slot that keeps
the busy sequence ids in the fewest runs of consecutive ids (llama.cpp decodes each run in
a pass of its own over the weights), of those the one holding the longest start of its
prompt (an agent's next turn repeats the conversation so far), then the lowest. Except in
the deterministic mode, it reads only what that slot does not already hold of its prompt,
as ``Llama.generate`` does for one sequence; where another slot or the prompt cache
(`prompt_cache`: what slots held before other requests took them) holds a longer start of
it (concurrent requests share a system prompt, a conversation comes back after others),
that KV state is loaded into the slot first. The state is exact, but the rest of the
prompt is read in another piece than a fresh read, which can round differently, as above.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from ferrule_kernel import FerruleError, get_logger
from ferrule_kit.errors import ModelError
from ferrule_kit.models.lm import Usage, finish

from .jobs import Job, Sequence, Slot
from .prompt_cache import PromptCache, common_prefix, read_state, write_state
from .step_stats import StepStats

log = get_logger("ferrule.llamacpp")

#: A start held elsewhere (another slot, the prompt cache) is loaded into a request's slot
#: when it saves reading at least this many prompt tokens, and one per this many tokens of
#: the state loaded: measured on SmolLM2 Q4_1 on 2 cores, a state moves in ~0.03 ms a
#: token and a prompt token reads in ~7.5 ms (Q4_1 has no matrix-matrix kernel), ~250x;
#: 32 leaves room for models and CPUs whose prompt reads are several times faster.
_MIN_LOAD = 4
_TOKENS_PER_READ = 32
#: Seconds a step that would only read prompts waits for requests on their way, so prompts
#: sent together are read in one step: those being rendered and tokenized (`arriving`), and
#: the next ones of clients whose replies just ended (a client in a loop sends its next at
#: once, so only within this long of the end). On the bench's 0.5B model four sent within
#: 10 ms were read as 1 then 3, and the three waited out the first one's read (~0.25 s)
#: before theirs. The wait ends when they are all in line: this bounds only what clients
#: that do not come back cost, once.
_GATHER = 0.05


class BatchDecoder:
    """The decode loop of one model: ``parallel`` sequences of ``n_ctx`` tokens each."""

    def __init__(
        self,
        model: Any,
        *,
        model_id: str,
        parallel: int,
        n_ctx: int,
        n_batch: int,
        threads: int,
        piece: Callable[[int], bytes],
        deterministic: bool = False,
        kv_unified: bool = False,
        cache_bytes: int = 0,
    ) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaContext

        self.model_id = model_id
        self.parallel = parallel
        self.n_ctx = n_ctx
        self.n_batch = n_batch
        #: Read prompts alone and keep a KV stream per sequence (see the module).
        self.deterministic = deterministic
        #: What slots held before other requests took them (none in the deterministic
        #: mode, which reads every prompt whole).
        self.prompt_cache = PromptCache(cache_bytes) if cache_bytes and not deterministic else None
        self._piece = piece
        self._vocab = model.vocab
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = n_ctx * parallel  # llama.cpp gives each stream n_ctx / n_seq_max
        # A packed step holds every generating sequence's token and n_batch prompt tokens.
        params.n_batch = params.n_ubatch = n_batch + parallel
        params.n_seq_max = parallel
        params.kv_unified = kv_unified and not deterministic
        # Flash attention as llama.cpp decides (llama-server's default: on where the CPU
        # kernel runs; ~15% faster steps), but off in the deterministic mode (see above).
        params.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
            if deterministic
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO
        )
        params.n_threads = params.n_threads_batch = threads
        try:
            self._context = LlamaContext(model=model, params=params, verbose=False)
        except ValueError as exc:
            raise ModelError(
                f"llama.cpp could not make a context of {parallel} x {n_ctx} tokens: {exc}",
                model=model_id,
            ) from None
        self._ctx = self._context.ctx
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self._batch = llama_cpp.llama_batch_init(params.n_batch, 0, 1)
        self._slots = [Slot(i) for i in range(parallel)]
        self._waiting: deque[Sequence] = deque()
        self._running: list[Sequence] = []  # in the order they were admitted
        #: Jobs given stream items since the last hand-over (see `ferrule_llamacpp.jobs`).
        self._outgoing: list[Job] = []
        self._cond = threading.Condition()
        self._closing = False
        self._clear_cache = False
        self._arriving = 0
        #: Requests ended (at most _GATHER apart, the last at ``_ended_at``) since as many
        #: new ones came: their clients may send the next.
        self._returning = 0
        self._ended_at = 0.0
        #: Tokens generated by this model so far, over all requests.
        self.generated_tokens = 0
        #: The most sequences one decode step has held.
        self.peak_batch = 0
        #: Time in llama_decode per step, by what the step held.
        self.stats = StepStats()
        self._thread = threading.Thread(
            target=self._loop, name=f"ferrule-llamacpp {model_id}", daemon=True
        )
        self._thread.start()

    # -- the requests' side ----------------------------------------------------------------

    def submit(self, sequence: Sequence) -> None:
        with self._cond:
            if self._closing:
                sequence.sampler.close()
                sequence.job.fail(self._deleted())
                sequence.job.flush()
                return
            self._waiting.append(sequence)
            self._returning = max(0, self._returning - 1)
            busy = sum(s.sequence is not None for s in self._slots) + len(self._waiting) - 1
            if busy >= self.parallel:
                log.info(
                    "request_queued",
                    model=self.model_id,
                    ahead=busy - self.parallel,
                    parallel=self.parallel,
                )
            self._cond.notify()

    @contextlib.contextmanager
    def arriving(self) -> Iterator[None]:
        """Around a request's preparation and `submit`: a step that would only read prompts
        waits for it (up to _GATHER seconds) to read its prompt with the others."""
        with self._cond:
            self._arriving += 1
        try:
            yield
        finally:
            with self._cond:
                self._arriving -= 1
                self._cond.notify()

    @property
    def waiting(self) -> int:
        """Requests in line for a free sequence slot."""
        return len(self._waiting)

    @property
    def running(self) -> int:
        """Requests holding a sequence slot (reading their prompt or generating)."""
        return len(self._running)

    def wait_idle(self) -> None:
        """Block until every request submitted so far has ended."""
        with self._cond:
            self._cond.wait_for(lambda: not self._waiting and not self._running)

    def slot_tokens(self) -> list[int]:
        """How many tokens each slot's KV stream holds (for tests and inspection)."""
        with self._cond:
            return [len(s.cached) for s in self._slots]

    def clear_cache(self) -> None:
        """Forget the tokens idle slots and the prompt cache hold: the next requests read
        their whole prompt (benchmarks; done by the worker before it admits the next one)."""
        with self._cond:
            self._clear_cache = True

    def close(self) -> None:
        """End every request (with a typed error where its consumer still listens) and free
        the context; blocks until the worker has stopped."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        import llama_cpp

        llama_cpp.llama_batch_free(self._batch)
        self._context.close()

    def _deleted(self) -> ModelError:
        return ModelError("the model was deleted while generating", model=self.model_id)

    # -- the worker thread ---------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._has_work():
                    self._hand_over()  # no decode follows to hand them over before
                self._cond.wait_for(self._has_work)
                wait = self._gathering()
                if wait > 0:
                    self._cond.wait_for(lambda: self._gathering() <= 0, wait)
                if self._closing:
                    break
                self._admit()
            try:
                self._step()
            except Exception as exc:  # not one request's fault: end them all, keep serving
                log.warning("decode_step_failed", model=self.model_id, error=repr(exc))
                for sequence in list(self._running):
                    self._failed([sequence], f"{type(exc).__name__}: {exc}")
            with self._cond:
                self._cond.notify_all()  # wait_idle
        with self._cond:
            ended = [*self._running, *self._waiting]
            self._waiting.clear()
        for sequence in ended:
            self._release(sequence)
            sequence.job.fail(self._deleted())
        self._hand_over()
        with self._cond:
            self._cond.notify_all()  # wait_idle

    def _has_work(self) -> bool:
        """Requests to admit or decode, or the decoder closing (called holding the lock)."""
        return bool(self._closing or self._waiting or self._running)

    def _gathering(self) -> float:
        """Seconds the next step is to wait for requests on their way, if it would read
        prompts alone with slots to spare (see _GATHER; called holding the lock)."""
        free = sum(s.sequence is None for s in self._slots) - len(self._waiting)
        if self._closing or free <= 0 or any(s.next_token is not None for s in self._running):
            return 0.0
        returning = self._ended_at + _GATHER - time.monotonic() if self._returning else 0.0
        return max(_GATHER if self._arriving else 0.0, returning)

    def _step(self) -> None:
        self._drop_cancelled()
        if self.deterministic:
            self._step_alone()
        else:
            self._step_packed()

    def _step_packed(self) -> None:
        """One llama_decode for the step: every generating sequence's last token and the
        next prompt chunks (n_batch tokens in all, shared out in the order the requests
        came), as llama-server does."""
        reading: list[tuple[Sequence, list[int]]] = []
        budget = self.n_batch
        for sequence in self._running:
            if sequence.next_token is not None or budget <= 0:
                continue
            start = len(sequence.slot.cached)  # type: ignore[union-attr]
            chunk = sequence.prompt[start : start + budget]
            reading.append((sequence, chunk))
            budget -= len(chunk)
        chunks = {id(sequence): chunk for sequence, chunk in reading}
        rows: list[tuple[int, int, int, bool]] = []
        samples: list[tuple[Sequence, int]] = []
        generating: list[Sequence] = []
        # By sequence id: llama.cpp puts consecutive ids in one micro-batch.
        for sequence in sorted(self._running, key=lambda s: s.slot.seq_id):  # type: ignore[union-attr]
            slot = sequence.slot
            assert slot is not None
            start = len(slot.cached)
            if sequence.next_token is not None:
                generating.append(sequence)
                samples.append((sequence, len(rows)))
                rows.append((sequence.next_token, start, slot.seq_id, True))
            elif id(sequence) in chunks:
                chunk = chunks[id(sequence)]
                last = start + len(chunk) == len(sequence.prompt)
                rows += [(t, start + i, slot.seq_id, False) for i, t in enumerate(chunk)]
                if last:
                    rows[-1] = (*rows[-1][:3], True)
                    samples.append((sequence, len(rows) - 1))
        if not rows:
            return
        self.peak_batch = max(self.peak_batch, len(generating))
        prompt_tokens = len(rows) - len(generating)
        status = self.stats.timed(
            lambda: self._decode(rows), len(generating), prompt_tokens, len(reading)
        )
        if status != 0:
            self._failed([*generating, *(s for s, _ in reading)], f"status {status}")
            return
        for sequence in generating:
            sequence.slot.cached.append(sequence.next_token)  # type: ignore[union-attr,arg-type]
        for sequence, chunk in reading:
            sequence.slot.cached.extend(chunk)  # type: ignore[union-attr]
        for sequence, index in samples:
            self._sample(sequence, index)

    def _step_alone(self) -> None:
        """Prompt chunks each in a llama_decode of its own, then one for the generating
        sequences (replies independent of what else runs: see the module)."""
        # Prompts first (a new request's first token comes one step sooner), each read in
        # the pieces it is read in alone: n_batch tokens from its start, whole pieces
        # only, up to n_batch tokens in all per step (at least one piece).
        budget = self.n_batch
        for sequence in [s for s in self._running if s.next_token is None]:
            start = len(sequence.slot.cached)  # type: ignore[union-attr]
            piece = min(len(sequence.prompt), start + self.n_batch) - start
            if piece > budget and budget < self.n_batch:
                break
            budget -= self._read_prompt(sequence, piece)
        generating = [s for s in self._running if s.next_token is not None]
        if generating:
            self._decode_step(generating)

    def _admit(self) -> None:
        """Give free slots to waiting requests, in order (called holding the lock)."""
        if self._clear_cache:
            self._clear_cache = False
            for slot in self._slots:
                if slot.sequence is None:
                    self._forget(slot, 0)
            if self.prompt_cache is not None:
                self.prompt_cache.clear()
        while self._waiting:
            free = [s for s in self._slots if s.sequence is None]
            if not free:
                return
            sequence = self._waiting.popleft()
            prompt = sequence.prompt
            # How much of the prompt each slot (busy or free) holds: an agent's next turn
            # repeats its conversation, concurrent requests share a system prompt.
            held = [common_prefix(s.cached, prompt) for s in self._slots]
            # Deterministic: nothing kept, the prompt read whole as on a fresh component
            # (a start kept from before would have the rest read in other pieces).
            slot = min(
                free,
                key=lambda s: (
                    self._passes(s),
                    0 if self.deterministic else -held[s.seq_id],
                    s.seq_id,
                ),
            )
            keep = 0
            if not self.deterministic:
                self._save(slot, held[slot.seq_id])
                keep = self._load_start(slot, prompt, held)
            # At least the prompt's last token is read again, for its logits.
            self._forget(slot, min(keep, len(prompt) - 1))
            slot.sequence = sequence
            sequence.slot = slot
            self._running.append(sequence)

    def _passes(self, taken: Slot) -> int:
        """The runs of consecutive ids the busy slots make with ``taken`` busy too: a step
        decodes each run in a pass of its own over the weights (llama.cpp's split_equal
        puts only consecutive sequence ids in one micro-batch)."""
        busy = [s.sequence is not None or s is taken for s in self._slots]
        return sum(b and (i == 0 or not busy[i - 1]) for i, b in enumerate(busy))

    def _save(self, slot: Slot, keep: int) -> None:
        """Put what ``slot`` holds in the prompt cache, if a new request is to drop enough
        of it (past its first ``keep`` tokens) for another to want it back."""
        if self.prompt_cache is None or len(slot.cached) - keep < _MIN_LOAD:
            return
        held = self.prompt_cache.holding(slot.cached)
        if held is not None:  # kept already: no need to read the state again
            self.prompt_cache.touch(held)
            return
        state = read_state(self._ctx, slot.seq_id)
        if state is not None:
            self.prompt_cache.save(slot.cached[:], state)

    def _load_start(self, slot: Slot, prompt: list[int], held: list[int]) -> int:
        """Load into ``slot`` the longest start of ``prompt`` another slot or the prompt
        cache holds, where that saves enough reading (see _MIN_LOAD); how many tokens of
        the prompt the slot then holds."""
        keep = held[slot.seq_id]
        source = max(self._slots, key=lambda s: (held[s.seq_id], -s.seq_id))
        saved, shared = (None, 0) if self.prompt_cache is None else self.prompt_cache.best(prompt)
        if held[source.seq_id] >= shared:
            saved, shared = None, held[source.seq_id]
        tokens = saved.tokens if saved is not None else source.cached
        if shared - keep < max(_MIN_LOAD, len(tokens) // _TOKENS_PER_READ):
            return keep
        state = saved.state if saved is not None else read_state(self._ctx, source.seq_id)
        if state is None or not write_state(self._ctx, self._memory, state, slot.seq_id):
            slot.cached.clear()
            return 0
        if saved is not None and self.prompt_cache is not None:
            self.prompt_cache.used(saved)
        else:
            self.stats.copies += 1
        slot.cached = tokens[:]
        return shared

    def _forget(self, slot: Slot, keep: int) -> None:
        """Drop the slot's cached tokens from position ``keep`` on."""
        import llama_cpp

        if keep < len(slot.cached):
            if not llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, keep, -1):
                llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, -1, -1)
                keep = 0
            del slot.cached[keep:]

    def _drop_cancelled(self) -> None:
        for sequence in [s for s in self._running if s.job.cancelled.is_set()]:
            self._release(sequence)
            sequence.job.end()

    def _release(self, sequence: Sequence) -> None:
        self._outgoing.append(sequence.job)  # its last items follow
        if sequence in self._running:
            self._running.remove(sequence)
        if sequence.slot is not None:
            sequence.slot.sequence = None
            sequence.slot = None
        sequence.sampler.close()

    def _decode(self, tokens: list[tuple[int, int, int, bool]]) -> int:
        """One llama_decode of (token, position, seq_id, wants logits) rows; its status."""
        import llama_cpp

        batch = self._batch
        batch.n_tokens = len(tokens)
        for i, (token, pos, seq_id, logits) in enumerate(tokens):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq_id
            batch.logits[i] = logits
        self._hand_over()
        return int(llama_cpp.llama_decode(self._ctx, batch))

    def _hand_over(self) -> None:
        """Send the stream items put since the last step to their loops."""
        for job in self._outgoing:
            job.flush()
        self._outgoing.clear()

    def _failed(self, sequences: list[Sequence], why: str) -> None:
        """A decode failed: end these requests with the error and clear their slots."""
        for sequence in sequences:
            slot = sequence.slot
            if slot is not None:  # what the failed batch left in its stream goes too
                import llama_cpp

                llama_cpp.llama_memory_seq_rm(self._memory, slot.seq_id, -1, -1)
                slot.cached.clear()
            self._release(sequence)
            sequence.job.fail(
                ModelError(f"llama.cpp failed to decode ({why})", model=self.model_id)
            )

    def _decode_step(self, generating: list[Sequence]) -> None:
        generating.sort(key=lambda s: s.slot.seq_id)  # type: ignore[union-attr]
        rows = []
        for sequence in generating:
            slot = sequence.slot
            assert slot is not None and sequence.next_token is not None
            rows.append((sequence.next_token, len(slot.cached), slot.seq_id, True))
        self.peak_batch = max(self.peak_batch, len(rows))
        status = self.stats.timed(lambda: self._decode(rows), len(rows), 0)
        if status != 0:
            self._failed(generating, f"status {status}")
            return
        for index, sequence in enumerate(generating):
            sequence.slot.cached.append(sequence.next_token)  # type: ignore[union-attr,arg-type]
            self._sample(sequence, index)

    def _read_prompt(self, sequence: Sequence, budget: int) -> int:
        """Read the next chunk of the sequence's prompt (at most ``budget`` tokens); sample
        its first token if that was the last chunk. Returns the tokens read."""
        slot = sequence.slot
        assert slot is not None
        start = len(slot.cached)
        chunk = sequence.prompt[start : start + budget]
        last = start + len(chunk) == len(sequence.prompt)
        rows = [
            (t, start + i, slot.seq_id, last and i == len(chunk) - 1) for i, t in enumerate(chunk)
        ]
        status = self.stats.timed(lambda: self._decode(rows), 0, len(rows))
        if status != 0:
            self._failed([sequence], f"status {status}")
            return len(chunk)
        slot.cached.extend(chunk)
        if last:
            self._sample(sequence, len(chunk) - 1)
        return len(chunk)

    def _sample(self, sequence: Sequence, index: int) -> None:
        """Sample the sequence's next token from the logits at batch row ``index`` and
        stream its text; end the request where it ends."""
        import llama_cpp

        self._outgoing.append(sequence.job)
        try:
            token = sequence.sampler.sample(self._context, index)
            if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                self._finish(sequence, "stop")
                return
            sequence.job.tokens.append(token)
            self.generated_tokens += 1
            text = sequence.decode(self._piece(token))
            if text:
                for item in sequence.parser.feed(sequence.stops.feed(text)):
                    sequence.job.put(item)
                if sequence.stops.stopped:
                    self._finish(sequence, "stop")
                    return
            if len(sequence.job.tokens) >= sequence.limit:
                self._finish(sequence, "length")
                return
            sequence.next_token = token
        except FerruleError as exc:
            self._release(sequence)
            sequence.job.fail(exc)
        except Exception as exc:  # a failing request ends alone
            log.debug("generation_failed", model=self.model_id, error=repr(exc))
            self._release(sequence)
            sequence.job.fail(
                ModelError(f"llama.cpp failed: {type(exc).__name__}: {exc}", model=self.model_id)
            )

    def _finish(self, sequence: Sequence, reason: str) -> None:
        stops, parser, job = sequence.stops, sequence.parser, sequence.job
        self._release(sequence)
        with self._cond:
            now = time.monotonic()
            self._returning = 1 + (self._returning if now - self._ended_at < _GATHER else 0)
            self._ended_at = now
        if not stops.stopped:
            tail = stops.feed(sequence.decode(b"", final=True))
            for item in parser.feed(tail + ("" if stops.stopped else stops.flush())):
                job.put(item)
        for item in parser.close():
            job.put(item)
        if reason == "stop" and parser.saw_tool_calls:
            reason = "tool_calls"
        usage = Usage(input_tokens=len(sequence.prompt), output_tokens=len(job.tokens))
        job.put(finish(reason, usage))  # type: ignore[arg-type]
        job.end()
