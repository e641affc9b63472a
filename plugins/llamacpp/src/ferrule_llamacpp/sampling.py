"""A request's sampler: its repeat and presence penalties applied to its row of logits in
place, then llama.cpp's sampler chain (a grammar, then greedy or top-k, top-p, min-p,
temperature and a seeded draw), or, greedy without a grammar, the row's highest logit.

llama.cpp's penalties sampler looks every token of the vocabulary up in a hash map of the
recent ones: ~1 ms a token on SmolLM2's 49 152 tokens on a 2.5 GHz Xeon (greedy alone
takes 0.13 ms), and more on larger vocabularies (Qwen3's has 151 936), paid on the decode
thread for every sequence of every step while llama.cpp's threads wait for the next one.
`Penalties` does the same float32 arithmetic on the tokens of the window only (at most
``last_n``), in tens of microseconds, with the same result bit for bit
(tests/test_sampling.py checks it against llama.cpp's own sampler).
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

import numpy as np


class Penalties:
    """llama.cpp's repeat and presence penalties over the last ``last_n`` sampled tokens
    (``llama_sampler_init_penalties`` with no frequency penalty): a logit of a token in the
    window is multiplied by ``repeat`` where it is <= 0, else divided by it, then lowered
    by ``present``."""

    def __init__(self, last_n: int, repeat: float, present: float) -> None:
        self._window: deque[int] = deque(maxlen=last_n)
        self._counts: Counter[int] = Counter()
        self._repeat = np.float32(repeat)
        # Summed with the frequency penalty's 0 as llama.cpp does (-0.0 becomes 0.0).
        self._present = np.float32(0.0) + np.float32(present)

    @staticmethod
    def needed(last_n: int, repeat: float, present: float) -> bool:
        """Whether these change any logit (llama.cpp's sampler is a no-op otherwise)."""
        return last_n > 0 and (repeat != 1.0 or present != 0.0)

    def apply(self, row: np.ndarray[Any, np.dtype[np.float32]]) -> None:
        """Penalize the logits of the window's tokens in ``row`` (one per vocabulary entry)."""
        if not self._counts:
            return
        ids = np.fromiter(self._counts, dtype=np.intp, count=len(self._counts))
        logits = row[ids]
        with np.errstate(over="ignore"):  # a huge logit becomes inf, as in C
            logits = np.where(logits <= 0, logits * self._repeat, logits / self._repeat)
        row[ids] = logits - self._present

    def accept(self, token: int) -> None:
        """A token was sampled: it enters the window, and the oldest leaves a full one."""
        if len(self._window) == self._window.maxlen:
            oldest = self._window[0]
            self._counts[oldest] -= 1
            if not self._counts[oldest]:
                del self._counts[oldest]
        self._window.append(token)
        self._counts[token] += 1


class Sampler:
    """``penalties`` (if any) on the logits of a batch row, then ``chain`` (a
    ``llama_cpp._internals.LlamaSampler``, freed by `close`) picks the token; no chain
    is greedy without a grammar: the first of the highest logits, as llama.cpp's greedy
    sampler picks it, without copying the vocabulary's logits into candidates first
    (~0.15 ms a token on SmolLM2)."""

    def __init__(self, chain: Any | None, n_vocab: int, penalties: Penalties | None) -> None:
        self.chain = chain
        self._n_vocab = n_vocab
        self._penalties = penalties

    def sample(self, context: Any, index: int) -> int:
        """The next token from the logits of batch row ``index`` of ``context`` (a
        ``llama_cpp._internals.LlamaContext``); the row is penalized in place."""
        import llama_cpp

        if self._penalties is not None or self.chain is None:
            logits = llama_cpp.llama_get_logits_ith(context.ctx, index)
            row = np.ctypeslib.as_array(logits, shape=(self._n_vocab,))
            if self._penalties is not None:
                self._penalties.apply(row)
        token = int(np.argmax(row) if self.chain is None else self.chain.sample(context, index))
        if self._penalties is not None:
            self._penalties.accept(token)
        return token

    def close(self) -> None:
        if self.chain is not None:
            self.chain.close()
