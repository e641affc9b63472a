"""The entry-point cache: a warm start skips importlib.metadata, and installing or
removing a distribution is seen at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from ferrule_kernel import discovery


def _age(site, seconds_ago: float) -> None:
    """Date the folder's last change ``seconds_ago`` (an install done a while ago)."""
    then = time.time_ns() - int(seconds_ago * 1e9)
    os.utime(site, ns=(then, then))


def _install(site, name: str, module: str, seconds_ago: float = 60.0) -> None:
    dist_info = site / f"{name}-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text(f"[ferrule_cache_test]\n{name} = {module}\n")
    _age(site, seconds_ago)


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def names(group="ferrule_cache_test"):
    return sorted(r.name for r in discovery.find_entry_points(group))


def test_installing_and_removing_a_distribution_is_seen(site):
    _install(site, "first", "mod_a")
    assert names() == ["first"]
    assert names() == ["first"]  # from the cache
    _install(site, "second", "mod_b")
    assert names() == ["first", "second"]
    (site / "first-1.0.dist-info" / "entry_points.txt").unlink()
    (site / "first-1.0.dist-info" / "METADATA").unlink()
    (site / "first-1.0.dist-info").rmdir()
    _age(site, 30)
    assert names() == ["second"]


def test_the_cache_is_used_and_a_reinstall_of_the_same_version_is_seen(site):
    _install(site, "plugin", "mod_a", seconds_ago=60)
    assert [r.value for r in discovery.find_entry_points("ferrule_cache_test")] == ["mod_a"]
    assert os.path.exists(discovery._cache_file("ferrule_cache_test"))
    shutil.rmtree(site / "plugin-1.0.dist-info")  # as pip reinstalls: remove, then write
    _install(site, "plugin", "mod_b", seconds_ago=30)
    assert [r.value for r in discovery.find_entry_points("ferrule_cache_test")] == ["mod_b"]


def test_a_folder_changed_just_now_is_not_cached(site):
    # within its timestamp granularity, a second change could keep the same mtime
    _install(site, "fresh", "mod", seconds_ago=0)
    assert names() == ["fresh"]
    assert not os.path.exists(discovery._cache_file("ferrule_cache_test"))


def test_cache_can_be_turned_off(site, monkeypatch, tmp_path):
    monkeypatch.setenv("FERRULE_DISCOVERY_CACHE", "0")
    _install(site, "only", "mod")
    assert names() == ["only"]
    assert not (tmp_path / "cache").exists()


def test_a_corrupt_cache_file_is_a_miss(site):
    _install(site, "first", "mod_a")
    names()
    path = discovery._cache_file("ferrule_cache_test")
    with open(path, "wb") as f:
        f.write(b"\x00garbage")
    assert names() == ["first"]


def test_warm_start_does_not_import_importlib_metadata(tmp_path):
    code = (
        "import sys, ferrule_kernel; k = ferrule_kernel.Kernel(); k.load_plugins(); "
        "print('importlib.metadata' in sys.modules)"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": ""}
    cold = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    warm = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path
    )
    assert cold.stdout.strip() == "True", cold.stderr
    assert warm.stdout.strip() == "False", warm.stderr


def test_programs_started_from_other_folders_share_the_cache(tmp_path):
    code = (
        "import sys, ferrule_kernel; k = ferrule_kernel.Kernel(); k.load_plugins(); "
        "print('importlib.metadata' in sys.modules)"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": ""}
    first, second = tmp_path / "project", tmp_path / "elsewhere"
    first.mkdir()
    second.mkdir()
    warmed = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=first
    )
    other = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=second
    )
    assert warmed.stdout.strip() == "True", warmed.stderr
    assert other.stdout.strip() == "False", other.stderr
