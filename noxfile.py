"""Sessions: tests, lint, types, bench, demo, build; each installs what it needs in its venv.

pip install nox && nox -s tests      # the whole test suite
nox -s demo                          # the main job: an offline agent answers a question
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import sysconfig
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = False
# Every session builds its venv with virtualenv and installs with pip, uv or no uv. nox
# looks for uv anyway (to offer it as a backend) and logs "uv binary not found." where
# there is none, which reads like a failure: that one line is dropped.
nox.options.default_venv_backend = "virtualenv"
logging.getLogger("nox").addFilter(lambda record: record.getMessage() != "uv binary not found.")

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
# llama.cpp builds from source (llama-cpp-python ships an sdist only): a portable build of
# the library alone, no tests, examples, tools or server, keeps the first install short.
LLAMA_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF "
    "-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF"
)


def packages() -> list[Path]:
    """kernel, the sdk's two layers and every plugin folder, in dependency order."""
    plugins = sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml"))
    return [ROOT / "kernel", ROOT / "sdk" / "kit", ROOT / "sdk" / "ferrule", *plugins]


def _has_extra(path: Path, extra: str) -> bool:
    text = (path / "pyproject.toml").read_text()
    return "[project.optional-dependencies]" in text and f"\n{extra} = [" in text


def install_workspace(session: nox.Session, *, extras: str | None = None) -> None:
    session.env.setdefault("CMAKE_ARGS", LLAMA_CMAKE_ARGS)
    args = []
    for path in packages():
        spec = str(path)
        if extras and _has_extra(path, extras):
            spec += f"[{extras}]"
        args += ["-e", spec]
    session.install(*args)


#: ruff's formatting changes between minor versions: the one the tree is formatted with.
RUFF = "ruff>=0.17,<0.18"
DEV = [
    "pytest>=8",
    "pytest-asyncio>=0.24",
    "pytest-timeout>=2.3",
    "hypothesis>=6.100",
    "langchain-text-splitters>=0.3",
    "jinja2>=3.1",
    "hatchling",  # tests/test_third_party_plugin.py builds a plugin without build isolation
    # tests/test_style.py: ruff check, ruff format --check and mypy on the kernel, kit and
    # app; tests/test_typing.py type-checks user-style programs with mypy --strict
    RUFF,
    "mypy>=1.11",
    "import-linter>=2.1",  # tests/test_layers.py: the layering contracts of .importlinter
    # tests/clients: real clients against ferrule serve (the Node ones install themselves)
    "anthropic>=2.14",
    "langchain-openai>=1.7",
    "litellm>=1.110",  # 1.107.0 was a compromised release: these bounds leave it out
    "pydantic-ai-slim[openai]>=2.68",
    "openai-agents>=0.24",
    "agno>=3.1",
    "llm>=0.36",
]
#: plugins/exllama/tests/test_patches.py checks ferrule's workarounds on exllamav2's real
#: Python with a CPU torch: torch 2.13.0 is a CPU build on disk on the project's machines
#: (about 2 minutes to install with exllamav2, measured on 2 cores). Elsewhere pip fetches
#: PyPI's CUDA build of it; FERRULE_TESTS_TORCH=0 leaves both out (the module then skips).
EXLLAMA_CPU = ["torch==2.13.0", "exllamav2>=0.3.1,<0.4"]


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The whole test suite: every package with its test extras."""
    install_workspace(session, extras="test")
    session.install(*DEV)
    if os.environ.get("FERRULE_TESTS_TORCH") != "0":
        session.install(*EXLLAMA_CPU)
    session.run(
        "pytest",
        *session.posargs,
        env={"HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci")},
    )


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install(RUFF)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python=PYTHON)
def types(session: nox.Session) -> None:
    install_workspace(session)
    session.install("mypy>=1.11")
    session.run("mypy", "kernel/src", "sdk/kit/src", "sdk/ferrule/src")


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Every distribution's sdist and wheel into dist/, the wheel built from the sdist (so
    an sdist that lacks a file fails here). Until the packages are published, install from
    there: pip install --find-links dist ferrule ferrule-openai."""
    session.install("build>=1.2")
    out = ROOT / "dist"
    shutil.rmtree(out, ignore_errors=True)
    for path in packages():
        session.run("python", "-m", "build", "--outdir", str(out), str(path))


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Run every bench/bench_*.py (or those named: nox -s bench -- split_text) and
    assemble docs/benchmarks.md from their sections."""
    install_workspace(session, extras="bench")
    session.install(*DEV, "llm", "openai")
    wanted = set(session.posargs)
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        if not wanted or script.stem.removeprefix("bench_") in wanted:
            session.run("python", str(script))
    session.run("python", str(ROOT / "bench" / "assemble.py"))


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: an agent answers a question offline on the default local model
    (nox -s demo -- "your question")."""
    install_workspace(session)
    question = (
        " ".join(session.posargs)
        or "In one sentence, what is the capital of France and why is it famous?"
    )
    session.run("ferrule", "chat", question)


#: What the GPU tests need besides ferrule-exllama[cuda,test]: transformers computes the
#: float32 reference (and brings tokenizers), safetensors writes the test model.
GPU_TEST_STACK = ["transformers>=4.51", "safetensors>=0.4", "pytest-timeout>=2.3"]


@nox.session(python=PYTHON, venv_params=["--system-site-packages"])
def gpu(session: nox.Session) -> None:
    """ferrule-exllama on an NVIDIA GPU: plugins/exllama/tests/gpu (logits against a float32
    reference, greedy parity with raw exllamav2, JSON schema, concurrent streams, and a
    benchmark written to bench/results/exllama.md, then assembled into docs/benchmarks.md)
    and the workaround checks of plugins/exllama/tests/test_patches.py.

    Needs the CUDA toolkit (nvcc) and a C++ compiler: exllamav2 compiles its extension on
    first import (minutes). The venv sees the machine's own packages, so a CUDA torch
    already installed there is used, not downloaded. FERRULE_GPU_FLASH_ATTN=1 also installs
    flash-attn (paged attention: batched requests; it builds from source where no wheel
    fits). CI has no GPU and does not run this session."""
    _see_this_interpreters_packages(session)
    exllama = ROOT / "plugins" / "exllama"
    base = [
        arg for path in packages() if path.parent != exllama.parent for arg in ("-e", str(path))
    ]
    session.install(*base, "-e", f"{exllama}[cuda,test]", *GPU_TEST_STACK)
    if os.environ.get("FERRULE_GPU_FLASH_ATTN") == "1":
        session.install("flash-attn>=2.5.7", "--no-build-isolation")
    tests = exllama / "tests"
    # python -m: the venv's interpreter, which sees the machine's packages too (a `pytest`
    # script found on PATH may belong to another one).
    session.run(
        "python",
        "-m",
        "pytest",
        str(tests / "gpu"),
        str(tests / "test_patches.py"),
        "--timeout=900",
        *session.posargs,
    )
    session.run("python", str(ROOT / "bench" / "assemble.py"))


def _see_this_interpreters_packages(session: nox.Session) -> None:
    """--system-site-packages shows the base interpreter's packages; where the Python that
    runs nox is itself a virtual environment (GPU images often keep torch in one), a .pth
    file shows the session that environment's packages too."""
    paths = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    site = session.run(
        "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", silent=True
    )
    if isinstance(site, str):
        Path(site.strip(), "ferrule-machine-packages.pth").write_text("\n".join(paths) + "\n")
