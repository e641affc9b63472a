"""The entry-point cache: a warm start skips importlib.metadata, and installing or
removing a distribution is seen at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from ferrule_kernel import discovery, entrypoints


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
    assert os.path.exists(entrypoints.cache_file("ferrule_cache_test"))
    shutil.rmtree(site / "plugin-1.0.dist-info")  # as pip reinstalls: remove, then write
    _install(site, "plugin", "mod_b", seconds_ago=30)
    assert [r.value for r in discovery.find_entry_points("ferrule_cache_test")] == ["mod_b"]


def test_a_folder_changed_just_now_is_not_cached(site):
    # within its timestamp granularity, a second change could keep the same mtime
    _install(site, "fresh", "mod", seconds_ago=0)
    assert names() == ["fresh"]
    assert not os.path.exists(entrypoints.cache_file("ferrule_cache_test"))


def test_cache_can_be_turned_off(site, monkeypatch, tmp_path):
    monkeypatch.setenv("FERRULE_DISCOVERY_CACHE", "0")
    _install(site, "only", "mod")
    assert names() == ["only"]
    assert not (tmp_path / "cache").exists()


def test_a_corrupt_cache_file_is_a_miss(site):
    _install(site, "first", "mod_a")
    names()
    path = entrypoints.cache_file("ferrule_cache_test")
    with open(path, "wb") as f:
        f.write(b"\x00garbage")
    assert names() == ["first"]


# -- a damaged cache is ignored, logged once and rebuilt (issue 31, reproduction 9) --------


def _cached(group="ferrule_cache_test"):
    with open(entrypoints.cache_file(group), encoding="utf-8") as f:
        return json.load(f)


def _plant(document, group="ferrule_cache_test"):
    with open(entrypoints.cache_file(group), "w", encoding="utf-8") as f:
        json.dump(document, f)


def _damage_events(caplog):
    return [
        r for r in caplog.records if getattr(r, "ferrule_event", "") == "discovery_cache_ignored"
    ]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: {**d, "entry_points": [1, 2, 3]}, id="records-not-lists"),
        pytest.param(lambda d: {**d, "entry_points": [["a", "b"]]}, id="records-too-short"),
        pytest.param(lambda d: {**d, "entry_points": [[1, "m", None, None]]}, id="a-number-name"),
        pytest.param(lambda d: {**d, "entry_points": {"a": 1}}, id="records-an-object"),
        pytest.param(lambda d: {**d, "index": [["operator", "x"]]}, id="index-too-short"),
        pytest.param(lambda d: {**d, "index": "x"}, id="index-a-string"),
        pytest.param(lambda d: [d], id="a-list"),
        pytest.param(lambda d: {**d, "format": 0}, id="another-format"),
        # a planted list: the right key, the wrong entry points
        pytest.param(lambda d: {**d, "entry_points": []}, id="planted-empty"),
        pytest.param(
            lambda d: {**d, "entry_points": [["first", "planted_module", "first", "1.0"]]},
            id="planted-module",
        ),
        pytest.param(
            lambda d: {**d, "entry_points": [*d["entry_points"], ["x", "evil", None, None]]},
            id="planted-extra",
        ),
    ],
)
def test_a_damaged_cache_is_ignored_logged_once_and_rebuilt(site, caplog, damage):
    _install(site, "first", "mod_a")
    assert names() == ["first"]
    good = _cached()
    _plant(damage(good))
    caplog.set_level("WARNING", logger="ferrule.discovery")
    records = discovery.find_entry_points("ferrule_cache_test")
    assert [(r.name, r.value) for r in records] == [("first", "mod_a")]
    assert len(_damage_events(caplog)) == 1
    assert _cached() == good  # rebuilt
    caplog.clear()
    assert names() == ["first"]
    assert _damage_events(caplog) == []  # once: the rebuilt file is used


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"\xdb\xff\xff\xff\x7f", id="five-bytes"),  # a marshal list of 2**31
        pytest.param(b'{"format": 1, "key": "', id="truncated"),
        pytest.param(b"\xff\xfe garbage \x00", id="not-utf-8"),
        pytest.param(b"[" * 200_000, id="nested-deep"),
        pytest.param(b" " * (entrypoints.MAX_CACHE_BYTES + 1), id="too-large"),
        pytest.param(b"null", id="null"),
    ],
)
def test_a_truncated_or_garbage_cache_is_ignored_and_rebuilt(site, caplog, data):
    _install(site, "first", "mod_a")
    names()
    good = _cached()
    with open(entrypoints.cache_file("ferrule_cache_test"), "wb") as f:
        f.write(data)
    caplog.set_level("WARNING", logger="ferrule.discovery")
    assert names() == ["first"]
    assert len(_damage_events(caplog)) == 1
    assert _cached() == good


def test_a_damaged_cache_never_stops_a_start_under_a_memory_limit(tmp_path):
    """The issue's case: 5 bytes that a marshal reader took for a list of 2**31 items, in a
    process limited to 4 GiB of address space: a Kernel still starts, with its plugins."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "import ferrule_kernel\n"
        "from ferrule_kernel import entrypoints\n"
        "path = entrypoints.cache_file('ferrule')\n"
        "import os; os.makedirs(os.path.dirname(path), exist_ok=True)\n"
        "open(path, 'wb').write(b'\\xdb\\xff\\xff\\xff\\x7f')\n"
        "k = ferrule_kernel.Kernel()\n"
        "print(len(k.operators()) > 0)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "True", done.stderr


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
