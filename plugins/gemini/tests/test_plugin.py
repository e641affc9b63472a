"""Discovery and model-id resolution of ferrule-gemini."""

from __future__ import annotations

import subprocess
import sys

import ferrule_kit.kit_plugin
import pytest
from ferrule import APIModel, Runtime
from ferrule_gemini import plugin
from ferrule_kernel import Kernel
from ferrule_kit.errors import UnknownModelError

#: Every Gemini id agent-guide.txt lists (1.5 and 2.0 are retired by now; they still
#: resolve, and the provider's 404 reaches the user, see test_loopback).
GUIDE_IDS = [
    "gemini-2.5-flash",
    "gemini-2.5-pro",
    "gemini-2.0-flash",
    "gemini-1.5-flash",
    "gemini-1.5-pro",
]


@pytest.fixture
def kernel() -> Kernel:
    return Kernel(plugins=[ferrule_kit.kit_plugin, plugin], load_entry_points=False)


@pytest.mark.parametrize("model_id", [*GUIDE_IDS, "gemini-3.5-flash", "models/gemini-2.5-flash"])
def test_gemini_ids_resolve_without_a_provider(kernel, model_id):
    route = APIModel(model_id, api_key="AIza-x").route(kernel)
    assert route.component_type == "gemini_language_model"
    assert route.attributes == {"model": model_id, "api_key": "AIza-x"}


@pytest.mark.parametrize("provider", ["gemini", "google", "Google"])
def test_any_id_resolves_with_the_provider_named(kernel, provider):
    route = APIModel("learnlm-2.0-flash-experimental", provider=provider).route(kernel)
    assert route.component_type == "gemini_language_model"
    assert route.attributes == {"model": "learnlm-2.0-flash-experimental"}


@pytest.mark.parametrize(
    ("model_id", "provider"), [("gpt-4o", None), ("gemma-3", None), ("gemini-2.5-pro", "anthropic")]
)
def test_other_ids_are_not_ours(kernel, model_id, provider):
    with pytest.raises(UnknownModelError):
        APIModel(model_id, provider=provider).route(kernel)


def test_the_installed_plugin_registers_its_type():
    with Runtime() as rt:
        types = {t["name"]: t for t in rt.component_types()}
    entry = types["gemini_language_model"]
    assert entry["distribution"] == "ferrule-gemini" and [m["name"] for m in entry["methods"]] == [
        "infer"
    ]
    assert "api_key" in entry["attributes_schema"]["properties"]


def test_discovery_imports_nothing_heavy():
    code = (
        "import sys, ferrule_gemini.plugin\n"
        "heavy = [m for m in ('aiohttp', 'ferrule_kit.network.http', 'ferrule_gemini.wire', 'ferrule_gemini.model') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
