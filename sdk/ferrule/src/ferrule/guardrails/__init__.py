"""Agno's ``agno.guardrails``: `BaseGuardrail` (the kit's contract), `PIIDetectionGuardrail`
and `PromptInjectionGuardrail` (ferrule-guardrails', re-exported: without that plugin their
modules name the ``pip install``), and `OpenAIModerationGuardrail` (OpenAI's moderation
endpoint). The names load on first access, so ``import ferrule`` loads none."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ferrule_kit.content.parts import lazy_attributes

if TYPE_CHECKING:
    from .base import BaseGuardrail
    from .openai import OpenAIModerationGuardrail
    from .pii import PIIDetectionGuardrail
    from .prompt_injection import PromptInjectionGuardrail

__all__ = [
    "BaseGuardrail",
    "OpenAIModerationGuardrail",
    "PIIDetectionGuardrail",
    "PromptInjectionGuardrail",
]

__getattr__ = lazy_attributes(
    __name__,
    {
        "BaseGuardrail": ".base",
        "OpenAIModerationGuardrail": ".openai",
        "PIIDetectionGuardrail": ".pii",
        "PromptInjectionGuardrail": ".prompt_injection",
    },
)
