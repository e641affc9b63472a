"""`ferrule.catalog` matches what this repository's plugins register (all installed here)."""

from __future__ import annotations

import re
from pathlib import Path

from ferrule import Runtime
from ferrule.catalog import COMPONENT_TYPES, OPERATORS

ROOT = Path(__file__).resolve().parent.parent


def repository_distributions() -> set[str]:
    names = set()
    for pyproject in ROOT.glob("plugins/*/pyproject.toml"):
        found = re.search(r'^name = "([^"]+)"', pyproject.read_text(), re.MULTILINE)
        assert found, pyproject
        names.add(found.group(1))
    return names


def test_every_name_a_repository_plugin_registers_is_in_the_catalog_and_no_other():
    ours = repository_distributions()
    with Runtime() as rt:
        operators = {o["name"]: o["distribution"] for o in rt.kernel.operators()}
        types = {}
        for t in rt.kernel.component_types():
            for name in (t["name"], *t["aliases"]):
                types[name] = t["distribution"]
    for registered, catalog in ((operators, OPERATORS), (types, COMPONENT_TYPES)):
        ours_registered = {n: d for n, d in registered.items() if d in ours}
        assert set(ours_registered) == set(catalog), (
            "sdk/ferrule/src/ferrule/catalog.py lists exactly what this repository's plugins "
            "register (a new plugin adds its names there)"
        )
        for name, distribution in ours_registered.items():
            assert distribution in catalog[name], name
