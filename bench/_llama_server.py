"""llama.cpp's own ``llama-server``, built from the very llama.cpp that the installed
llama-cpp-python vendors (its sdist carries the whole tree), so a side-by-side bench
compares servers over the same kernels.

Found in this order: ``$FERRULE_LLAMA_SERVER`` (a path to a binary you built), then the
cache ``~/.cache/ferrule-bench/llama-server/<llama-cpp-python version>/``; else built there
once: ``pip download llama-cpp-python==<version> --no-binary :all:``, then cmake of the
``llama-server`` target with the flags ferrule's nox sessions give llama-cpp-python
(portable, no native tuning; static, no curl, no web UI). `find_or_build` returns None,
with the reason printed, when it cannot (no cmake or compiler, no index to download from).

    python bench/_llama_server.py     # build (or find) it and print its path
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

CACHE = Path.home() / ".cache" / "ferrule-bench" / "llama-server"
#: As noxfile.LLAMA_CMAKE_ARGS builds the library (portable: no -march=native), plus the
#: server; a static binary, and no web UI (the bench speaks its HTTP API only).
CMAKE_ARGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
]


def _say(message: str) -> None:
    print(f"llama-server: {message}", file=sys.stderr, flush=True)


def find_or_build() -> Path | None:
    """The path of a llama-server binary for the installed llama-cpp-python, or None."""
    given = os.environ.get("FERRULE_LLAMA_SERVER")
    if given:
        if Path(given).is_file() and os.access(given, os.X_OK):
            return Path(given)
        _say(f"FERRULE_LLAMA_SERVER={given} is not an executable file")
        return None
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        _say("llama-cpp-python is not installed")
        return None
    home = CACHE / version
    binary = home / "build" / "bin" / "llama-server"
    if binary.is_file():
        return binary
    missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
    if missing:
        _say(f"cannot build: {' and '.join(missing)} not found (or set FERRULE_LLAMA_SERVER)")
        return None
    home.mkdir(parents=True, exist_ok=True)
    source = home / f"llama_cpp_python-{version}" / "vendor" / "llama.cpp"
    try:
        if not source.is_dir():
            _fetch_source(version, home)
        _say(f"building from {source} (once; several minutes on 2 cores)")
        build = home / "build"
        subprocess.run(["cmake", "-S", str(source), "-B", str(build), *CMAKE_ARGS], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(
            ["cmake", "--build", str(build), "--target", "llama-server", "-j", jobs], check=True
        )
    except (subprocess.CalledProcessError, OSError, tarfile.TarError) as exc:
        _say(f"could not build it: {exc}")
        return None
    return binary if binary.is_file() else None


def _fetch_source(version: str, home: Path) -> None:
    """llama-cpp-python's sdist of ``version``, unpacked in ``home``."""
    _say(f"downloading the llama-cpp-python {version} sdist")
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", f"llama-cpp-python=={version}"),
            *("--no-deps", "--no-binary", ":all:", "-q", "-d", str(home)),
        ],
        check=True,
    )
    (archive,) = home.glob(f"llama_cpp_python-{version}.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(home, filter="data")
    archive.unlink()


if __name__ == "__main__":
    found = find_or_build()
    print(found if found else "not available")
    sys.exit(0 if found else 1)
