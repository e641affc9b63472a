"""ferrule against the inventory of Agno 2.9's public API in the subjects ferrule claims.

``agno_inventory.json`` is generated from Agno's source by ``inventory_agno.py`` (beside this
file); ``agno_status.json`` gives every entry a status:

- ``"same"``: ferrule has it at Agno's path (``agno.x`` is ``ferrule.x``), doing what Agno's
  does. Checked here: the module imports; the name is there, a class where Agno's is one,
  subclassing ferrule's counterpart of each Agno base; a re-export is the very object of its
  home; each parameter is there by name and kind (a parameter Agno's callers may pass by
  position, every one up to the first with a default, at the same position), with Agno's
  default where that is a literal, a default of its own where Agno's is computed; a method is
  async where Agno's is; what a method returns names ferrule's counterpart of each Agno class
  Agno's returns (``List[Message]``: ferrule's `ferrule.models.message.Message`); an
  enum's member has Agno's value.
- ``{"status": "declined", ...}``: ferrule refuses it with a clear error naming ferrule's way:
  ``check`` (Python run with ``imports``) raises ``error`` whose message holds ``says``; the
  reason is a line of docs/coming-from-agno.md. At most a tenth of all entries.

Accepting a parameter and ignoring it is neither status.
"""

from __future__ import annotations

import builtins
import collections
import enum
import importlib
import importlib.util
import inspect
import json
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[2]


