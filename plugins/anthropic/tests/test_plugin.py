"""Discovery and model-id resolution of ferrule-anthropic."""

from __future__ import annotations

import subprocess
import sys

import ferrule_kit.kit_plugin
import pytest
from ferrule import APIModel, Runtime
from ferrule_anthropic import plugin
from ferrule_kernel import Kernel
from ferrule_kit.errors import UnknownModelError

#: Every Claude id agent-guide.txt lists (most are retired by now; they still resolve, and
#: the provider's 404 reaches the user, see test_loopback).
GUIDE_IDS = [
    "claude-sonnet-4-20250514",
    "claude-3-7-sonnet-20250219",
    "claude-3-5-sonnet-20241022",
    "claude-3-5-sonnet-20240620",
    "claude-opus-4-20250514",
    "claude-3-opus-20240229",
    "claude-3-5-haiku-20241022",
    "claude-3-haiku-20240307",
]


@pytest.fixture
def kernel() -> Kernel:
    return Kernel(plugins=[ferrule_kit.kit_plugin, plugin], load_entry_points=False)


@pytest.mark.parametrize("model_id", [*GUIDE_IDS, "claude-sonnet-4-6", "claude-opus-5"])
def test_claude_ids_resolve_without_a_provider(kernel, model_id):
    route = APIModel(model_id, api_key="sk-ant-x").route(kernel)
    assert route.component_type == "anthropic_language_model"
    assert route.attributes == {"model": model_id, "api_key": "sk-ant-x"}


@pytest.mark.parametrize("provider", ["anthropic", "claude", "Anthropic"])
def test_any_id_resolves_with_the_provider_named(kernel, provider):
    route = APIModel("my-proxy-model", provider=provider, base_url="http://gw").route(kernel)
    assert route.component_type == "anthropic_language_model"
    assert route.attributes == {"model": "my-proxy-model", "base_url": "http://gw"}


@pytest.mark.parametrize(
    ("model_id", "provider"),
    [("gpt-4o", None), ("sonnet", None), ("claude-3-opus-20240229", "openai")],
)
def test_other_ids_are_not_ours(kernel, model_id, provider):
    with pytest.raises(UnknownModelError):
        APIModel(model_id, provider=provider).route(kernel)


def test_the_installed_plugin_registers_its_type_and_alias():
    with Runtime() as rt:
        types = {t["name"]: t for t in rt.component_types()}
    entry = types["anthropic_language_model"]
    assert (
        entry["aliases"] == ["claude_language_model"]
        and entry["distribution"] == "ferrule-anthropic"
    )
    assert [m["name"] for m in entry["methods"]] == ["infer", "count_tokens"]
    assert "api_key" in entry["attributes_schema"]["properties"]


def test_discovery_imports_nothing_heavy():
    code = (
        "import sys, ferrule_anthropic.plugin\n"
        "heavy = [m for m in ('aiohttp', 'ferrule_kit.network.http', 'ferrule_anthropic.wire', 'ferrule_anthropic.model') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
