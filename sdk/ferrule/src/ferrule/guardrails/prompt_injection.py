"""Agno's ``agno.guardrails.prompt_injection``: `PromptInjectionGuardrail`, ferrule-guardrails'
(known injection phrasings, matched through spacing, accents, look-alike letters and
leetspeak). Importing this module without that plugin raises `ImportError` naming ``pip
install ferrule-guardrails``."""

from __future__ import annotations

from ._plugin import guardrails_plugin

PromptInjectionGuardrail = guardrails_plugin().PromptInjectionGuardrail

__all__ = ["PromptInjectionGuardrail"]
