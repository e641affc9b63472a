"""Every distribution ships what its users need besides its code: its LICENSE file (in the
sdist, and in the wheel's metadata) and the ``py.typed`` marker that lets type checkers
read its annotations; and the Markdown that reaches readers (README files, docs/) links
only to files and headings that exist."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = [
    ROOT / "kernel",
    ROOT / "sdk" / "kit",
    ROOT / "sdk" / "ferrule",
    *sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml")),
]
IDS = [str(p.relative_to(ROOT)) for p in DISTRIBUTIONS]


def _project(folder: Path) -> dict:
    return tomllib.loads((folder / "pyproject.toml").read_text())


@pytest.mark.parametrize("folder", DISTRIBUTIONS, ids=IDS)
def test_each_distribution_carries_its_license_and_py_typed(folder):
    project = _project(folder)
    assert project["project"]["license-files"] == ["LICENSE"]
    text = (folder / "LICENSE").read_text()
    if project["project"]["license"] == "MIT":
        assert text == (ROOT / "LICENSE").read_text()
    else:  # data packages that ship weights under their publisher's licence
        assert project["project"]["license"] == "Apache-2.0"
        assert text.lstrip().startswith("Apache License\n")
    for package in project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
        assert (folder / package / "py.typed").is_file()


def test_a_built_wheel_and_sdist_hold_the_license_and_py_typed(tmp_path):
    """Built as `nox -s build` does (hatchling, here without build isolation: nothing is
    fetched); one distribution stands for all, since they share the configuration."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from hatchling.builders.sdist import SdistBuilder;"
            "from hatchling.builders.wheel import WheelBuilder;"
            "[print(p) for b in (SdistBuilder, WheelBuilder) for p in b(sys.argv[1]).build("
            "directory=sys.argv[2])]",
            str(ROOT / "plugins" / "echo"),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    wheel = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).namelist()
    assert "ferrule_echo/py.typed" in wheel
    assert "ferrule_echo-0.1.0.dist-info/licenses/LICENSE" in wheel
    sdist = tarfile.open(next(tmp_path.glob("*.tar.gz"))).getnames()
    assert "ferrule_echo-0.1.0/LICENSE" in sdist
    assert "ferrule_echo-0.1.0/src/ferrule_echo/py.typed" in sdist


MARKDOWN = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *(folder / "README.md" for folder in DISTRIBUTIONS),
]
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", MARKDOWN, ids=[str(p.relative_to(ROOT)) for p in MARKDOWN])
def test_relative_links_lead_to_files_and_headings_that_exist(page):
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not ours to check offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.exists(), f"{page.relative_to(ROOT)}: {target} does not exist"
        assert ROOT in resolved.parents or resolved == ROOT, f"{target} leaves the repository"
        if anchor:
            assert resolved.suffix == ".md", target
            assert anchor in _anchors(resolved), f"{page.relative_to(ROOT)}: no #{anchor}"


@pytest.mark.parametrize("folder", DISTRIBUTIONS, ids=IDS)
def test_a_distribution_readme_links_nothing_pypi_cannot_show(folder):
    # PyPI shows each distribution's README on its own: a relative link (to the repository's
    # docs, or to a file beside the README) is dead there. Absolute links and in-page
    # anchors work; repository files are named as text instead.
    text = re.sub(r"^```.*?^```", "", (folder / "README.md").read_text(), flags=re.S | re.M)
    relative = [t for t in _LINK.findall(text) if not re.match(r"^([a-z]+:|#)", t)]
    assert not relative, f"{folder.relative_to(ROOT)}/README.md links {relative}"
