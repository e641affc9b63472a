"""Agno's ``agno.guardrails.base``: `BaseGuardrail`, a check an agent's ``pre_hooks`` or
``post_hooks`` run (`ferrule_kit.guardrails`: the contract guardrail plugins build on)."""

from __future__ import annotations

from ferrule_kit.guardrails import BaseGuardrail

__all__ = ["BaseGuardrail"]
