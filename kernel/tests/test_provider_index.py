"""Before discovery, a request imports only the plugin that provided its name when the same
installed plugins were last all loaded; the answer is always the plugin's own hook, and a
full discovery afterwards is the one it would have been."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest
from ferrule_kernel import (
    ComponentTypeSpec,
    Kernel,
    OperatorSpec,
    UnknownOperatorError,
    discovery,
    hookimpl,
)

GROUP = "ferrule_index_test"

PLUGIN = """
import attrs
from ferrule_kernel import ComponentTypeSpec, OperatorSpec, hookimpl

@attrs.frozen
class In:
    text: str

def op(inputs):
    return {{"by": {module!r}, "text": inputs.text}}

class Thing:
    def __init__(self, attributes):
        pass

@hookimpl
def ferrule_register_operators():
    return [OperatorSpec(name, f"{module}:op", In) for name in {operators!r}]

@hookimpl
def ferrule_register_component_types():
    return [
        ComponentTypeSpec(name, f"{module}:Thing", In, (), aliases=("{module}_alias",))
        for name in {types!r}
    ]
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FERRULE_DISCOVERY_CACHE", raising=False)
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m.startswith("idx_")]:
        del sys.modules[name]


def write_plugin(site, module: str, operators=(), types=()) -> None:
    code = PLUGIN.format(module=module, operators=list(operators), types=list(types))
    (site / f"{module}.py").write_text(code)
    for name in [m for m in sys.modules if m.startswith(module)]:
        del sys.modules[name]  # the next import reads the file again


def install(site, *modules: str) -> None:
    """Distributions of the plugin modules, installed a minute ago (so cacheable)."""
    for module in modules:
        dist_info = site / f"{module}-1.0.dist-info"
        dist_info.mkdir()
        (dist_info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n"
        )
        (dist_info / "entry_points.txt").write_text(f"[{GROUP}]\n{module} = {module}\n")
    then = time.time_ns() - 60 * 10**9
    os.utime(site, ns=(then, then))


def loaded() -> list[str]:
    return sorted(m for m in sys.modules if m.startswith("idx_"))


def forget_imports() -> None:
    for name in loaded():
        del sys.modules[name]


def call(kernel: Kernel, operator: str) -> dict:
    return asyncio.run(kernel.call(operator, {"text": "x"}, trusted=True))


@pytest.fixture
def two_plugins(site):
    write_plugin(site, "idx_a", operators=["alpha", "shared"], types=["thing_a"])
    write_plugin(site, "idx_b", operators=["beta", "shared"], types=["thing_b"])
    install(site, "idx_a", "idx_b")
    Kernel(entry_point_group=GROUP).load_plugins()  # a full discovery writes the index
    forget_imports()
    return site


def full_discovery() -> Kernel:
    kernel = Kernel(entry_point_group=GROUP)
    kernel.load_plugins()
    return kernel


def test_a_request_imports_only_the_plugin_that_provides_its_name(two_plugins):
    kernel = Kernel(entry_point_group=GROUP)
    assert call(kernel, "beta") == {"by": "idx_b", "text": "x"}
    assert loaded() == ["idx_b"]
    asyncio.run(kernel.define("thing_b", "t", {"text": "y"}, trusted=True))
    asyncio.run(kernel.define("idx_a_alias", "u", {"text": "y"}, trusted=True))
    assert kernel.components() == {"t": "thing_b", "u": "thing_a"}
    assert loaded() == ["idx_a", "idx_b"]


def test_a_name_two_plugins_register_keeps_the_full_discoverys_winner(two_plugins):
    kernel = Kernel(entry_point_group=GROUP)
    shared = call(kernel, "shared")
    assert len(loaded()) == 1
    # listing discovers every plugin: the same winner, the conflict reported as ever,
    # the plugins registered in entry-point order (the order firstresult hooks follow)
    reference = full_discovery()
    winner = reference.registry.operators["shared"].plugin.name
    loser = ({"idx_a", "idx_b"} - {winner}).pop()
    assert shared == {"by": winner, "text": "x"}
    plugins = {p["name"]: p for p in kernel.plugins()}
    assert plugins == {p["name"]: p for p in reference.plugins()}
    assert plugins[winner]["error"] is None and "shared" in plugins[winner]["operators"]
    assert f"'shared' is already provided by '{winner}'" in plugins[loser]["error"]
    assert kernel.plugin_manager.list_name_plugin() == reference.plugin_manager.list_name_plugin()


