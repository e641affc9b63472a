"""What the docs name as code exists: every dotted name that README.md, ``docs/*.md`` or a
plugin's README puts in backticks as code resolves to something the code defines, so a
renamed or removed function cannot linger in the prose (issue 32).

The rule, precisely. Inline code (one backtick each side, outside fenced blocks) is a
*dotted name* when it is Python identifiers joined by dots, maybe ending in ``()``:
``ferrule_kit.network.http.scrub``, ``Kernel.call_method``, ``ferrule.configure_logging()``.
Anything else is not a name: ``agent.run(x)``, ``--flag``, ``a/b``, ``X-Header``. A dotted
name whose last part is a file ending (``agent.py``, ``pyproject.toml``, ``keys.json``) is a
file name and is not checked. Of the rest, a name is checked when its first part is

- a package of this repository (``ferrule``, ``ferrule_kit``, ``ferrule_kernel``, a plugin's
  ``ferrule_<name>``) or a module of Python's standard library (``inspect.signature``): its
  longest importable prefix is imported and each further part must be an attribute, or
- a class this repository defines (``Agent``, ``Kernel``, ``BatchDecoder``): some class of
  that name must have the next part, found as an attribute (inherited ones too), an attrs,
  dataclass or pydantic field, an annotation in its body or an attribute one of its methods
  sets on ``self``; a part after a field or instance attribute is not followed.

A checked name also resolves when the sources spell it, whole, as a string: a logger's name
(``get_logger("ferrule.server.access")``) or a span attribute's key (``"ferrule.run.id"``)
is a dotted name of its own, and stays true while the code says it.

``docs/architecture.md``, the page about the internals, also names private ones bare
(``_Core``, ``_Pump``): there every backticked ``_name`` must be defined in the sources, as a
class, a function or method, or a name or attribute assigned. Elsewhere a bare ``_name`` is
read as a name's ending (``infer`` + ``_sync``, exllamav2's cache ``_Q4``).

Everything else is prose's, not checked: a value written with its usual variable
(``agent.query``, ``rt.call``, ``run.is_paused``), a wire key or event type
(``usage.prompt_tokens``, ``response.completed``), a placeholder (``COMPONENT.METHOD``).
So: name code by its import path (``ferrule_kernel.discovery.load_provider``) or by its class
(``Agent.run``); a short lower-case form is read as a value. A name of another project that
reads like one of ours is listed in ``OTHERS`` with whose it is (each entry must still be
used). A name a page gives as gone is written with its own project's path
(``agno.guardrails``), not as ours.

The names are resolved in a child process (``python tests/test_doc_names.py NAME...``),
which imports what they name, so the test run's own modules stay as they were.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [
    ROOT / "kernel/src",
    *sorted(ROOT.glob("sdk/*/src")),
    *sorted(ROOT.glob("plugins/*/src")),
]
PAGES = [
    ROOT / "README.md",
    *sorted(ROOT.glob("docs/*.md")),
    *sorted(ROOT.glob("plugins/*/README.md")),
]

#: Names of other projects the docs give as such, which read like one of ours: why each is not.
OTHERS = {
    "JSON.parse": "JavaScript's (how the Node benchmark reads each line)",
    "Knowledge.insert": "Agno's Knowledge, benchmarked against ferrule's",
    "Knowledge.ainsert": "Agno's Knowledge, benchmarked against ferrule's",
    "Tool.newBuiltin": "Ailoy's Node API (the Node client's section of coming-from-ailoy)",
    "Knowledge.as_tool": "Ailoy 0.2's Knowledge (ferrule's is AiloyKnowledge.as_tool)",
    "LangModel.newLocal": "Ailoy's Node API (the Node client's section of coming-from-ailoy)",
}

#: File endings: a dotted name ending in one is a file name.
FILE_ENDINGS = frozenset(
    "py pyi md toml json jsonl txt ts js mjs cfg ini yaml yml sh html css lock gguf csv db".split()
)

_FENCED = re.compile(r"^```.*?^```", re.M | re.S)
_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
_PRIVATE = re.compile(r"_[A-Za-z]\w*")
INTERNALS_PAGE = ROOT / "docs" / "architecture.md"


@attrs.frozen
class Mention:
    """A dotted name in backticks on a page, where it stands."""

    where: str  # page:line
    name: str  # without a trailing ()


def _inline_code(page: Path) -> list[tuple[str, str]]:
    """The page's inline code as (page:line, code without a trailing ``()``), fenced blocks
    left out (their lines kept blank, so the line numbers are the page's)."""
    text = _FENCED.sub(lambda block: "\n" * block.group(0).count("\n"), page.read_text())
    return [
        (
            f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, match.start()) + 1}",
            match.group(1).strip().removesuffix("()"),
        )
        for match in _CODE.finditer(text)
    ]


