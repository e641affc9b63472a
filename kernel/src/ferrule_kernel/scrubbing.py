"""Secret scrubbing: the one function that takes what looks like a secret out of a text.

Every text that may reach a client, a log or an error message and holds words someone else
wrote (a plugin's exception, a provider's error body, a database driver's message) passes
through `scrub_secrets` first, in the kernel, the kit, the server and the plugins alike.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache
from typing import Any

__all__ = ["scrub_secrets"]

# Environment variables whose values are secrets, by name (OPENAI_API_KEY, FERRULE_TOKEN, ...).
_SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")


@cache
def _patterns() -> tuple[tuple[Any, str], ...]:
    """What a secret looks like in a text nobody here wrote: a URL's password, an
    Authorization value, a key-like query parameter, the shapes of well-known API keys and
    tokens, and words a provider already half-masked ("sk-ab12****wxyz"). Compiled on first
    use: most processes never scrub anything, and `re` costs a cold start."""
    import re

    return (
        (re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+@"), "***@"),
        (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1***"),
        (
            re.compile(
                r"(?i)\b((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password)"
                r"[\"']?\s*[=:]\s*[\"']?|key=)[^&\s\"',;]+"
            ),
            r"\1***",
        ),
        (
            re.compile(
                r"\b(?:sk-[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{20,}|xai-[A-Za-z0-9_-]{20,}"
                r"|gh[pousr]_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16})"
            ),
            "***",
        ),
        (re.compile(r"\S*\*{4,}\S*"), "***"),
    )


def scrub_secrets(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with what is or looks like a secret replaced by ``***``: the ``known``
    secrets (an API key, a password, a request's header values; the longest first, so
    none is left half-replaced), the values of this process's secret-named environment
    variables (``*_API_KEY``, ``*_TOKEN``, ...), a URL's password, Authorization values,
    key-like query parameters, the shapes of well-known API keys and half-masked words."""
    for secret in sorted({s for s in known if s}, key=len, reverse=True):
        text = text.replace(secret, "***")
    for name, value in os.environ.items():
        if len(value) >= 8 and value in text and any(w in name.upper() for w in _SECRET_NAME_WORDS):
            text = text.replace(value, "***")
    for pattern, replacement in _patterns():
        text = pattern.sub(replacement, text)
    return text
