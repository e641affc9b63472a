"""The layering holds: `lint-imports` keeps every contract of ``.importlinter``.

plugins -> the app (ferrule) -> the kit (ferrule_kit) -> the kernel (ferrule_kernel), never
back, and no plugin imports another; inside the app, the knowledge package never imports the
agent package, and the agent package's modules import one way (its ``agent-package-order``
contract, drawn in docs/architecture.md). A back arrow anywhere fails this test.
"""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / ".importlinter"


def _plugin_packages() -> set[str]:
    return {
        package.name
        for package in ROOT.glob("plugins/*/src/ferrule_*")
        if (package / "__init__.py").exists()
    }


def _listed(section: str, key: str) -> set[str]:
    config = configparser.ConfigParser()
    config.read(CONFIG)
    return set(config[section][key].split())


def test_every_plugin_is_under_the_contracts() -> None:
    plugins = _plugin_packages()
    assert plugins  # the glob found the plugins
    assert _listed("importlinter", "root_packages") == {
        "ferrule",
        "ferrule_kit",
        "ferrule_kernel",
        *plugins,
    }
    assert _listed("importlinter:contract:plugins-independent", "modules") == plugins
    forbidden = _listed("importlinter:contract:kit-and-kernel-name-no-plugin", "forbidden_modules")
    assert forbidden == plugins


def test_the_import_contracts_are_kept() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"],  # finds .importlinter in cwd
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