def mentions(page: Path) -> list[Mention]:
    """The page's dotted names in inline code, file names left out."""
    return [
        Mention(where, code)
        for where, code in _inline_code(page)
        if _DOTTED.fullmatch(code) and code.rsplit(".", 1)[1] not in FILE_ENDINGS
    ]


def private_mentions(page: Path) -> list[Mention]:
    """The page's bare private names in inline code (``_Core``)."""
    return [Mention(where, code) for where, code in _inline_code(page) if _PRIVATE.fullmatch(code)]


@attrs.frozen
class SourceIndex:
    """What the repository's sources define, read without importing them."""

    packages: frozenset[str]  # top-level packages
    classes: dict[str, list[tuple[str, str]]]  # class name -> [(module, qualname)]
    self_attributes: dict[tuple[str, str], frozenset[str]]  # (module, qualname) -> names
    spelled: frozenset[str]  # the dotted names the sources spell as a whole string
    defined: frozenset[str]  # every class, function, method, assigned name and attribute


def _module_name(source: Path, path: Path) -> str:
    return ".".join(path.relative_to(source).with_suffix("").parts).removesuffix(".__init__")


def _assigned_on_self(body: list[ast.stmt]) -> set[str]:
    names = set()
    for function in body:
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, (ast.AnnAssign, ast.AugAssign))
                    else []
                )
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    ):
                        names.add(target.attr)
    return names


