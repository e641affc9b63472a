"""The ``exllama_language_model`` component: Qwen3 on exllamav2's dynamic generator.

torch and exllamav2 are imported here, when a component is defined, never at discovery.
Without a CUDA device (or without torch/exllamav2) defining fails at once with
`CudaUnavailableError`, before any weights are fetched.

One worker thread per component owns the generator — every exllamav2 and CUDA call
happens on it. ``infer`` hands it a request; the worker builds the job, enqueues it and
calls ``generator.iterate()`` while any job is left, passing each result to the asyncio
queue of the request it belongs to. With flash-attn's paged attention several requests
share the generator's batch (continuous batching); without it they run one at a time.
A request whose consumer goes away is cancelled in the generator before its next step.

This module runs only on an NVIDIA GPU (``plugins/exllama/tests/gpu``, ``nox -s gpu``);
the values it passes to exllamav2 come from `ferrule_exllama.settings` and
`ferrule_exllama.patches`, which are tested without one.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncIterator
from typing import Any

from ferrule_kernel import FerruleError, get_logger
from ferrule_kit.errors import ModelError
from ferrule_kit.models import qwen3
from ferrule_kit.models.lm import InferInput
from ferrule_kit.models.tool_choice import honour_tool_choice

from . import patches, settings, weights
from .attributes import ExLlamaAttributes
from .constraint import SchemaConstraint
from .hardware import cuda_status

log = get_logger("ferrule.exllama")


class _Request:
    """One ``infer`` call, as the worker thread sees it."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, inputs: InferInput, turn: settings.Turn
    ) -> None:
        self.loop = loop
        self.inputs = inputs
        self.turn = turn
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.job: Any = None
        self.cancelled = False

    def send(self, item: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the loop is closed: nobody is listening any more
            self.cancelled = True


def _filter_class() -> type:
    from exllamav2.generator.filters import ExLlamaV2Filter

    class SchemaFilter(ExLlamaV2Filter):
        """exllamav2's filter interface over a `SchemaConstraint`."""

        def __init__(self, model: Any, tokenizer: Any, constraint: SchemaConstraint) -> None:
            super().__init__(model, tokenizer)
            self.constraint = constraint

        def begin(self, prefix_str: str) -> None:
            self.constraint.begin()

        def feed(self, token: Any) -> None:
            self.constraint.feed(int(token[0][0]))

        def next(self) -> tuple[list[int], list[int]]:
            return self.constraint.allowed(), []

        def use_background_worker(self) -> bool:
            return True  # CPU work: overlap it with the forward pass

    return SchemaFilter


class ExLlamaLanguageModel:
    """A Qwen3 model loaded in exllamav2, with the ``infer`` method of `ferrule_kit.models.lm`."""

    def __init__(self, attributes: ExLlamaAttributes) -> None:
        cuda_status().require(attributes.model)
        self._attributes = attributes
        self.model_id = attributes.model
        model_dir = weights.locate(
            attributes.model,
            revision=attributes.revision,
            download=attributes.download,
            cache_dir=attributes.cache_dir,
        )
        weights.require_qwen3(model_dir, attributes.model)

        import exllamav2
        import torch
        from exllamav2 import ExLlamaV2, ExLlamaV2Tokenizer, attn
        from exllamav2.generator import ExLlamaV2DynamicGenerator

        # exllamav2's config with this machine's workarounds (causal mask, Qwen3 head norm,
        # RoPE base, cuDNN attention): before the model is built, since quantized layers
        # compile the head norm in at load.
        config = patches.configure(model_dir, attributes.max_seq_len)
        self.max_seq_len: int = config.max_seq_len
        model = ExLlamaV2(config)
        cache_class = getattr(exllamav2, settings.CACHE_CLASSES[attributes.cache])
        cache_tokens = settings.cache_tokens(attributes, self.max_seq_len)
        try:
            if attributes.gpu_split:
                model.load(gpu_split=attributes.gpu_split, progress=True)
                cache = cache_class(model, max_seq_len=cache_tokens)
            else:
                cache = cache_class(model, max_seq_len=cache_tokens, lazy=True)
                model.load_autosplit(cache, progress=True)
        except torch.cuda.OutOfMemoryError:
            raise ModelError(
                f"{self.model_id} with a {attributes.cache} cache of {cache_tokens} tokens does not fit "
                "in GPU memory: define it with cache='q4' (or 'q8'), a smaller max_seq_len, or "
                "smaller weights",
                model=self.model_id,
            ) from None
        except Exception as exc:  # exllamav2 asserts on what it cannot load
            raise ModelError(
                f"exllamav2 could not load {model_dir}: {type(exc).__name__}: {exc}",
                model=self.model_id,
            ) from None
        self._model, self._cache = model, cache
        self._tokenizer = ExLlamaV2Tokenizer(config)
        #: Special tokens are read in the template's text only, never in the request's.
        self._guard = settings.guard_tokenizer(self._tokenizer)
        paged = bool(attn.has_flash_attn_with_paged)
        self._generator = ExLlamaV2DynamicGenerator(
            model,
            cache,
            self._tokenizer,
            **settings.generator_arguments(paged, attributes.parallel),
        )
        ids = [self._tokenizer.single_id(s) for s in qwen3.STOP_STRINGS]
        self._stop_ids = [i for i in (*ids, self._tokenizer.eos_token_id) if isinstance(i, int)]
        self._tokenizer_data: Any = None  # lm-format-enforcer's vocabulary, built on first use
        self._filter_class: type | None = None

        self._lock = threading.Condition()
        self._incoming: list[_Request] = []
        self._running: dict[Any, _Request] = {}
        self._closing = False
        self._worker = threading.Thread(target=self._work, name="ferrule-exllama", daemon=True)
        self._worker.start()
        log.debug(
            "model_loaded",
            model=self.model_id,
            path=str(model_dir),
            max_seq_len=self.max_seq_len,
            cache=attributes.cache,
            cache_tokens=cache_tokens,
            paged=paged,
            parallel=self._generator.max_batch_size,
        )

    # -- the infer method ------------------------------------------------------------------

    @honour_tool_choice  # a forced call: a JSON-schema grammar, as output_schema
    async def infer(self, inputs: InferInput) -> AsyncIterator[dict[str, Any]]:
        turn = settings.plan_turn(inputs, self._attributes, self._guard)
        request = _Request(asyncio.get_running_loop(), inputs, turn)
        reader = settings.ResultReader(turn.reasoning)
        with self._lock:
            self._incoming.append(request)
            self._lock.notify()
        try:
            while not reader.finished:
                item = await request.queue.get()
                if isinstance(item, BaseException):
                    raise item
                for delta in reader.read(item):
                    yield delta
        finally:
            if not reader.finished:
                with self._lock:
                    request.cancelled = True
                    self._lock.notify()

    async def close(self) -> None:
        with self._lock:
            self._closing = True
            self._lock.notify()
        await asyncio.to_thread(self._worker.join)

    # -- the worker thread -------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            with self._lock:
                while not (self._incoming or self._running or self._closing):
                    self._lock.wait()
                incoming, self._incoming = self._incoming, []
                closing = self._closing
            if closing:
                self._shutdown(incoming)
                return
            try:
                for request in incoming:
                    self._start(request)
                for job, request in list(self._running.items()):
                    if request.cancelled:
                        self._generator.cancel(job)
                        del self._running[job]
                if self._running:
                    self._step()
            except Exception as exc:  # fail what was in flight, keep the component serving
                log.debug("generation_failed", model=self.model_id, error=repr(exc))
                error = ModelError(
                    f"exllamav2 failed: {type(exc).__name__}: {exc}", model=self.model_id
                )
                for request in self._running.values():
                    request.send(error)
                self._running.clear()
                self._generator.clear_queue()

    def _start(self, request: _Request) -> None:
        if request.cancelled:
            return
        try:
            request.job = self._job(request)
            self._generator.enqueue(request.job)
        except FerruleError as exc:
            request.send(exc)
            return
        except Exception as exc:
            log.debug("job_failed", model=self.model_id, error=repr(exc))
            request.send(
                ModelError(f"exllamav2 failed: {type(exc).__name__}: {exc}", model=self.model_id)
            )
            return
        if len(self._running) >= self._generator.max_batch_size:
            # exllamav2 starts it when a running one ends, in the order enqueued.
            log.debug(
                "request_queued",
                model=self.model_id,
                running=len(self._running),
                parallel=self._generator.max_batch_size,
            )
        self._running[request.job] = request

    def _job(self, request: _Request) -> Any:
        from exllamav2.generator import ExLlamaV2DynamicJob, ExLlamaV2Sampler

        turn = request.turn
        import torch

        ids = settings.prompt_ids(self._tokenizer, turn)
        input_ids = torch.tensor([ids], dtype=torch.long)
        filters = [] if turn.output_schema is None else [self._schema_filter(turn.output_schema)]
        seed = (
            self._attributes.seed if self._attributes.seed is not None else random.getrandbits(32)
        )
        arguments = settings.job_arguments(
            turn,
            prompt_tokens=input_ids.shape[-1],
            max_seq_len=self.max_seq_len,
            max_tokens=request.inputs.max_tokens,
            stop_token_ids=self._stop_ids,
            seed=seed,
            constrained=bool(filters),
        )
        return ExLlamaV2DynamicJob(
            input_ids=input_ids,
            gen_settings=ExLlamaV2Sampler.Settings(**turn.sampler),
            filters=filters,
            **arguments,
        )

    def _schema_filter(self, schema: dict[str, Any]) -> Any:
        if self._tokenizer_data is None:
            try:
                from lmformatenforcer.integrations.exllamav2 import (
                    build_token_enforcer_tokenizer_data,
                )
            except ImportError:
                raise ModelError(
                    "output_schema needs lm-format-enforcer: pip install 'ferrule-exllama[cuda]'",
                    model=self.model_id,
                ) from None

            self._tokenizer_data = build_token_enforcer_tokenizer_data(self._tokenizer)
            self._filter_class = _filter_class()
        assert self._filter_class is not None
        return self._filter_class(
            self._model, self._tokenizer, SchemaConstraint(self._tokenizer_data, schema)
        )

    def _step(self) -> None:
        for result in self._generator.iterate():
            request = self._running.get(result.get("job"))
            if request is None:
                continue
            request.send(settings.result_fields(result))
            if result.get("eos"):
                del self._running[result["job"]]

    def _shutdown(self, incoming: list[_Request]) -> None:
        error = ModelError(f"{self.model_id} was deleted while generating", model=self.model_id)
        for request in [*incoming, *self._running.values()]:
            request.send(error)
        self._running.clear()
        self._generator.clear_queue()
        self._model.unload()
        del self._generator, self._cache, self._model
        import torch

        torch.cuda.empty_cache()
