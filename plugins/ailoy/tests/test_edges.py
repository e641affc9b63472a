"""Ailoy stays at the edge: its raw type names are registered by this plugin alone (no
store, embedder or provider plugin names one, by name or alias), the kernel's source
never mentions Ailoy, and the plugin kit's core has no Ailoy module."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import ferrule_kernel
import ferrule_kit
from ferrule_ailoy.plugin import (
    API_MODEL_TYPES,
    EMBEDDING_MODEL_TYPE,
    VECTOR_STORE_TYPES,
)
from ferrule_kernel import Kernel

AILOY_TYPES = {*API_MODEL_TYPES, *VECTOR_STORE_TYPES, EMBEDDING_MODEL_TYPE}


def test_only_this_plugin_registers_ailoy_s_type_names() -> None:
    kernel = Kernel()
    listed = {entry["name"]: entry for entry in kernel.component_types()}
    for name in AILOY_TYPES:
        assert listed[name]["distribution"] == "ferrule-ailoy", name
    others = [
        (entry["name"], alias)
        for entry in kernel.component_types()
        if entry["distribution"] != "ferrule-ailoy"
        for alias in [entry["name"], *entry["aliases"]]
        if alias in AILOY_TYPES
    ]
    assert others == []
    for plugin in kernel.plugins():
        if plugin["distribution"] != "ferrule-ailoy":
            assert not AILOY_TYPES & set(plugin["component_types"]), plugin["name"]


def test_the_types_stand_for_installed_ferrule_types() -> None:
    kernel = Kernel()
    installed = {
        name for entry in kernel.component_types() for name in [entry["name"], *entry["aliases"]]
    }
    over = {*API_MODEL_TYPES.values(), *VECTOR_STORE_TYPES.values()} - {"chroma_vector_store"}
    assert over <= installed  # (ferrule-chroma is not in this plugin's test extra)


def test_the_kernel_never_mentions_ailoy() -> None:
    sources = sorted(Path(ferrule_kernel.__file__).parent.rglob("*.py"))
    assert sources
    assert [str(p) for p in sources if "ailoy" in p.read_text().lower()] == []


def test_the_kit_has_no_ailoy_module() -> None:
    modules = [m.name for m in pkgutil.walk_packages(ferrule_kit.__path__, "ferrule_kit.")]
    assert "ferrule_kit.models.lm" in modules
    assert [m for m in modules if "ailoy" in m] == []
    sources = Path(ferrule_kit.__file__).parent.rglob("*.py")
    assert [str(p) for p in sources if "ferrule_ailoy" in p.read_text()] == []
