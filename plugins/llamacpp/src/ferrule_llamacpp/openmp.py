"""How llama.cpp's threads wait for each other: a middle spin, then sleep.

llama.cpp (built with GNU OpenMP, llama-cpp-python's default on Linux) makes its threads
meet at a barrier after every operation of the model's graph, hundreds of times per
token. GNU OpenMP's threads spin at a barrier for 300,000 turns before they sleep: on an
idle machine the others come within microseconds, but on a busy one a thread that the
scheduler has taken away comes milliseconds later while the others burn their cores
spinning for it, the very cores it needs. Measured on 2 shared cores beside busy
processes of a higher priority (docs/benchmarks.md, "ferrule serve and llama-server side
by side"): llama-server with GNU OpenMP's spin gives 2-2.5x fewer tokens/s than with a
spin of 1000 turns.

Too short a spin costs too: a thread that sleeps at a barrier the others reach a moment
later waits to be woken and scheduled again, and on a machine whose other work holds the
cores at the same priority that wait is long. Measured through ``ferrule serve`` on 2
cores, 20,000 turns against 1000 (plugins/llamacpp/README.md has the table): on a 0.5B
model a median 3% more tokens/s on a quiet machine and 15% more beside two busy
processes of the same priority; on the 135M SmolLM2, whose steps are short, 12-24% more
under load and 5% fewer on a quiet machine.

So around llama.cpp's library's first load, `prepared` sets ``GOMP_SPINCOUNT`` to
`SPIN_COUNT` for it, unless the environment says how to wait (``OMP_WAIT_POLICY`` or
``GOMP_SPINCOUNT``): ``OMP_WAIT_POLICY=active`` keeps GNU OpenMP's own spin on a machine
that runs nothing else, ``passive`` never spins. The variable is read once, when the
library loads, and is taken out of the environment again afterwards, so processes ferrule
starts do not inherit it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from ferrule_kernel import get_logger

log = get_logger("ferrule.llamacpp")

#: GNU OpenMP's spin at a barrier before a thread sleeps, in turns of its wait loop.
SPIN_COUNT = "20000"
#: Set in the environment, these say how to wait instead.
SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def _openmp_loaded() -> bool:
    """GNU OpenMP is already mapped into this process (Linux; False where unknown)."""
    try:
        return "libgomp" in Path("/proc/self/maps").read_text()
    except OSError:
        return False


@contextlib.contextmanager
def prepared() -> Iterator[None]:
    """Around the first ``import llama_cpp`` of a process: the spin `SPIN_COUNT` for the
    OpenMP library it loads, unless the environment sets one (see the module)."""
    if "llama_cpp" in sys.modules or any(name in os.environ for name in SETTINGS):
        yield
        return
    if _openmp_loaded():
        log.debug("openmp_already_loaded", hint="GOMP_SPINCOUNT is read when it loads")
        yield
        return
    os.environ["GOMP_SPINCOUNT"] = SPIN_COUNT
    try:
        yield
    finally:
        os.environ.pop("GOMP_SPINCOUNT", None)
