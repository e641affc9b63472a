"""Write the inventory of Agno's public API in the subjects ferrule claims, read statically.

    python tests/compat/agno/inventory_agno.py AGNO_CHECKOUT [--out inventory.json]

``AGNO_CHECKOUT`` is a checkout of agno-agi/agno at the tag this inventory pins (``$AGNO_CHECKOUT``
when no argument is given). Nothing of Agno is imported: each module is parsed with `ast`, so
neither Agno nor its dependencies need to be installed. The output (``agno_inventory.json``
beside this file) is facts about the API, not code: for each public module of the subjects
below, its public names; for each public callable its parameters (name, kind, default as
written) and return annotation; for each public class its bases, the parameters of its
constructor, its public methods (with theirs) and its public attributes; an enum's members.

`test_agno_inventory.py` reads it with ``agno_status.json`` (one status per entry) and checks
ferrule against it.

An *entry* is one thing a user can name, with an id:

- ``agno.filters`` (a module), ``agno.filters:EQ`` (a public name in it),
- ``agno.filters:EQ(key)`` (a parameter of a class's constructor or of a function),
- ``agno.filters:EQ.to_dict`` (a method, property or attribute of a class),
- ``agno.tools.toolkit:Toolkit.get_functions(include)`` (a parameter of a method).

Members a class inherits from another class of Agno are not repeated under each subclass:
the subclass's entry records its bases (ferrule's class must subclass ferrule's counterpart),
and the base's entries cover them. A constructor is the exception, listed whole under each
class (its inherited fields included), because that is what a user calls.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: The release the inventory describes.
TAG = "v2.9.0"
VERSION = "2.9.0"
CLONE_HINT = f"git clone https://github.com/agno-agi/agno && git -C agno checkout {TAG}"
HERE = Path(__file__).resolve().parent
OUT = HERE / "agno_inventory.json"

#: The subjects ferrule claims, each with its modules (as paths under ``libs/agno/agno/``;
#: a folder ending in ``/`` means every public module in it, its subfolders included).
SUBJECTS: dict[str, tuple[str, ...]] = {
    "agent": ("agent/__init__.py", "agent/agent.py"),
    "run": (
        "run/__init__.py",
        "run/agent.py",
        "run/base.py",
        "run/messages.py",
        "run/requirement.py",
        "run/cancel.py",
        "run/cancellation_management/__init__.py",
        "run/cancellation_management/base.py",
        "run/cancellation_management/in_memory_cancellation_manager.py",
    ),
    "models": (
        "models/__init__.py",
        "models/base.py",
        "models/message.py",
        "models/response.py",
        "models/metrics.py",
        "models/fallback.py",
        "models/openai/",
        "models/anthropic/",
        "models/google/__init__.py",
        "models/google/gemini.py",
        "models/google/gemini_interactions.py",
        "models/xai/",
        "models/ollama/",
        "models/vllm/",
        "models/llama_cpp/",
    ),
    "tools": (
        "tools/__init__.py",
        "tools/toolkit.py",
        "tools/function.py",
        "tools/decorator.py",
        "tools/calculator.py",
        "tools/file.py",
        "tools/python.py",
        "tools/shell.py",
        "tools/reasoning.py",
        "tools/knowledge.py",
        "tools/memory.py",
        "tools/user_control_flow.py",
    ),
    "filters": ("filters.py",),
    "knowledge": (
        "knowledge/__init__.py",
        "knowledge/document/",
        "knowledge/filesystem.py",
        "knowledge/knowledge.py",
        "knowledge/content.py",
        "knowledge/embedder/base.py",
        "knowledge/embedder/openai.py",
        "knowledge/embedder/google.py",
        "knowledge/embedder/sentence_transformer.py",
        "knowledge/reader/__init__.py",
        "knowledge/reader/base.py",
        "knowledge/reader/text_reader.py",
        "knowledge/reader/markdown_reader.py",
        "knowledge/reader/pdf_reader.py",
        "knowledge/reader/csv_reader.py",
        "knowledge/reader/json_reader.py",
        "knowledge/reader/docx_reader.py",
        "knowledge/reader/reader_factory.py",
        "knowledge/chunking/",
    ),
    "vectordb": (
        "vectordb/__init__.py",
        "vectordb/base.py",
        "vectordb/search.py",
        "vectordb/distance.py",
        "vectordb/score.py",
        "vectordb/pgvector/",
        "vectordb/chroma/",
    ),
    "db": (
        "db/__init__.py",
        "db/base.py",
        "db/utils.py",
        "db/sqlite/__init__.py",
        "db/sqlite/sqlite.py",
        "db/sqlite/async_sqlite.py",
        "db/postgres/__init__.py",
        "db/postgres/postgres.py",
        "db/postgres/async_postgres.py",
        "db/async_postgres/",
        "db/in_memory/__init__.py",
        "db/in_memory/in_memory_db.py",
        "db/schemas/__init__.py",
        "db/schemas/memory.py",
        "db/schemas/knowledge.py",
        "db/schemas/metrics.py",
    ),
    "memory": ("memory/",),
    "session": ("session/__init__.py", "session/agent.py", "session/summary.py"),
    "reasoning": (
        "reasoning/__init__.py",
        "reasoning/step.py",
        "reasoning/manager.py",
        "reasoning/default.py",
        "reasoning/helpers.py",
        "reasoning/openai.py",
        "reasoning/anthropic.py",
        "reasoning/gemini.py",
        "reasoning/ollama.py",
    ),
    "exceptions": ("exceptions.py",),
    "guardrails": ("guardrails/",),
    "media": ("media.py",),
    "metrics": ("metrics.py",),
    "context": (
        "context/__init__.py",
        "context/backend.py",
        "context/mode.py",
        "context/provider.py",
        "context/fs/",
        "context/workspace/",
        "context/database/",
        "context/wiki/__init__.py",
        "context/wiki/backend.py",
        "context/wiki/provider.py",
    ),
    # every name of these; of the rest of agno.utils, what the cookbook imports (`utils_imports`)
    "utils": ("utils/log.py", "utils/pprint.py"),
}

#: Members of the subjects' classes whose own subject ferrule does not claim (teams,
#: workflows, AgentOS, evals, culture, learning, approvals, schedules, traces, the component
#: registry): listed in the inventory as out of subject, with this reason, not as entries.
OUT_OF_SUBJECT = {
    r"team": "teams",
    r"workflow": "workflows",
    r"(^|_)evals?(_|$)": "evals",
    r"cultur": "culture",
    r"learn": "learning",
    r"approval": "approvals",
    r"schedul": "schedules",
    r"(^|_)(trace|traces|span|spans)(_|$)": "traces",
    r"component|^(get|list|upsert|delete)_configs?$|^(set_current|resolve)_version$"
    r"|^get_(links|dependents)$": "the component registry",
    r"(^|_)schema_version$|^versions_table": "Agno's schema migrations (agno.db.migrations)",
    r"^model_config$": "pydantic's class settings (ferrule's classes are attrs classes)",
    r"agent_os|(^|_)os(_|$)|mcp_oauth|service_account|auth_token": "AgentOS",
    r"(^|_)members?(_|$)": "teams",
}
#: Public names of the subjects' modules whose subject is one of those above, by name.
OUT_OF_SUBJECT_NAMES = {
    "agno.agent:AgentFactory": "AgentOS (an agent built per request)",
    "agno.agent:BaseFactory": "AgentOS (an agent built per request)",
    "agno.agent:FactoryContextRequired": "AgentOS (an agent built per request)",
    "agno.agent:FactoryError": "AgentOS (an agent built per request)",
    "agno.agent:FactoryPermissionError": "AgentOS (an agent built per request)",
    "agno.agent:FactoryValidationError": "AgentOS (an agent built per request)",
    "agno.agent:RequestContext": "AgentOS (an agent built per request)",
    "agno.agent:TrustedContext": "AgentOS (an agent built per request)",
    "agno.agent:RemoteAgent": "AgentOS (an agent served by AgentOS elsewhere)",
    "agno.agent:get_agent_by_id": "the component registry (agents stored as configs)",
    "agno.agent:get_agents": "the component registry (agents stored as configs)",
    "agno.agent.agent:get_agent_by_id": "the component registry (agents stored as configs)",
    "agno.agent.agent:get_agents": "the component registry (agents stored as configs)",
    "agno.db.utils:resolve_db_from_config": "the component registry (a db from a stored config)",
    "agno.exceptions:EvalError": "evals",
    "agno.exceptions:RemoteServerUnavailableError": "AgentOS (an agent served elsewhere)",
}
#: The cookbook's folders in these subjects (``replay_agno.py`` replays every file in them,
#: each file sorted by what it imports: in subject, needing the internet, or not ferrule's
#: subject); what user code takes from ``agno.utils`` is what these import from it.
COOKBOOK_IN_SUBJECT = (
    "cookbook/00_quickstart/",
    "cookbook/02_agents/",
    "cookbook/06_storage/",
    "cookbook/07_knowledge/",
    "cookbook/10_reasoning/",
    "cookbook/11_memory/",
    "cookbook/12_context/",
    "cookbook/90_models/",
    "cookbook/91_tools/",
    "cookbook/99_docs/",
    "cookbook/gemini_3/",
)
#: The cookbook's other folders, each with the subject ferrule does not claim.
COOKBOOK_OUT_OF_SUBJECT = {
    "cookbook/01_demo/": "an AgentOS application",
    "cookbook/02_agents/11_approvals/": "approvals (agno.approval)",
    "cookbook/02_agents/16_skills/": "skills (agno.skills)",
    "cookbook/03_teams/": "teams (agno.team)",
    "cookbook/04_workflows/": "workflows (agno.workflow)",
    "cookbook/05_agent_os/": "AgentOS (agno.os)",
    "cookbook/08_learning/": "learning (agno.learn)",
    "cookbook/09_evals/": "evals (agno.eval)",
    "cookbook/13_filesystem/": "Agno's agent file system (agno.fs)",
    "cookbook/93_components/": "the component registry (agno.registry)",
    "cookbook/data_labeling/": "data labelling environments (agno.environments)",
    "cookbook/environments/": "environments and scorers (agno.environments)",
    "cookbook/examples/": "multi-agent AgentOS applications",
    "cookbook/frameworks/": "other frameworks (LangGraph, DSPy, Claude Agent SDK)",
    "cookbook/integrations/": "third-party services (Discord, Parallel, SurrealDB)",
    "cookbook/observability/": "tracing services",
    "cookbook/scripts/": "the cookbook's own maintenance scripts",
}

#: The operators a class may define that user code reaches through syntax.
DUNDERS = {
    "__call__",
    "__or__",
    "__and__",
    "__invert__",
    "__iter__",
    "__aiter__",
    "__len__",
    "__getitem__",
    "__contains__",
    "__enter__",
    "__exit__",
    "__aenter__",
    "__aexit__",
}


class CheckoutError(SystemExit):
    pass


def package_root(checkout: Path) -> Path:
    """``libs/agno`` of a checkout (or the folder itself when given that)."""
    for candidate in (checkout / "libs" / "agno", checkout):
        if (candidate / "agno" / "__init__.py").is_file():
            return candidate
    raise CheckoutError(
        f"no Agno checkout at {checkout} (expected libs/agno/agno/ there); make one with:\n"
        f"    {CLONE_HINT}\nand pass its path (or set $AGNO_CHECKOUT)"
    )


def checked_version(root: Path) -> str:
    text = (root / "pyproject.toml").read_text() if (root / "pyproject.toml").is_file() else ""
    found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.MULTILINE)
    version = found.group(1) if found else "unknown"
    if version != VERSION:
        raise CheckoutError(
            f"the Agno checkout at {root} is version {version}; this inventory pins {VERSION}:\n"
            f"    git -C <checkout> checkout {TAG}"
        )
    return version


# -- reading one module ---------------------------------------------------------------------


#: A string literal longer than this (or with a line break) is recorded by its length only.
PROSE = 60


def src(node: ast.AST | None) -> str | None:
    if node is None:
        return None
    text = ast.unparse(node)
    return text if len(text) <= 4 * PROSE else text[: 4 * PROSE] + "..."


def literal(node: ast.AST | None) -> Any:
    """``{"literal": value}`` when ``node`` is a literal, else its source."""
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {"expr": ast.unparse(node)}
    if not json_safe(value):
        return {"expr": ast.unparse(node)}
    if is_prose(value):
        # Agno's prompts and messages are its prose, not facts about the API: their size only
        return {"text": True, "length": len(value)}
    return {"literal": value}


def is_prose(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) > PROSE or "\n" in value
    if isinstance(value, list):
        return any(is_prose(v) for v in value)
    if isinstance(value, dict):
        return any(is_prose(v) for v in value.values())
    return False


def json_safe(value: Any) -> bool:
    """Whether JSON keeps ``value`` as it is (a tuple or set would come back a list)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return not (isinstance(value, float) and value != value)
    if isinstance(value, list):
        return all(json_safe(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and json_safe(v) for k, v in value.items())
    return False


def parameters(args: ast.arguments, skip_first: bool) -> list[dict[str, Any]]:
    """The parameters of a ``def``, in order, ``self``/``cls`` left out when asked."""
    out: list[dict[str, Any]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "POSITIONAL_ONLY" if index < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        out.append(param(arg, kind, default))
    if args.vararg is not None:
        out.append(param(args.vararg, "VAR_POSITIONAL", None))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append(param(arg, "KEYWORD_ONLY", kw_default))
    if args.kwarg is not None:
        out.append(param(args.kwarg, "VAR_KEYWORD", None))
    if skip_first and out and out[0]["kind"] != "VAR_POSITIONAL":
        out = out[1:]
    # a parameter named _like_this is the callable's own business, not its API
    return [p for p in out if not p["name"].startswith("_")]


def param(arg: ast.arg, kind: str, default: ast.expr | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": arg.arg, "kind": kind, "annotation": src(arg.annotation)}
    if default is not None:
        entry["default"] = literal(default)
    return entry


def decorator_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        text = ast.unparse(target)
        names.add(text.rsplit(".", 1)[-1])
        if text.endswith(".setter") or text.endswith(".deleter"):
            names.add("setter")
    return names


def function_entry(node: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> dict[str, Any]:
    decorators = decorator_names(node)
    kind = "function"
    if method:
        kind = "method"
        if "property" in decorators or "cached_property" in decorators:
            kind = "property"
        elif "staticmethod" in decorators:
            kind = "staticmethod"
        elif "classmethod" in decorators:
            kind = "classmethod"
    skip = method and kind != "staticmethod"
    entry: dict[str, Any] = {
        "kind": kind,
        "async": isinstance(node, ast.AsyncFunctionDef),
        "params": parameters(node.args, skip),
        "returns": src(node.returns),
    }
    if "abstractmethod" in decorators:
        entry["abstract"] = True
    return entry


def field_default(value: ast.expr | None) -> tuple[bool, Any]:
    """(has a default, the default) of a dataclass or pydantic field's right-hand side."""
    if value is None:
        return False, None
    if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] in (
        "field",
        "Field",
        "PrivateAttr",
    ):
        keywords = {k.arg: k.value for k in value.keywords}
        if "default" in keywords:
            return True, literal(keywords["default"])
        if "default_factory" in keywords:
            return True, {"factory": ast.unparse(keywords["default_factory"])}
        if value.args and ast.unparse(value.func).endswith("Field"):
            first = value.args[0]
            if not (isinstance(first, ast.Constant) and first.value is Ellipsis):
                return True, literal(first)
        return False, None
    return True, literal(value)


def class_kind(node: ast.ClassDef, bases: list[str]) -> str:
    decorators = decorator_names(node)
    short = {b.rsplit(".", 1)[-1].split("[")[0] for b in bases}
    if short & {"Enum", "IntEnum", "StrEnum", "Flag"}:
        return "enum"
    if "dataclass" in decorators:
        return "dataclass"
    if "BaseModel" in short:
        return "pydantic"
    if short & {"TypedDict"}:
        return "typeddict"
    if short & {"Protocol"}:
        return "protocol"
    return "class"


def init_attributes(node: ast.ClassDef) -> dict[str, dict[str, Any]]:
    """The public attributes ``__init__`` sets on ``self``."""
    found: dict[str, dict[str, Any]] = {}
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
            for statement in ast.walk(item):
                targets: list[ast.expr] = []
                annotation = None
                if isinstance(statement, ast.Assign):
                    targets = statement.targets
                elif isinstance(statement, ast.AnnAssign):
                    targets = [statement.target]
                    annotation = src(statement.annotation)
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                        and not target.attr.startswith("_")
                    ):
                        found.setdefault(
                            target.attr, {"kind": "attribute", "annotation": annotation}
                        )
    return found


def class_entry(node: ast.ClassDef) -> dict[str, Any]:
    bases = [ast.unparse(b) for b in node.bases]
    kind = class_kind(node, bases)
    entry: dict[str, Any] = {"kind": "class", "class_kind": kind, "bases": bases}
    fields: list[dict[str, Any]] = []
    members: dict[str, dict[str, Any]] = {}
    enum_members: dict[str, Any] = {}
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            public = not item.name.startswith("_") or item.name in DUNDERS
            if item.name == "__init__":
                entry["init"] = function_entry(item, method=True)["params"]
            elif public:
                if "overload" in decorator_names(item):
                    continue
                found = function_entry(item, method=True)
                if found["kind"] == "method" and "setter" in decorator_names(item):
                    continue
                members[item.name] = found
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            name = item.target.id
            annotation = src(item.annotation)
            is_classvar = annotation is not None and "ClassVar" in annotation
            if kind in ("dataclass", "pydantic", "typeddict") and not is_classvar:
                has_default, default = field_default(item.value)
                field: dict[str, Any] = {"name": name, "annotation": annotation}
                if has_default:
                    field["default"] = default
                if kind == "typeddict":
                    field["default"] = {"absent": True}
                private = name.startswith("_") or (
                    isinstance(item.value, ast.Call)
                    and ast.unparse(item.value.func).endswith("PrivateAttr")
                )
                if kind == "dataclass" and isinstance(item.value, ast.Call):
                    keywords = {k.arg: k.value for k in item.value.keywords}
                    init = keywords.get("init")
                    if isinstance(init, ast.Constant) and init.value is False:
                        field["init"] = False
                if not private or kind == "dataclass":
                    field["public"] = not private
                    fields.append(field)
            elif not name.startswith("_"):
                if kind == "enum":
                    enum_members[name] = literal(item.value)
                else:
                    members[name] = {"kind": "attribute", "annotation": annotation}
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name) and not target.id.startswith("_"):
                    if kind == "enum":
                        enum_members[target.id] = literal(item.value)
                    else:
                        members[target.id] = {"kind": "attribute", "annotation": None}
    if kind == "class":
        for name, found in init_attributes(node).items():
            members.setdefault(name, found)
    if fields:
        entry["fields"] = fields
    if enum_members:
        entry["members"] = enum_members
    entry["methods"] = members
    return entry


def top_level(tree: ast.Module) -> Iterator[ast.stmt]:
    """The module's statements, those inside top-level ``if``/``try`` blocks included
    (``if TYPE_CHECKING:`` blocks excepted: nothing at run time)."""
    for node in tree.body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            yield from top_level(ast.Module(body=node.body + node.orelse, type_ignores=[]))
        elif isinstance(node, ast.Try):
            body = node.body + node.orelse + node.finalbody
            yield from top_level(ast.Module(body=body, type_ignores=[]))
        else:
            yield node


def resolve_import(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def read_module(path: Path, module: str) -> tuple[dict[str, Any], dict[str, str]]:
    """(the module's public names, every name it imports: ``{name: "module:name"}``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    declared: list[str] | None = None
    names: dict[str, dict[str, Any]] = {}
    imported: dict[str, str] = {}
    for node in top_level(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == "__all__":
                    try:
                        declared = [str(n) for n in ast.literal_eval(node.value)]
                    except ValueError:
                        declared = None
                elif isinstance(target, ast.Name):
                    names[target.id] = constant_entry(node.value, None)
                    if names[target.id]["kind"] == "typevar":
                        del names[target.id]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = constant_entry(node.value, src(node.annotation))
        elif isinstance(node, ast.ClassDef):
            names[node.name] = class_entry(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if "overload" not in decorator_names(node):
                names[node.name] = function_entry(node, method=False)
        elif isinstance(node, ast.ImportFrom):
            source = resolve_import(module, is_package, node)
            for alias in node.names:
                if alias.name != "*":
                    imported[alias.asname or alias.name] = f"{source}:{alias.name}"
    # every import, those only for type checking or inside functions too: to resolve the
    # classes an annotation names
    resolvable = dict(imported)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = resolve_import(module, is_package, node)
            for alias in node.names:
                resolvable.setdefault(alias.asname or alias.name, f"{source}:{alias.name}")
    public: dict[str, dict[str, Any]] = {}
    wanted = (
        declared
        if declared is not None
        else [n for n in [*names, *imported] if not n.startswith("_")]
    )
    for name in wanted:
        if name in names:
            public[name] = names[name]
        elif name in imported or (declared is not None and name in resolvable):
            # a re-export of Agno's own: a package's names, or what __all__ declares (a
            # lazily imported one too: its import is for type checkers only)
            target = imported.get(name) or resolvable[name]
            if target.startswith("agno.") and (is_package or declared is not None):
                public[name] = {"kind": "alias", "of": target}
    return public, resolvable


def constant_entry(value: ast.expr | None, annotation: str | None) -> dict[str, Any]:
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("TypeVar"):
        return {"kind": "typevar"}
    entry: dict[str, Any] = {"kind": "constant", "annotation": annotation}
    if value is not None:
        entry["value"] = literal(value)
        if isinstance(value, ast.Name) or isinstance(value, ast.Attribute):
            entry["kind"] = "alias_local"
            entry["of"] = ast.unparse(value)
    return entry


# -- the whole inventory --------------------------------------------------------------------


def module_name(relative: str) -> str:
    dotted = "agno." + relative.removesuffix(".py").replace("/", ".")
    return dotted.removesuffix(".__init__")


def subject_files(root: Path, specs: tuple[str, ...]) -> list[str]:
    files: list[str] = []
    package = root / "agno"
    for spec in specs:
        if spec.endswith("/"):
            for path in sorted((package / spec).rglob("*.py")):
                relative = path.relative_to(package).as_posix()
                if not any(
                    part.startswith("_") and part != "__init__.py" for part in relative.split("/")
                ):
                    files.append(relative)
        elif (package / spec).is_file():
            files.append(spec)
        else:
            raise CheckoutError(f"{spec} is not in this Agno checkout ({package})")
    return files


def utils_imports(root: Path) -> dict[str, set[str]]:
    """``{module: names}`` that the in-subject cookbook imports from ``agno.utils``."""
    checkout = root.parents[1]
    if not (checkout / "cookbook").is_dir():
        raise CheckoutError(f"no cookbook/ in the Agno checkout at {checkout}")
    found: dict[str, set[str]] = {}
    paths = [p for folder in COOKBOOK_IN_SUBJECT for p in (checkout / folder).rglob("*.py")]
    for path in sorted(paths):
        relative = path.relative_to(checkout).as_posix()
        if any(relative.startswith(folder) for folder in COOKBOOK_OUT_OF_SUBJECT):
            continue
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agno.utils"):
                found.setdefault(node.module or "", set()).update(a.name for a in node.names)
    return found


def out_of_subject(name: str) -> str | None:
    for pattern, subject in OUT_OF_SUBJECT.items():
        if re.search(pattern, name):
            return subject
    return None


def build(checkout: Path) -> dict[str, Any]:
    root = package_root(checkout)
    version = checked_version(root)
    modules: dict[str, Any] = {}
    excluded: dict[str, str] = {}
    imports: dict[str, dict[str, str]] = {}
    for subject, specs in SUBJECTS.items():
        files = subject_files(root, specs)
        if subject == "utils":
            for module, wanted in sorted(utils_imports(root).items()):
                relative = module.removeprefix("agno.").replace(".", "/")
                path = root / "agno" / f"{relative}.py"
                if not path.is_file():
                    path = root / "agno" / relative / "__init__.py"
                if not path.is_file():
                    continue
                names, imported = read_module(path, module)
                imports[module] = imported
                kept = {n: v for n, v in names.items() if n in wanted}
                modules[module] = {"subject": subject, "names": kept}
            for relative in files:
                module = module_name(relative)
                names, imports[module] = read_module(root / "agno" / relative, module)
                modules[module] = {"subject": subject, "names": names}
            continue
        for relative in files:
            module = module_name(relative)
            if out_of_subject(module.rsplit(".", 1)[-1]):
                continue
            names, imports[module] = read_module(root / "agno" / relative, module)
            for name in list(names):
                reason = OUT_OF_SUBJECT_NAMES.get(f"{module}:{name}") or out_of_subject(
                    name.lower()
                )
                if reason:
                    excluded[f"{module}:{name}"] = reason
                    del names[name]
            modules[module] = {"subject": subject, "names": names}
    flatten(modules, imports)
    for module in modules.values():
        for name, found in module["names"].items():
            for member in list(found.get("methods", {})):
                reason = out_of_subject(member.lower())
                if reason:
                    excluded[f"{module_of(modules, module)}:{name}.{member}"] = reason
                    del found["methods"][member]
            for param in list(found.get("constructor") or []):
                reason = out_of_subject(param["name"].lower())
                if reason:
                    excluded[f"{module_of(modules, module)}:{name}({param['name']})"] = reason
                    found["constructor"].remove(param)
    return {
        "agno_version": version,
        "tag": TAG,
        "subjects": list(SUBJECTS),
        "modules": modules,
        "out_of_subject": dict(sorted(excluded.items())),
    }


def module_of(modules: dict[str, Any], module: dict[str, Any]) -> str:
    for name, found in modules.items():
        if found is module:
            return name
    raise KeyError(module)


def flatten(modules: dict[str, Any], imports: dict[str, dict[str, str]]) -> None:
    """Each class's constructor, made whole from its Agno bases (dataclass fields in the
    order Python gives them; an explicit ``__init__`` wins); bases named by their home."""
    classes: dict[str, dict[str, Any]] = {}
    for module, found in modules.items():
        for name, entry in found["names"].items():
            if entry["kind"] == "class":
                classes[f"{module}:{name}"] = entry

    def home(module: str, name: str) -> str | None:
        target = imports[module].get(name)
        if target is None:
            return f"{module}:{name}" if f"{module}:{name}" in classes else None
        seen = 0
        while target not in classes and seen < 5:
            mod, _, short = target.partition(":")
            alias = modules.get(mod, {}).get("names", {}).get(short)
            if alias and alias.get("kind") == "alias":
                target = alias["of"]
                seen += 1
            else:
                return target
        return target

    for key, entry in classes.items():
        module = key.split(":")[0]
        entry["bases"] = [home(module, b.split("[")[0]) or b for b in entry["bases"]]

    def constructor(key: str, depth: int = 0) -> list[dict[str, Any]] | None:
        entry = classes.get(key)
        if entry is None or depth > 10:
            return None
        if "init" in entry:
            return entry["init"]
        if entry["class_kind"] in ("dataclass", "pydantic", "typeddict"):
            inherited: list[dict[str, Any]] = []
            for base in reversed(entry["bases"]):
                base_fields = fields_of(base, depth + 1)
                inherited = merge_fields(inherited, base_fields or [])
            merged = merge_fields(inherited, entry.get("fields", []))
            entry["all_fields"] = merged
            style = (
                "KEYWORD_ONLY" if entry["class_kind"] != "dataclass" else "POSITIONAL_OR_KEYWORD"
            )
            params = []
            for field in merged:
                if field.get("init") is False or not field.get("public", True):
                    continue
                item = {"name": field["name"], "kind": style, "annotation": field["annotation"]}
                if "default" in field:
                    item["default"] = field["default"]
                params.append(item)
            return params
        for base in entry["bases"]:
            found = constructor(base, depth + 1)
            if found is not None:
                return found
        return None

    def fields_of(key: str, depth: int) -> list[dict[str, Any]] | None:
        entry = classes.get(key)
        if entry is None:
            return None
        constructor(key, depth)
        return entry.get("all_fields", entry.get("fields"))

    for key, entry in classes.items():
        found = constructor(key)
        if found is not None:
            entry["constructor"] = found
    for module, found in modules.items():
        for entry in found["names"].values():
            callables = [entry] if entry["kind"] == "function" else []
            callables += list(entry.get("methods", {}).values())
            for item in callables:
                refs = returned_classes(item.get("returns"), module, imports, classes, home)
                if refs:
                    item["returns_refs"] = refs
    for entry in classes.values():
        entry.pop("init", None)
        entry.pop("all_fields", None)
        entry.pop("fields", None)
        # an override with the base's very signature is the base's entry, not a new one
        for member, found in list(entry["methods"].items()):
            inherited = inherited_member(classes, entry["bases"], member)
            if inherited is not None:
                inherited.pop("abstract", None)
            if (
                inherited is not None
                and {k: v for k, v in found.items() if k != "abstract"} == inherited
            ):
                del entry["methods"][member]


def returned_classes(
    annotation: str | None,
    module: str,
    imports: dict[str, dict[str, str]],
    classes: dict[str, dict[str, Any]],
    home: Any,
) -> list[str]:
    """The inventoried classes an annotation names (``List[Message]``: Message's id)."""
    if not annotation or annotation.endswith("..."):
        return []
    try:
        tree = ast.parse(annotation.strip("'\""), mode="eval")
    except SyntaxError:
        return []
    refs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            refs += returned_classes(node.value, module, imports, classes, home)
        elif isinstance(node, ast.Name):
            target = home(module, node.id)
            if target in classes and target not in refs:
                refs.append(target)
    return refs


def inherited_member(
    classes: dict[str, dict[str, Any]], bases: list[str], member: str, depth: int = 0
) -> dict[str, Any] | None:
    for base in bases:
        entry = classes.get(base)
        if entry is None or depth > 10:
            continue
        if member in entry["methods"]:
            return dict(entry["methods"][member])
        found = inherited_member(classes, entry["bases"], member, depth + 1)
        if found is not None:
            return found
    return None


def merge_fields(first: list[dict[str, Any]], later: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = list(first)
    for field in later:
        names = [f["name"] for f in out]
        if field["name"] in names:
            out[names.index(field["name"])] = field
        else:
            out.append(field)
    return out


# -- the entries and their statuses ---------------------------------------------------------

STATUS = HERE / "agno_status.json"
#: The statuses an entry may have (see `test_agno_inventory.py`).
STATUSES = ("same", "declined")


def entries(inventory: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every entry of the inventory by id (the ids of the module docstring)."""
    out: dict[str, dict[str, Any]] = {}
    for module, found in inventory["modules"].items():
        subject = found["subject"]
        out[module] = {"type": "module", "subject": subject, "module": module}
        for name, entry in found["names"].items():
            key = f"{module}:{name}"
            out[key] = {"type": entry["kind"], "subject": subject, "module": module, "name": name}
            if entry["kind"] == "function":
                add_params(out, key, entry["params"], subject)
            if entry["kind"] != "class":
                continue
            add_params(out, key, entry.get("constructor") or [], subject)
            for member, value in entry.get("members", {}).items():
                out[f"{key}.{member}"] = {"type": "enum_member", "subject": subject, "value": value}
            for member, item in entry["methods"].items():
                out[f"{key}.{member}"] = {"type": item["kind"], "subject": subject}
                add_params(out, f"{key}.{member}", item.get("params", []), subject)
    return out


def add_params(
    out: dict[str, dict[str, Any]], owner: str, params: list[dict[str, Any]], subject: str
) -> None:
    for index, item in enumerate(params):
        out[f"{owner}({item['name']})"] = {
            "type": "param",
            "subject": subject,
            "owner": owner,
            "index": index,
        }


def load_statuses(path: Path = STATUS) -> dict[str, Any]:
    statuses: dict[str, Any] = json.loads(path.read_text())
    return statuses


def status_of(value: Any) -> str:
    return value if isinstance(value, str) else str(value.get("status"))


def summary(inventory: dict[str, Any], statuses: dict[str, Any]) -> list[tuple[str, ...]]:
    """The docs' table: (subject, entries, same, declined) per subject, then all."""
    counts: dict[str, dict[str, int]] = {}
    for key, entry in entries(inventory).items():
        row = counts.setdefault(entry["subject"], dict.fromkeys(("all", *STATUSES), 0))
        row["all"] += 1
        status = status_of(statuses.get(key, "none"))
        if status in row:
            row[status] += 1
    rows = []
    total = dict.fromkeys(("all", *STATUSES), 0)
    for subject in inventory["subjects"]:
        row = counts.get(subject, dict.fromkeys(("all", *STATUSES), 0))
        total = {k: total[k] + row[k] for k in total}
        rows.append((subject, *(str(row[k]) for k in ("all", *STATUSES))))
    rows.append(("all", *(str(total[k]) for k in ("all", *STATUSES))))
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", nargs="?", default=os.environ.get("AGNO_CHECKOUT"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not args.checkout:
        raise CheckoutError(
            "give the path of an Agno checkout (or set $AGNO_CHECKOUT); make one with:\n"
            f"    {CLONE_HINT}"
        )
    inventory = build(Path(args.checkout))
    args.out.write_text(json.dumps(inventory, indent=1, sort_keys=True) + "\n")
    count = sum(len(m["names"]) for m in inventory["modules"].values())
    print(
        f"{args.out}: {len(inventory['modules'])} modules, {count} public names, "
        f"{len(entries(inventory))} entries"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
