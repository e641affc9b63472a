"""ferrule-guardrails, or the error saying how to install it."""

from __future__ import annotations

from types import ModuleType

__all__ = ["guardrails_plugin"]

INSTALL = "pip install ferrule-guardrails"


def guardrails_plugin() -> ModuleType:
    """The ``ferrule_guardrails`` module; `ImportError` naming the install line without it."""
    try:
        import ferrule_guardrails
    except ImportError as exc:
        raise ImportError(
            f"Agno's PII and prompt-injection guardrails are ferrule-guardrails': {INSTALL}"
        ) from exc
    return ferrule_guardrails
