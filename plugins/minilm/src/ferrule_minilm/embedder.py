"""The `minilm_embedder` component: `ferrule_kit.embeddings.embedding`'s contract on `ferrule_minilm.model`.

How it uses the cores: a call's texts are sorted by length and cut into batches, and
`threads` worker threads each run whole batches, with numpy's BLAS held to one thread
meanwhile (threadpoolctl). A BLAS that splits every product over its own threads
synchronises them thousands of times per batch (the attention's small per-head
products); on a busy machine each of those waits for a descheduled thread, which made
an ingest on 2 loaded cores five to ten times slower than one thread alone. Whole
batches per thread share the cores without waiting on each other.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from ferrule_kernel import get_logger
from ferrule_kit.embeddings.embedding import (
    EmbedderInfo,
    EmbedderUnavailableError,
    EmbeddingUsage,
    EmbedInput,
    EmbedOutput,
    InfoInput,
)

from .checksums import mismatched
from .model import DIMENSION, MAX_TOKENS, MODEL_ID, WEIGHTS, MiniLM
from .plugin import COMPONENT_TYPE, MiniLMAttributes

log = get_logger("ferrule.minilm")

#: One forward pass set at a time in this process, whichever embedder runs it: the
#: threads of two would only fight over the cores, and the BLAS thread limit is the
#: process's (it is set while a call runs and restored after).
_CORES = threading.Lock()


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """numpy's BLAS on the calling thread alone, restored on the way out (called under
    `_CORES`, so never twice at once)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


class MiniLMEmbedder:
    """Embeds texts with all-MiniLM-L6-v2. The model has one role for queries and
    documents, so ``input_type`` changes nothing here."""

    def __init__(self, attributes: MiniLMAttributes, weights: Path = WEIGHTS) -> None:
        self.batch_size = attributes.batch_size
        self.dimension = attributes.dimension
        self.prompt = attributes.prompt
        self.threads = attributes.threads or available_cores()
        if attributes.validate_checksum:
            damaged = mismatched(weights)
            if damaged:
                raise EmbedderUnavailableError(
                    f"{COMPONENT_TYPE}: {', '.join(damaged)} in {weights} missing or not as "
                    "published (SHA-256 differs; reinstall ferrule-minilm)",
                    embedder=COMPONENT_TYPE,
                    reason="checksum",
                )
        try:
            from tokenizers import Tokenizer

            self.tokenizer = Tokenizer.from_file(str(weights / "tokenizer.json"))
            self.model = MiniLM(weights)
        except Exception as exc:
            # Missing or damaged weights, or no tokenizers (a broken install): one typed
            # error naming the embedder, not a traceback from deep inside numpy.
            raise EmbedderUnavailableError(
                f"{COMPONENT_TYPE}: cannot load all-MiniLM-L6-v2 from {weights}: "
                f"{type(exc).__name__}: {exc} (reinstall ferrule-minilm)",
                embedder=COMPONENT_TYPE,
                reason=str(exc),
            ) from None
        log.debug(
            "minilm_loaded", weights=str(weights), batch_size=self.batch_size, threads=self.threads
        )
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()

    def info(self, inputs: InfoInput) -> dict[str, Any]:
        return EmbedderInfo(
            model=MODEL_ID,
            dimension=self.dimension,
            max_batch=self.batch_size,
            max_input_tokens=MAX_TOKENS,
            normalized=True,
            distance="cosine",
        ).to_dict()

    def embed(self, inputs: EmbedInput) -> dict[str, Any]:
        texts = inputs.texts if self.prompt is None else [self.prompt + t for t in inputs.texts]
        encodings = self.tokenizer.encode_batch(texts)
        lengths = np.array([len(e.ids) for e in encodings])
        # columns past the model's DIMENSION stay zero (`MiniLMAttributes.dimension`)
        vectors = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        # Similar lengths together: a batch is padded to its longest text. Every worker
        # gets a batch even when the call is small (a batch's products stay large
        # enough for BLAS at a few texts).
        order = np.argsort(-lengths, kind="stable")
        size = max(1, min(self.batch_size, -(-len(order) // self.threads)))
        batches = [order[start : start + size] for start in range(0, len(order), size)]

        def run(batch: np.ndarray) -> None:
            width = int(lengths[batch[0]])
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, index in enumerate(batch):
                n = lengths[index]
                ids[row, :n] = encodings[index].ids
                mask[row, :n] = 1
            vectors[batch, :DIMENSION] = self.model.encode(ids, mask)

        with _CORES, _one_blas_thread():
            if len(batches) == 1 or self.threads == 1:
                for batch in batches:
                    run(batch)
            else:
                with ThreadPoolExecutor(min(self.threads, len(batches))) as pool:
                    for _ in pool.map(run, batches):  # (re-raises a batch's error)
                        pass
        return EmbedOutput(
            vectors=vectors.tolist(),
            dimension=self.dimension,
            model=MODEL_ID,
            usage=EmbeddingUsage(input_tokens=int(lengths.sum())),
        ).to_dict()


def create(attributes: MiniLMAttributes) -> MiniLMEmbedder:
    return MiniLMEmbedder(attributes, WEIGHTS)