def test_an_unknown_name_discovers_every_plugin(two_plugins):
    kernel = Kernel(entry_point_group=GROUP)
    with pytest.raises(UnknownOperatorError) as caught:
        call(kernel, "gamma")
    assert caught.value.details["installed"] == ["alpha", "beta", "shared"]
    assert loaded() == ["idx_a", "idx_b"]


def test_the_index_is_a_hint_the_plugins_own_hook_decides(two_plugins):
    # idx_a no longer registers "alpha", and idx_b registers it now (an editable install
    # edited: the distributions, and so the cache's key, are the same)
    write_plugin(two_plugins, "idx_a", operators=["shared"], types=["thing_a"])
    write_plugin(two_plugins, "idx_b", operators=["alpha", "beta", "shared"], types=["thing_b"])
    forget_imports()
    kernel = Kernel(entry_point_group=GROUP)
    assert call(kernel, "alpha") == {"by": "idx_b", "text": "x"}
    assert loaded() == ["idx_a", "idx_b"]  # found by discovering them all
    forget_imports()
    fresh = Kernel(entry_point_group=GROUP)  # and that discovery rewrote the index
    assert call(fresh, "alpha") == {"by": "idx_b", "text": "x"}
    assert loaded() == ["idx_b"]


def test_a_plugin_that_fails_now_is_reported_by_a_full_discovery(two_plugins):
    (two_plugins / "idx_b.py").write_text("raise RuntimeError('broken since')\n")
    forget_imports()
    kernel = Kernel(entry_point_group=GROUP)
    with pytest.raises(UnknownOperatorError):
        call(kernel, "beta")
    errors = {p["name"]: p["error"] for p in kernel.plugins()}
    assert "broken since" in errors["idx_b"] and errors["idx_a"] is None


class GivenPlugin:
    @hookimpl
    def ferrule_register_operators(self) -> list[OperatorSpec]:
        return [OperatorSpec("beta", lambda inputs: {"by": "given"}, dict)]

    @hookimpl
    def ferrule_register_component_types(self) -> list[ComponentTypeSpec]:
        return []


def test_a_plugin_given_to_the_kernel_keeps_the_names_it_registers(two_plugins):
    kernel = Kernel(plugins=[GivenPlugin()], entry_point_group=GROUP)
    assert call(kernel, "beta") == {"by": "given"}
    assert call(kernel, "alpha") == {"by": "idx_a", "text": "x"}
    kernel.load_plugins()
    # that kernel's discovery left the index of the entry points alone as it was
    forget_imports()
    assert call(Kernel(entry_point_group=GROUP), "beta") == {"by": "idx_b", "text": "x"}
    assert loaded() == ["idx_b"]


def test_a_plugin_registered_after_a_request_comes_after_the_discovered_ones(two_plugins):
    # as when that request discovered every plugin: the entry points keep their names
    kernel = Kernel(entry_point_group=GROUP)
    assert call(kernel, "beta") == {"by": "idx_b", "text": "x"}
    kernel.register(GivenPlugin(), name="given")
    assert call(kernel, "beta") == {"by": "idx_b", "text": "x"}
    names = [n for n, _ in kernel.plugin_manager.list_name_plugin()]
    assert sorted(names[:2]) == ["idx_a", "idx_b"] and names[2] == "given"
    assert (
        "'beta' is already provided by 'idx_b'"
        in {p["name"]: p for p in kernel.plugins()}["given"]["error"]
    )


def test_without_the_cache_every_plugin_is_discovered(two_plugins, monkeypatch):
    monkeypatch.setenv("FERRULE_DISCOVERY_CACHE", "0")
    kernel = Kernel(entry_point_group=GROUP)
    assert call(kernel, "beta") == {"by": "idx_b", "text": "x"}
    assert loaded() == ["idx_a", "idx_b"]
    assert discovery.provider_index(GROUP) == {}
