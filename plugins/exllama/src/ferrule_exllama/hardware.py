"""Is exllamav2 usable on this machine? Asked by the routing hook, so it is cheap.

`find_spec` looks for torch and exllamav2 without importing them; torch is imported
(to ask for a CUDA device) only when both are installed, and exllamav2 never is here.
"""

from __future__ import annotations

import functools
import importlib.util

import attrs

from .errors import CudaUnavailableError

LLAMACPP_HINT = (
    "exllamav2 has no CPU code path; on this machine run the model with ferrule-llamacpp "
    "(pip install ferrule-llamacpp: LocalModel picks it automatically)"
)


@attrs.frozen
class CudaStatus:
    usable: bool
    #: Why not, when not usable.
    reason: str = ""

    def require(self, model: str | None = None) -> None:
        """Raise `CudaUnavailableError` unless exllamav2 can run here."""
        if not self.usable:
            raise CudaUnavailableError(f"{self.reason}. {LLAMACPP_HINT}", model=model)


@functools.cache
def cuda_status() -> CudaStatus:
    missing = [name for name in ("torch", "exllamav2") if importlib.util.find_spec(name) is None]
    if missing:
        return CudaStatus(
            False,
            f"ferrule-exllama needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
            "not installed (pip install 'ferrule-exllama[cuda]' on a machine with an NVIDIA GPU "
            "and the CUDA toolkit)",
        )
    try:
        import torch

        available = torch.cuda.is_available()
    except Exception as exc:  # a broken torch install must not break routing
        return CudaStatus(False, f"torch could not be imported ({type(exc).__name__}: {exc})")
    if not available:
        return CudaStatus(
            False, "exllamav2 needs CUDA, and torch finds no CUDA device on this machine"
        )
    return CudaStatus(True)
