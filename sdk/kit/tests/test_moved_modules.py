"""The kit's old module paths (before it was grouped by concern, issue 32) still import, and
each gives the very module object at its new path; importing the kit imports none of them.
"""

from __future__ import annotations

import importlib
import json
import pickle
import subprocess
import sys

import ferrule_kit
import pytest
from ferrule_kit import MOVED_MODULES


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_an_old_path_is_the_module_at_its_new_path(old: str, new: str) -> None:
    moved = importlib.import_module(f"ferrule_kit.{old}")
    assert moved is importlib.import_module(f"ferrule_kit.{new}")
    assert moved.__name__ == f"ferrule_kit.{new}"
    assert moved.__spec__ is not None and moved.__spec__.name == f"ferrule_kit.{new}"
    assert sys.modules[f"ferrule_kit.{old}"] is moved
    assert getattr(ferrule_kit, old) is moved  # ``from ferrule_kit import messages``


def test_the_table_names_each_module_once_and_only_modules_that_exist() -> None:
    assert len(set(MOVED_MODULES.values())) == len(MOVED_MODULES)
    for old, new in MOVED_MODULES.items():
        assert "." in new, old  # each moved into a subpackage
        assert importlib.util.find_spec(f"ferrule_kit.{new}") is not None, new


def test_an_old_paths_names_are_the_new_modules_objects() -> None:
    from ferrule_kit.content.messages import Message as new_message
    from ferrule_kit.messages import Message as old_message
    from ferrule_kit.sqlstore import SqlStorage as old_store
    from ferrule_kit.stores.sql.store import SqlStorage as new_store

    assert old_message is new_message and old_store is new_store
    message = old_message(role="user", contents="Hi")
    assert type(pickle.loads(pickle.dumps(message))) is new_message


def test_a_name_the_table_lacks_is_not_found() -> None:
    with pytest.raises(ModuleNotFoundError, match=r"ferrule_kit\.no_such_module"):
        importlib.import_module("ferrule_kit.no_such_module")
    with pytest.raises(ModuleNotFoundError):  # only the kit's own old names are answered
        importlib.import_module("ferrule_kit.content.lm")


CHILD = """
import json, sys
import ferrule_kit
after_kit = sorted(m for m in sys.modules if m.startswith("ferrule_kit."))
import ferrule_kit.policy
after_policy = sorted(m for m in sys.modules if m.startswith("ferrule_kit."))
print(json.dumps({"kit": after_kit, "policy": after_policy}))
"""


def test_importing_the_kit_imports_no_moved_module_and_an_old_path_only_its_own() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kit"] == []
    # content.policy imports nothing of the kit: its package and the old name come with it
    assert report["policy"] == [
        "ferrule_kit.content",
        "ferrule_kit.content.policy",
        "ferrule_kit.policy",
    ]
