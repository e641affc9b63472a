"""Where a batch decoder's time goes: its ``llama_decode`` steps by what they held."""

from __future__ import annotations

import time
from collections.abc import Callable


class StepStats:
    """Time in ``llama_decode``: decode steps by how many sequences they held, and steps
    that read prompt tokens (with generating sequences or not). Wall seconds, and the
    worker thread's CPU seconds: with one thread llama.cpp computes on the calling thread,
    so that is the step's work whatever else the machine runs."""

    def __init__(self) -> None:
        #: sequences decoded together -> [steps, seconds, CPU seconds].
        self.decode: dict[int, list[float]] = {}
        #: Steps that read prompt tokens: [steps, tokens, seconds, CPU seconds].
        self.prompt = [0, 0, 0.0, 0.0]
        #: Of those, steps that also decoded generating sequences (packed mode only), and
        #: the most prompts one step read.
        self.mixed = 0
        self.peak_prompts = 0
        #: Prompt starts loaded from another slot's KV state (see BatchDecoder._load_start).
        self.copies = 0

    def timed(
        self, decode: Callable[[], int], sequences: int, prompt_tokens: int, prompts: int = 1
    ) -> int:
        """Run ``decode`` (a llama_decode of ``sequences`` generating sequences' tokens and
        ``prompt_tokens`` of ``prompts`` prompts), count its time, return its status."""
        wall, cpu = time.perf_counter(), time.thread_time()
        status = decode()
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        if prompt_tokens:
            self.mixed += sequences > 0
            self.peak_prompts = max(self.peak_prompts, prompts)
            self.prompt[0] += 1
            self.prompt[1] += prompt_tokens
            self.prompt[2] += wall
            self.prompt[3] += cpu
        else:
            entry = self.decode.setdefault(sequences, [0, 0.0, 0.0])
            entry[0] += 1
            entry[1] += wall
            entry[2] += cpu
        return status