def _load_tool() -> Any:
    spec = importlib.util.spec_from_file_location("agno_inventory_tool", HERE / "inventory_agno.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TOOL = _load_tool()
INVENTORY: dict[str, Any] = json.loads((HERE / "agno_inventory.json").read_text())
STATUSES: dict[str, Any] = TOOL.load_statuses()
ENTRIES: dict[str, dict[str, Any]] = TOOL.entries(INVENTORY)
MISSING = object()
#: What a return annotation of ``Self`` (or a type variable) stands for: the class itself.
SELF = object()


# -- finding ferrule's counterpart ------------------------------------------------------------


def ferrule_module_name(agno_module: str) -> str:
    return "ferrule" + agno_module[len("agno") :]


def agno_details(key: str) -> dict[str, Any]:
    """The inventory's record of a module-level name (``module:Name``)."""
    module, _, name = key.partition(":")
    found: dict[str, Any] = INVENTORY["modules"][module]["names"][name]
    return found


def split(key: str) -> tuple[str, str | None, str | None, str | None]:
    """(module, name, member, parameter) of an entry id."""
    module, _, rest = key.partition(":")
    if not rest:
        return module, None, None, None
    param = None
    if rest.endswith(")"):
        rest, _, param = rest[:-1].partition("(")
    name, _, member = rest.partition(".")
    return module, name, member or None, param


def ferrule_object(module: str, name: str | None = None, member: str | None = None) -> Any:
    target: Any = importlib.import_module(ferrule_module_name(module))
    if name is not None:
        target = getattr(target, name, MISSING)
    if member is not None and target is not MISSING:
        target = static_member(target, member)
    return target


def static_member(owner: Any, name: str) -> Any:
    """``owner``'s ``name`` as its class body defines it (a staticmethod stays one), but a
    descriptor of another kind (the Agent's `Delegated` methods) as the class hands it out:
    the function it stands for."""
    found = inspect.getattr_static(owner, name, MISSING)
    plain = (staticmethod, classmethod, property, types.FunctionType)
    if found is MISSING or isinstance(found, plain) or not hasattr(found, "__get__"):
        return found
    return getattr(owner, name, found)


def counterpart(agno_key: str) -> Any:
    """ferrule's object for an Agno ``module:Name`` (MISSING when it has none)."""
    module, _, name = agno_key.partition(":")
    try:
        return ferrule_object(module, name)
    except ImportError:
        return MISSING


# -- signatures --------------------------------------------------------------------------------


@attrs.frozen
class Param:
    name: str
    kind: inspect._ParameterKind
    default: Any  # inspect.Parameter.empty when required; MISSING when not visible


def signature_of(function: Any, bound: bool) -> list[Param] | None:
    """The parameters of a ferrule callable, a ``**kwargs: Unpack[TypedDict]``'s keys as
    keyword-only parameters; ``self`` left out when ``bound``."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    params = list(signature.parameters.values())
    if bound and params and params[0].kind is not inspect.Parameter.VAR_POSITIONAL:
        params = params[1:]
    out = []
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            keys = unpacked_keys(function, p.name)
            if keys:
                out += [Param(k, inspect.Parameter.KEYWORD_ONLY, MISSING) for k in keys]
                continue
        out.append(Param(p.name, p.kind, p.default))
    return out


def unpacked_keys(function: Any, name: str) -> list[str]:
    target = function.__init__ if inspect.isclass(function) else function
    try:
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:
        return []
    hint = hints.get(name)
    if typing.get_origin(hint) is typing_extensions_unpack():
        (typed_dict,) = typing.get_args(hint)
        return list(typing.get_type_hints(typed_dict))
    return []


def typing_extensions_self() -> Any:
    import typing_extensions

    return typing_extensions.Self


def typing_extensions_unpack() -> Any:
    import typing_extensions

    return typing_extensions.Unpack


def default_matches(agno: dict[str, Any] | None, ours: Any) -> bool:
    if agno is None:  # Agno's is required: ours may be too, or have a default
        return True
    if ours is inspect.Parameter.empty:
        return False
    if "literal" not in agno or ours is MISSING:
        return "literal" not in agno or agno["literal"] is None
    expected = agno["literal"]
    if isinstance(ours, enum.Enum):
        return bool(ours == expected or ours.value == expected)
    if isinstance(expected, bool) or isinstance(ours, bool):
        return ours is expected
    return bool(ours == expected)


def check_params(
    owner_key: str, agno_params: list[dict[str, Any]], ours: list[Param] | None
) -> dict[str, str]:
    """Problems by parameter name (empty: every parameter is as Agno's)."""
    problems: dict[str, str] = {}
    if ours is None:
        return {p["name"]: "no signature to read" for p in agno_params}
    by_name = {p.name: p for p in ours}
    has_var = {p.kind for p in ours}
    positional = [
        p
        for p in ours
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    agno_positional = [
        p for p in agno_params if p["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
    ]
    first_default = next(
        (i for i, p in enumerate(agno_positional) if "default" in p), len(agno_positional) - 1
    )
    for item in agno_params:
        name, kind = item["name"], item["kind"]
        if kind == "VAR_POSITIONAL":
            if inspect.Parameter.VAR_POSITIONAL not in has_var:
                problems[name] = "takes no *args"
            continue
        if kind == "VAR_KEYWORD":
            if inspect.Parameter.VAR_KEYWORD not in has_var:
                problems[name] = "takes no **kwargs"
            continue
        found = by_name.get(name)
        if found is None:
            problems[name] = "missing"
            continue
        if kind != "POSITIONAL_ONLY" and found.kind is inspect.Parameter.POSITIONAL_ONLY:
            problems[name] = "positional only"
            continue
        if kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD"):
            index = agno_positional.index(item)
            if index <= first_default and (
                index >= len(positional) or positional[index].name != name
            ):
                problems[name] = f"not at position {index}"
                continue
        if not default_matches(item.get("default"), found.default):
            problems[name] = f"default {found.default!r}, Agno's {item.get('default')}"
    return problems


# -- checking one entry ------------------------------------------------------------------------


def has_attribute(cls: Any, name: str) -> bool:
    if inspect.getattr_static(cls, name, MISSING) is not MISSING:
        return True
    for klass in getattr(cls, "__mro__", ()):
        if name in getattr(klass, "__annotations__", {}):
            return True
        if attrs.has(klass) and name in attrs.fields_dict(klass):
            return True
        if name in getattr(klass, "model_fields", {}):
            return True
    return False


BUILTIN_BASES = {
    name: getattr(builtins, name)
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
} | {"str": str, "int": int, "Enum": enum.Enum, "IntEnum": enum.IntEnum}


def check_class(key: str, ours: Any) -> str | None:
    details = agno_details(key)
    if not inspect.isclass(ours):
        return f"{ours!r} is not a class"
    for base in details["bases"]:
        if ":" in base and base.startswith("agno."):
            if TOOL.status_of(STATUSES.get(base, "")) == "declined":
                continue  # ferrule refuses the base itself, with its reason
            if f"{base.split(':')[0]}" in INVENTORY["modules"]:
                theirs = counterpart(base)
                if theirs is MISSING or not (inspect.isclass(theirs) and issubclass(ours, theirs)):
                    return f"does not subclass ferrule's {base}"
        else:
            short = base.replace(":", ".").rsplit(".", 1)[-1].split("[")[0]
            builtin = BUILTIN_BASES.get(short)
            if builtin is not None and not issubclass(ours, builtin):
                return f"does not subclass {short}"
    return None


def returned(function: Any) -> set[Any]:
    """The classes a callable's return annotation names (a type variable: its bound; a
    ``Self``: `SELF`)."""
    found: set[Any] = set()
    try:
        hint = typing.get_type_hints(function).get("return")
    except Exception:
        text = getattr(function, "__annotations__", {}).get("return")
        names = re.findall(r"[A-Za-z_]\w*", text) if isinstance(text, str) else []
        globals_ = getattr(function, "__globals__", {})
        return {globals_[n] for n in names if inspect.isclass(globals_.get(n))}

    def walk(value: Any) -> None:
        if isinstance(value, typing.TypeVar):
            found.add(SELF)
            value = value.__bound__
        if value is typing_extensions_self():
            found.add(SELF)
        if inspect.isclass(value):
            found.add(value)
        if inspect.isclass(typing.get_origin(value)):
            found.add(typing.get_origin(value))  # Function[P, R]: Function
        for arg in typing.get_args(value):
            walk(arg)

    walk(hint)
    if hint is Any:  # an overloaded function: what its overloads return
        for overload in typing.get_overloads(function):
            found |= returned(overload)
    return found


def check_callable(key: str, agno: dict[str, Any], ours: Any, bound: bool) -> str | None:
    function = ours
    if isinstance(ours, (staticmethod, classmethod)):
        function = ours.__func__
    if isinstance(ours, property):
        return None
    if not callable(function):
        return "not callable"
    if agno.get("async") and not (
        inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function)
    ):
        return "not async"
    if agno["kind"] in ("classmethod", "staticmethod") and not isinstance(
        ours, (staticmethod, classmethod)
    ):
        return f"not a {agno['kind']}"
    module, _, rest = key.partition(":")
    owner = f"{module}:{rest.split('.')[0]}" if "." in rest else None
    for ref in agno.get("returns_refs", []):
        theirs = counterpart(ref)
        if theirs is MISSING:
            return f"returns Agno's {ref}, which ferrule lacks"
        classes = returned(function)
        if ref == owner and SELF in classes:
            continue  # a class method returning its own class (Self, or cls's type variable)
        if not any(inspect.isclass(c) and issubclass(c, theirs) for c in classes):
            return f"does not return ferrule's counterpart of {ref}"
    return None


def entry_problem(key: str) -> str | None:
    """What is not as Agno's about a ``same`` entry (None: nothing)."""
    entry = ENTRIES[key]
    module, name, member, param = split(key)
    try:
        mod = importlib.import_module(ferrule_module_name(module))
    except ImportError as exc:
        return f"{ferrule_module_name(module)} does not import: {exc}"
    if name is None:
        return None
    details = agno_details(f"{module}:{name}")
    ours = getattr(mod, name, MISSING)
    if ours is MISSING:
        return f"{ferrule_module_name(module)} has no {name}"
    if member is None and param is None:
        kind = details["kind"]
        if kind == "class":
            return check_class(f"{module}:{name}", ours)
        if kind == "function":
            return check_callable(key, details, ours, bound=False)
        if kind == "alias":
            target = details["of"]
            if target.split(":")[0] in INVENTORY["modules"] and target in ENTRIES:
                theirs = counterpart(target)
                if theirs is not ours:
                    return f"is not ferrule's {target}"
            return None
        if kind == "alias_local":
            home = getattr(mod, details["of"], MISSING) if details["of"].isidentifier() else MISSING
            if home is not MISSING and home is not ours:
                return f"is not {details['of']}"
            return None
        value = details.get("value") or {}
        if "literal" in value and ours != value["literal"]:
            return f"is {ours!r}, Agno's {value['literal']!r}"
        if value.get("text") and not isinstance(ours, str):
            return "is not text"
        return None
    if member is None:  # a parameter of a function or constructor
        agno_params = details.get("params") if details["kind"] == "function" else None
        if agno_params is None:
            agno_params = details.get("constructor") or []
        problems = check_params(key, agno_params, signature_of(ours, bound=False))
        return problems.get(str(param))
    found = static_member(ours, member)
    if entry["type"] == "enum_member":
        value = getattr(ours, member, MISSING)
        if value is MISSING:
            return f"{name} has no member {member}"
        expected = entry["value"].get("literal", MISSING)
        actual = value.value if isinstance(value, enum.Enum) else value
        if expected is not MISSING and actual != expected:
            return f"{name}.{member} is {actual!r}, Agno's {expected!r}"
        return None
    agno_member = details["methods"][member]
    if agno_member["kind"] in ("attribute", "property"):
        return None if has_attribute(ours, member) else f"{name} has no attribute {member}"
    if found is MISSING:
        return f"{name} has no method {member}"
    if param is None:
        return check_callable(key, agno_member, found, bound=True)
    function = found.__func__ if isinstance(found, (staticmethod, classmethod)) else found
    bound = not isinstance(found, staticmethod)
    problems = check_params(key, agno_member["params"], signature_of(function, bound=bound))
    return problems.get(str(param))


# -- the tests ---------------------------------------------------------------------------------


def test_every_entry_has_a_status_and_every_status_an_entry():
    no_status = sorted(set(ENTRIES) - set(STATUSES))
    stale = sorted(set(STATUSES) - set(ENTRIES))
    assert not no_status, f"{len(no_status)} entries have no status, e.g. {no_status[:10]}"
    assert not stale, f"{len(stale)} statuses name no entry, e.g. {stale[:10]}"
    unknown = {k: v for k, v in STATUSES.items() if TOOL.status_of(v) not in TOOL.STATUSES}
    assert not unknown, f"{len(unknown)} entries have no final status, e.g. {list(unknown)[:10]}"


def test_declined_entries_are_under_a_tenth():
    declined = [k for k, v in STATUSES.items() if TOOL.status_of(v) == "declined"]
    assert len(declined) < len(ENTRIES) / 10, f"{len(declined)} of {len(ENTRIES)} declined"


@pytest.mark.parametrize("subject", INVENTORY["subjects"])
def test_same_entries_are_as_agnos(subject):
    problems = {}
    for key, entry in ENTRIES.items():
        if entry["subject"] != subject or TOOL.status_of(STATUSES.get(key, "")) != "same":
            continue
        problem = entry_problem(key)
        if problem is not None:
            problems[key] = problem
    listed = "\n".join(f"  {k}: {v}" for k, v in list(problems.items())[:40])
    assert not problems, f"{len(problems)} 'same' entries differ from Agno's:\n{listed}"


def InvalidInputError_() -> type[BaseException]:
    from ferrule_kernel import InvalidInputError

    return InvalidInputError


def error_class(name: str) -> type[BaseException]:
    if "." not in name:
        found = getattr(builtins, name)
    else:
        module, _, attribute = name.rpartition(".")
        found = getattr(importlib.import_module(module), attribute)
    assert isinstance(found, type) and issubclass(found, BaseException)
    return found


DECLINED = sorted(k for k, v in STATUSES.items() if TOOL.status_of(v) == "declined")


@pytest.mark.parametrize("key", DECLINED)
def test_declined_entries_raise_their_named_error(key):
    status = STATUSES[key]
    for field in ("reason", "error", "says", "check"):
        assert status.get(field), f"{key}: declined with no {field!r}"
    namespace: dict[str, Any] = {}
    exec(status.get("imports", ""), namespace)
    with pytest.raises(error_class(status["error"])) as raised:
        exec(status["check"], namespace)
    assert status["says"] in str(raised.value), f"{key}: {raised.value}"


def test_docs_show_the_summary_and_every_declined_reason():
    docs = (REPOSITORY / "docs" / "coming-from-agno.md").read_text()
    for row in TOOL.summary(INVENTORY, STATUSES):
        line = "| " + " | ".join(row) + " |"
        assert line in docs, f"docs/coming-from-agno.md lacks the summary row {line!r}"
    reasons = collections.Counter(STATUSES[k]["reason"] for k in DECLINED)
    missing = [r for r in reasons if r not in docs]
    assert not missing, f"reasons not in docs/coming-from-agno.md: {missing[:5]}"
