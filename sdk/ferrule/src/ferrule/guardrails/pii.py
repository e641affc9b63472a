"""Agno's ``agno.guardrails.pii``: `PIIDetectionGuardrail`, ferrule-guardrails' (personal data
in a run's input or output, blocked or masked; card numbers and IBANs checksum-checked).
Importing this module without that plugin raises `ImportError` naming ``pip install
ferrule-guardrails``."""

from __future__ import annotations

from ._plugin import guardrails_plugin

PIIDetectionGuardrail = guardrails_plugin().PIIDetectionGuardrail

__all__ = ["PIIDetectionGuardrail"]
