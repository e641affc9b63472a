"""No source module reaches into another's private names (kernel, kit and app alike).

What two modules share has a public name in its home module. A module imports no
underscore name (``from .kernel import _fail``), and reads ``obj._x`` only where ``_x`` is its
own (a name it defines or sets), so a private name can be renamed or removed by reading one
file.

One pattern is allowed, the existing and documented one: a package's private module holds
the package's internals behind public names (``ferrule._bridge``'s `Bridge` and `Watchdog`,
``ferrule._transport``, ``ferrule.agent._typing``), and is imported from within that package
only: ``ferrule.server.app`` may import ``ferrule._bridge.Watchdog``; ``ferrule_kit`` may not
import ``ferrule._bridge`` at all, and no module may import ``_Watchdog``.

The standard library's own underscore names that have no public spelling are listed in
`STDLIB` with the reason each is used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE_ROOTS = (ROOT / "kernel/src", ROOT / "sdk/kit/src", ROOT / "sdk/ferrule/src")

#: ``module._name`` reads of the standard library's underscore names, and why.
STDLIB = {
    "sys._current_frames",  # documented: the loop watchdog names what holds the loop
    "os._exit",  # documented: leave without running exit handlers
    "argparse._SubParsersAction",  # the type of add_subparsers()' result, named nowhere else
    "threading._register_atexit",  # the one hook that runs before executors shut down
}
#: namedtuple's documented methods (``urlsplit(...)._replace``), on any value.
NAMEDTUPLE = {"_replace", "_asdict", "_make", "_fields"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _modules() -> Iterator[tuple[str, Path]]:
    """(dotted name, path) of every source module; a package is its ``__init__``."""
    for root in SOURCE_ROOTS:
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join(parts), path


def _own_private_names(tree: ast.Module) -> set[str]:
    """The underscore names a module defines: its functions, classes, module and class
    attributes, and the ``self._x`` attributes its methods set."""
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
    return {name for name in defined if _private(name)}


def _imported_module(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute name of the module ``node`` imports from."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _outside_private_module(importer: str, imported: str) -> bool:
    """Whether ``imported`` lies in a private module that ``importer`` is not within the
    package of (the package: the names before the first private one)."""
    parts = imported.split(".")
    for index, part in enumerate(parts):
        if _private(part):
            package = ".".join(parts[:index])
            return not (package and importer.startswith(package + "."))
    return False


def _reaches(module: str, path: Path, known_modules: set[str]) -> list[str]:
    """Each reach of the module ``module`` (at ``path``) into another's private names, as
    ``line: what``; ``known_modules``: the modules there are (to tell a module from a name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _own_private_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _imported_module(module, path.name == "__init__.py", node)
            if _outside_private_module(module, source):
                found.append(f"{node.lineno}: imports from private module {source}")
                continue
            for alias in node.names:
                if not _private(alias.name):
                    continue
                submodule = f"{source}.{alias.name}"
                if submodule in known_modules:
                    if _outside_private_module(module, submodule):
                        found.append(f"{node.lineno}: imports private module {submodule}")
                else:
                    found.append(f"{node.lineno}: imports {alias.name} from {source}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: imports private module {alias.name}"
                for alias in node.names
                if _outside_private_module(module, alias.name)
            ]
        elif (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and node.attr not in own
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            and f"{ast.unparse(node.value)}.{node.attr}" not in STDLIB
            and node.attr not in NAMEDTUPLE
        ):
            found.append(f"{node.lineno}: reads {ast.unparse(node)}")
    return found


def test_no_module_reaches_into_another_modules_private_names() -> None:
    modules = dict(_modules())
    assert {"ferrule_kernel", "ferrule_kit", "ferrule", "ferrule.agent"} <= set(modules)
    reaching = [
        f"{path.relative_to(ROOT)}:{reach}"
        for module, path in modules.items()
        for reach in _reaches(module, path, set(modules))
    ]
    assert reaching == []


def test_the_check_finds_each_kind_of_reach(tmp_path: Path) -> None:
    """The checker on planted modules: each kind of reach is found, each allowed use is not."""
    planted = tmp_path / "ferrule_kit" / "planted.py"
    planted.parent.mkdir()
    planted.write_text(
        "from ferrule._bridge import Bridge\n"  # a private module of another package
        "from ._inner import helper\n"  # its own package's private module: allowed
        "from .errors import _rows\n"  # a sibling's underscore name
        "from . import _inner\n"  # its own package's private module: allowed
        "import ferrule._transport\n"  # another package's private module
        "import sys\n"
        "sys._current_frames()\n"  # the standard library's, listed
        "_mine = 1\n"
        "value = other._secret + other._mine\n"  # a foreign attribute; its own name
        "self._x, cls._y\n",
        encoding="utf-8",
    )
    known = {"ferrule_kit", "ferrule_kit.planted", "ferrule_kit._inner", "ferrule._bridge"}
    found = _reaches("ferrule_kit.planted", planted, known)
    assert sorted(found, key=lambda reach: int(reach.split(":")[0])) == [
        "1: imports from private module ferrule._bridge",
        "3: imports _rows from ferrule_kit.errors",
        "5: imports private module ferrule._transport",
        "9: reads other._secret",
    ]
