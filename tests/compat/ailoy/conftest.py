"""Shared fixtures of the Ailoy compatibility tests: our own tests of every call Ailoy's
test suites (tags v0.1.0 and v0.2.5) make, each named after the Ailoy case it stands for.

Ailoy's suites run on Qwen3 and on OpenAI, Anthropic, Google and xAI. Here the Qwen3 ids
are aliased to the offline SmolLM2 (``$FERRULE_MODEL_ALIASES``), BAAI/bge-m3 to the offline
MiniLM, and each provider is a loopback server speaking its wire, found through the
provider's usual environment variable: the same programs, nothing on the internet.

Ailoy's own files, unchanged but for the package name, run through ``replay_ailoy.py``
beside this file (``.nox/tests/bin/python tests/compat/ailoy/replay_ailoy.py``), with these
aliases.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import pytest
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.testing.loopback import LoopbackServer

#: Ailoy's model ids, run here on the offline models.
ALIASES = {
    "Qwen/Qwen3-0.6B": DEFAULT_LOCAL_MODEL,
    "Qwen/Qwen3-1.7B": DEFAULT_LOCAL_MODEL,
    "Qwen/Qwen3-4B": DEFAULT_LOCAL_MODEL,
    "Qwen/Qwen3-8B": DEFAULT_LOCAL_MODEL,
    "BAAI/bge-m3": "all-MiniLM-L6-v2",
}


@pytest.fixture(autouse=True)
def ailoy_model_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", ",".join(f"{k}={v}" for k, v in ALIASES.items()))


@attrs.frozen
class Provider:
    """An API provider of Ailoy's tests, as a loopback server: its name in Ailoy's test file
    names, the model id those tests use, its wire dialect and the variables that point
    the provider's plugin at the server."""

    name: str
    model: str
    dialect: str
    base_url_variable: str
    suffix: str
    key_variable: str


PROVIDERS = {
    "openai": Provider(
        "openai", "gpt-4.1-mini", OPENAI, "OPENAI_BASE_URL", "/v1", "OPENAI_API_KEY"
    ),
    "claude": Provider(
        "claude",
        "claude-sonnet-4-20250514",
        ANTHROPIC,
        "ANTHROPIC_BASE_URL",
        "",
        "ANTHROPIC_API_KEY",
    ),
    "gemini": Provider(
        "gemini", "gemini-2.5-flash", GEMINI, "GOOGLE_GEMINI_BASE_URL", "", "GEMINI_API_KEY"
    ),
    "grok": Provider("grok", "grok-4", OPENAI_COMPATIBLE, "XAI_BASE_URL", "/v1", "XAI_API_KEY"),
}

#: The key each loopback provider is given (Ailoy's tests read theirs from the environment).
TEST_KEY = "sk-ailoy-compat-0123456789"


@pytest.fixture
def loopback_provider(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Provider, LoopbackServer]]:
    """The provider named by the test's ``provider`` parameter, as a loopback server (in a
    thread of its own: Ailoy's 0.1 API is synchronous)."""
    provider = PROVIDERS[request.param]
    with LoopbackServer() as server:
        monkeypatch.setenv(provider.base_url_variable, server.url + provider.suffix)
        monkeypatch.setenv(provider.key_variable, TEST_KEY)
        yield provider, server
