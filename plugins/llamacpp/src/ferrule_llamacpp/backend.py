"""The ``llamacpp_language_model`` component: GGUF models on llama-cpp-python.

llama.cpp calls block for as long as a prompt takes to read or a token to compute, so
they never run on the event loop: each component owns one worker thread (requests to
one model run one at a time, in order) that generates and hands each delta to the
async ``infer`` generator through the loop (``call_soon_threadsafe`` into an
`asyncio.Queue`). When the consumer stops — closes the stream, is cancelled, or the
runtime's loop goes away — the worker sees it before its next token; while a prompt is
being read, llama.cpp's abort callback interrupts it.
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import ctypes
import json
import os
import random
import threading
from collections.abc import AsyncIterator
from typing import Any

from ferrule.errors import ModelError
from ferrule.lm import InferInput, Usage, finish
from ferrule_kernel import FerruleError, InvalidInputError, get_logger

from . import weights
from .attributes import LlamaCppAttributes
from .formats import QWEN3_ARCHITECTURES, ChatTemplateFormat, Qwen3Format
from .stops import StopMatcher

log = get_logger("ferrule.llamacpp")

_END = object()


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class _Cancelled(Exception):
    """The consumer went away: stop generating."""


class _Job:
    """One ``infer`` request, as the worker thread sees it."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = threading.Event()
        #: Tokens generated so far (read by tests and logs after the job ends).
        self.output_tokens = 0
        self.done = threading.Event()

    def _send(self, item: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.cancelled.set()

    def put(self, item: dict[str, Any]) -> None:
        if self.cancelled.is_set():
            raise _Cancelled
        self._send(item)

    def fail(self, error: FerruleError) -> None:
        self._send(error)

    def end(self) -> None:
        self._send(_END)
        self.done.set()


class LlamaCppLanguageModel:
    """A GGUF chat model loaded in llama.cpp, with the ``infer`` method of `ferrule.lm`."""

    def __init__(self, attributes: LlamaCppAttributes) -> None:
        import llama_cpp

        self.model_id = attributes.model
        path = weights.locate(
            attributes.model, download=attributes.download, cache_dir=attributes.cache_dir
        )
        self.threads = attributes.n_threads or available_cores()
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=attributes.n_ctx or 0,  # 0: the model's trained context length
                n_batch=attributes.n_batch,
                n_threads=self.threads,
                n_threads_batch=self.threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp could not load {path}: {exc}", model=self.model_id
            ) from None
        self.n_ctx = self._llm.n_ctx()
        self.architecture = str(self._llm.metadata.get("general.architecture", ""))
        self._format: Qwen3Format | ChatTemplateFormat
        if self.architecture in QWEN3_ARCHITECTURES:
            self._format = Qwen3Format(attributes)
        else:
            self._format = ChatTemplateFormat(attributes, self._llm, self.model_id)
        self._seed = attributes.seed
        self._vocab = llama_cpp.llama_model_get_vocab(self._llm.model)
        self._pieces: dict[int, bytes] = {}
        self._grammars: dict[str, Any] = {}
        self._executor = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="ferrule-llamacpp"
        )
        self._active: _Job | None = None
        self._jobs: set[_Job] = set()
        # While a prompt is read, llama.cpp asks this between graph nodes whether to stop.
        # (Not during token generation: one token is quick, and a Python call per graph
        # node would cost a few percent of the generation speed.)
        self._abort = llama_cpp.ggml_abort_callback(self._should_abort)
        self._no_abort = llama_cpp.ggml_abort_callback()
        log.debug(
            "model_loaded",
            model=self.model_id,
            path=str(path),
            architecture=self.architecture,
            n_ctx=self.n_ctx,
            threads=self.threads,
        )

    # -- the infer method ------------------------------------------------------------------

    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        job = _Job(asyncio.get_running_loop())
        self._jobs.add(job)
        self._executor.submit(self._run, inputs, job)
        try:
            while True:
                item = await job.queue.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            job.cancelled.set()
            self._jobs.discard(job)

    async def close(self) -> None:
        for job in list(self._jobs):
            job.cancelled.set()
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._llm.close()

    # -- the worker thread -------------------------------------------------------------------

    def _should_abort(self, _data: Any) -> bool:
        job = self._active
        return job is not None and job.cancelled.is_set()

    def _set_abort(self, on: bool) -> None:
        import llama_cpp

        llama_cpp.llama_set_abort_callback(
            self._llm.ctx, self._abort if on else self._no_abort, None
        )

    def _run(self, request: InferInput, job: _Job) -> None:
        self._active = job
        try:
            if not job.cancelled.is_set():
                self._generate(request, job)
        except _Cancelled:
            pass
        except FerruleError as exc:
            job.fail(exc)
        except Exception as exc:
            if not job.cancelled.is_set():  # an aborted llama_decode raises too
                log.debug("generation_failed", model=self.model_id, error=repr(exc))
                job.fail(
                    ModelError(
                        f"llama.cpp failed: {type(exc).__name__}: {exc}", model=self.model_id
                    )
                )
        finally:
            self._active = None
            job.end()

    def _piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            import llama_cpp

            special = self._format.special_tokens
            size = 64
            while True:
                buffer = ctypes.create_string_buffer(size)
                n = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, size, 0, special)
                if n >= 0:
                    break
                size = -n  # the piece is longer than the buffer: it says how long
            piece = self._pieces[token] = buffer.raw[:n]
        return piece

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        grammar = self._grammars.get(key)
        if grammar is None:
            from llama_cpp import LlamaGrammar

            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as exc:
                raise InvalidInputError(
                    f"cannot turn this JSON schema into a grammar: {exc}", field="$.output_schema"
                ) from None
            self._grammars[key] = grammar
        return grammar

    def _generate(self, request: InferInput, job: _Job) -> None:
        import llama_cpp

        llm = self._llm
        turn = self._format.turn(request)
        prompt = llm.tokenize(turn.prompt.encode("utf-8"), add_bos=False, special=True)
        room = self.n_ctx - len(prompt)
        if room <= 0:
            raise InvalidInputError(
                f"the prompt is {len(prompt)} tokens; {self.model_id}'s context holds {self.n_ctx} "
                "(shorten the conversation or define the component with a larger n_ctx)",
                field="$.messages",
            )
        limit = min(request.max_tokens or room, room)
        grammar = self._grammar(request.output_schema)
        llm.set_seed(self._seed if self._seed is not None else random.getrandbits(32))
        sampling = turn.sampling
        stops = StopMatcher([*turn.stops, *request.stop])
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        parser = turn.parser
        reason = "length"
        self._set_abort(True)
        tokens = llm.generate(
            prompt,
            temp=sampling["temperature"],
            top_p=sampling["top_p"],
            top_k=sampling["top_k"],
            min_p=sampling["min_p"],
            repeat_penalty=sampling["repeat_penalty"],
            presence_penalty=sampling["presence_penalty"],
            grammar=grammar,
        )
        try:
            for token in tokens:
                if job.output_tokens == 0:
                    self._set_abort(False)  # the prompt is read
                if job.cancelled.is_set():
                    raise _Cancelled
                if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                    reason = "stop"
                    break
                job.output_tokens += 1
                text = decode(self._piece(token))
                if text:
                    for item in parser.feed(stops.feed(text)):
                        job.put(item)
                    if stops.stopped:
                        reason = "stop"
                        break
                if job.output_tokens >= limit:
                    break
        finally:
            tokens.close()
            self._set_abort(False)
        if not stops.stopped:
            tail = stops.feed(decode(b"", final=True))
            for item in parser.feed(tail + ("" if stops.stopped else stops.flush())):
                job.put(item)
        for item in parser.close():
            job.put(item)
        if reason == "stop" and parser.saw_tool_calls:
            reason = "tool_calls"
        job.put(finish(reason, Usage(input_tokens=len(prompt), output_tokens=job.output_tokens)))  # type: ignore[arg-type]
