"""`PromptInjectionGuardrail`: inputs that try to override the agent's instructions."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ferrule_kit.guardrails import BaseGuardrail, CheckTrigger, InputCheckError

from .normalize import normalized
from .skeleton import skeleton

#: Agno's pattern set: phrases of jailbreak and instruction-override attempts.
DEFAULT_INJECTION_PATTERNS: tuple[str, ...] = (
    "ignore previous instructions",
    "ignore your instructions",
    "you are now a",
    "forget everything above",
    "developer mode",
    "override safety",
    "disregard guidelines",
    "system prompt",
    "jailbreak",
    "act as if",
    "pretend you are",
    "roleplay as",
    "simulate being",
    "bypass restrictions",
    "ignore safeguards",
    "admin override",
    "root access",
    "forget everything",
)

_SPACES = re.compile(r"\s+")


def normalize(text: str) -> str:
    """``text`` as the patterns are matched against it: as `normalize.normalized` reads
    it (format characters dropped, tag characters read as ASCII, compatibility forms such
    as full-width letters folded), case folded, every run of white space one space. So
    ``"IGNORE\\u200b  previous\\ninstructions"`` still matches."""
    return _SPACES.sub(" ", normalized(text).text.casefold())


class PromptInjectionGuardrail(BaseGuardrail):
    """Stops a run whose input contains one of ``injection_patterns`` (default: Agno's
    set, `DEFAULT_INJECTION_PATTERNS`) with `InputCheckError` (``check_trigger``
    ``prompt_injection``; ``details["patterns"]`` lists those found). Texts are matched as
    `skeleton.skeleton` reads them: case, leetspeak (``1gn0re``), invisible characters,
    look-alike letters of other scripts, accents, compatibility forms, spacing and
    punctuation (``i g n o r e``) do not hide a phrase. A phrase list catches the common
    attempts, not a determined attacker: keep tools' permissions narrow too."""

    injection_patterns: list[str]

    def __init__(self, injection_patterns: Sequence[str] | None = None) -> None:
        patterns = DEFAULT_INJECTION_PATTERNS if injection_patterns is None else injection_patterns
        self.injection_patterns = [normalize(p) for p in patterns if skeleton(p)]
        self._skeletons = [skeleton(p) for p in self.injection_patterns]

    def __repr__(self) -> str:
        return f"PromptInjectionGuardrail({len(self.injection_patterns)} patterns)"

    def detect(self, text: str) -> list[str]:
        """The patterns found in ``text``."""
        read = skeleton(text)
        return [
            p for p, s in zip(self.injection_patterns, self._skeletons, strict=True) if s in read
        ]

    def check(self, run_input: Any) -> None:
        found = self.detect(run_input.input_content_string())
        if found:
            raise InputCheckError(
                "Potential jailbreaking or prompt injection detected.",
                check_trigger=CheckTrigger.PROMPT_INJECTION,
                patterns=found,
            )