@functools.cache
def source_index() -> SourceIndex:
    packages: set[str] = set()
    classes: dict[str, list[tuple[str, str]]] = {}
    self_attributes: dict[tuple[str, str], frozenset[str]] = {}
    spelled: set[str] = set()
    defined: set[str] = set()
    for source in SOURCES:
        packages |= {p.name for p in source.iterdir() if (p / "__init__.py").exists()}
        for path in sorted(source.rglob("*.py")):
            module = _module_name(source, path)
            tree = ast.parse(path.read_text(encoding="utf-8"))

            def visit(node: ast.AST, prefix: str, module: str = module) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.ClassDef):
                        qualname = f"{prefix}{child.name}"
                        classes.setdefault(child.name, []).append((module, qualname))
                        self_attributes[module, qualname] = frozenset(_assigned_on_self(child.body))
                        visit(child, f"{qualname}.")
                    elif not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        visit(child, prefix)

            visit(tree, "")
            spelled |= {
                node.value
                for node in ast.walk(tree)
                if isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and _DOTTED.fullmatch(node.value)
            }
            for node in ast.walk(tree):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    defined.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    defined.add(node.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    defined.add(node.attr)
    return SourceIndex(
        frozenset(packages), classes, self_attributes, frozenset(spelled), frozenset(defined)
    )


def checked(name: str) -> bool:
    """Whether the rule checks this name (see the module's docstring)."""
    first = name.split(".", 1)[0]
    index = source_index()
    return name not in OTHERS and (
        first in index.packages or first in sys.stdlib_module_names or first in index.classes
    )


# -- resolving (in the child process) ----------------------------------------------------

_NOT_FOLLOWED = object()  # a field or instance attribute: the parts after it are not looked at


def _member(owner: object, part: str) -> object:
    """``owner``'s attribute ``part``, ``_NOT_FOLLOWED`` for a field or instance attribute,
    or ``None`` where it has none."""
    try:
        return getattr(owner, part)
    except AttributeError:
        pass
    if not isinstance(owner, type):
        return None
    index = source_index()
    for klass in owner.__mro__:
        fields = {
            *getattr(klass, "__annotations__", {}),
            *getattr(klass, "__dataclass_fields__", {}),
            *(getattr(klass, "model_fields", None) or {}),
            *(attrs.fields_dict(klass) if attrs.has(klass) else {}),
            *index.self_attributes.get((klass.__module__, klass.__qualname__), ()),
        }
        if part in fields:
            return _NOT_FOLLOWED
    return None


def _walk(start: object, parts: list[str], said: str) -> str | None:
    """None where ``parts`` resolve from ``start`` (named ``said``), else what is missing."""
    owner = start
    for part in parts:
        found = _member(owner, part)
        if found is None:
            return f"{said} has no {part}"
        if found is _NOT_FOLLOWED:
            return None
        owner, said = found, f"{said}.{part}"
    return None


def _import_prefix(parts: list[str]) -> tuple[object, int] | str:
    """The longest importable module among ``parts``' prefixes, with how many parts it
    took, or why none imports."""
    for count in range(len(parts), 0, -1):
        module = ".".join(parts[:count])
        try:
            return importlib.import_module(module), count
        except ModuleNotFoundError as error:
            if error.name is not None and module.startswith(error.name):
                continue  # this prefix is not a module; a shorter one may be
            return f"importing {module} failed: {error}"
    return f"no module {parts[0]}"


def unresolved(name: str) -> str | None:
    """None where ``name`` resolves by the rule, else what is missing."""
    index = source_index()
    if name in index.spelled:
        return None
    parts = name.split(".")
    if parts[0] in index.packages or parts[0] in sys.stdlib_module_names:
        found = _import_prefix(parts)
        if isinstance(found, str):
            return found
        module, count = found
        return _walk(module, parts[count:], ".".join(parts[:count]))
    reasons = []
    for module_name, qualname in index.classes[parts[0]]:
        found = _import_prefix(module_name.split("."))
        if isinstance(found, str):
            reasons.append(found)
            continue
        klass = _walk(found[0], qualname.split("."), module_name)
        if klass is not None:
            reasons.append(klass)
            continue
        owner: object = found[0]
        for part in qualname.split("."):
            owner = getattr(owner, part)
        reason = _walk(owner, parts[1:], f"{module_name}.{qualname}")
        if reason is None:
            return None
        reasons.append(reason)
    return "; ".join(reasons)


def _resolve_in_child(names: list[str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, str(Path(__file__)), *names],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


# -- the tests ---------------------------------------------------------------------------


def test_the_pages_name_code() -> None:
    found = [mention for page in PAGES for mention in mentions(page)]
    assert len(found) > 300  # the pattern finds the pages' names
    names = {mention.name for mention in found}
    assert {"ferrule.Agent", "Kernel.call"} <= names
    assert "agent.py" not in names and "pyproject.toml" not in names  # file names


def test_what_the_rule_reads_as_a_name() -> None:
    assert (
        checked("ferrule_kit.network.http.scrub") and checked("Kernel.call") and checked("os.path")
    )
    assert not checked("agent.query") and not checked("usage.prompt_tokens")
    assert not checked("COMPONENT.METHOD") and not checked("JSON.parse")


def test_a_stale_name_is_found() -> None:
    missing = _resolve_in_child(
        [
            "ferrule_kit.network.http.scrub",
            "ferrule_kit.network.http.no_such_function",
            "Kernel.call_method",
            "Kernel.no_such_method",
            "ferrule.no_such_module",
            "ferrule.server.access",  # a logger's name
            "inspect.signature",
        ]
    )
    assert set(missing) == {
        "ferrule_kit.network.http.no_such_function",
        "Kernel.no_such_method",
        "ferrule.no_such_module",
    }
    assert "has no no_such_method" in missing["Kernel.no_such_method"]


def test_every_other_projects_name_is_still_on_a_page() -> None:
    names = {mention.name for page in PAGES for mention in mentions(page)}
    assert set(OTHERS) - names == set(), "drop these from OTHERS: no page names them now"


def test_every_name_the_docs_give_as_code_exists() -> None:
    found = [mention for page in PAGES for mention in mentions(page) if checked(mention.name)]
    missing = _resolve_in_child(sorted({mention.name for mention in found}))
    stale = [f"{m.where}: `{m.name}`: {missing[m.name]}" for m in found if m.name in missing]
    assert stale == [], (
        "the docs name code that does not exist (rename it as the code has it, or say it in "
        "words; tests/test_doc_names.py's docstring says what counts as a name):\n"
        + "\n".join(stale)
    )


def test_every_private_name_the_internals_page_gives_is_defined() -> None:
    defined = source_index().defined
    stale = [
        f"{m.where}: `{m.name}`" for m in private_mentions(INTERNALS_PAGE) if m.name not in defined
    ]
    assert stale == [], (
        f"{INTERNALS_PAGE.relative_to(ROOT)} names internals the sources no longer define "
        "(rename them as the code has them):\n" + "\n".join(stale)
    )


if __name__ == "__main__":  # the child: resolve argv's names, print {name: what is missing}
    report = {name: reason for name in sys.argv[1:] if (reason := unresolved(name)) is not None}
    print(json.dumps(report))
