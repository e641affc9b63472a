"""Guardrails for an `Agent`'s ``pre_hooks`` (and ``post_hooks``), under Agno's names.

    from ferrule import Agent
    from ferrule_guardrails import PIIDetectionGuardrail, PromptInjectionGuardrail

    agent = Agent(model, pre_hooks=[PromptInjectionGuardrail(), PIIDetectionGuardrail(mask_pii=True)])

Each is a `ferrule_kit.guardrails.BaseGuardrail`: the agent knows that contract only.
"""

from ferrule_kit.guardrails import CheckTrigger, InputCheckError, OutputCheckError

from .injection import DEFAULT_INJECTION_PATTERNS, PromptInjectionGuardrail
from .pii import PIIDetectionGuardrail, iban_valid, luhn_valid

__all__ = [
    "DEFAULT_INJECTION_PATTERNS",
    "CheckTrigger",
    "InputCheckError",
    "OutputCheckError",
    "PIIDetectionGuardrail",
    "PromptInjectionGuardrail",
    "iban_valid",
    "luhn_valid",
]
