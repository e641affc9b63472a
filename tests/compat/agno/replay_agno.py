"""Replay Agno's own cookbook files against ferrule, unchanged but for the package name.

    .nox/tests/bin/python tests/compat/agno/replay_agno.py [-j N] [--timeout S] [--at REV] [PREFIX ...]

The files are read from the mirror of agno-agi/agno (``$AGNO_MIRROR``, default
``/work/.mirror/agno-agi+agno/repo``) at ``HEAD``: those under `SELECTED` (the subjects
ferrule covers), or only those under the PREFIXes given. Each is written to a fresh
temporary folder with ``agno`` replaced by ``ferrule`` and run there as a script
(``python file.py``, ``__name__ == "__main__"``) in its own interpreter, with a timeout,
answering ``y`` to any question it asks on stdin, against:

- one loopback server of its own speaking every provider's wire: OpenAI's Chat Completions
  and Responses, Anthropic's Messages, Gemini's ``streamGenerateContent``, xAI's, Ollama's
  and vLLM's OpenAI-compatible ``/v1``, and the embeddings APIs of OpenAI and Gemini. It is
  found through the variables the providers read (``OPENAI_BASE_URL``,
  ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, ``XAI_BASE_URL``, ``OLLAMA_HOST``,
  ``VLLM_BASE_URL``), with a test key in each provider's key variable. It acts as a model
  would: when a request offers tools and the turn holds no tool result yet, it calls the
  first tool offered with arguments made from that tool's JSON schema; when a request asks
  for a JSON schema (``response_format``, ``text.format``, Anthropic's ``output_config``,
  Gemini's ``responseSchema``), it answers a JSON document of that schema; otherwise a short
  text. Embeddings are words hashed into a vector of the size asked for.
- a throwaway PostgreSQL with pgvector (``ferrule_kit.testing.postgres``) on
  ``localhost:5532`` with role and database ``ai``, where Agno's cookbook expects its
  Docker container, when a selected file names ``localhost:5532``;
- ``$FERRULE_MODEL_ALIASES`` mapping the cookbook's llama.cpp model ids to the offline
  SmolLM2 (ferrule's ``LlamaCpp`` runs llama.cpp in-process).

``--at REV`` runs ferrule's code as committed at REV (kernel, sdk and plugins exported to a
temporary folder, first on each program's ``PYTHONPATH``) rather than the working tree's:
the numbers of a commit, whatever is being edited beside it.

A file passes when it exits 0 with no traceback printed and its server saw no malformed
request. Files that need the internet (a web search or data toolkit, a public URL in the
code) are listed as such and not counted; so are files whose subject ferrule does not cover
(teams, workflows, AgentOS, other providers and stores), each with its reason. The summary
counts per folder. This file is a tool, not a test (pytest does not collect it); it exits 0
with a message when the mirror is absent.
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs
from ferrule_kit.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.messages import ToolCall
from ferrule_kit.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply
from ferrule_openai.testing import ResponsesCall, responses_reply

MIRROR = Path(os.environ.get("AGNO_MIRROR", "/work/.mirror/agno-agi+agno/repo"))
REPOSITORY = Path(__file__).resolve().parents[3]
COOKBOOK = "cookbook/"

#: The folders replayed: the subjects ferrule covers.
SELECTED = (
    "cookbook/00_quickstart/",
    "cookbook/02_agents/01_quickstart/",
    "cookbook/02_agents/02_input_output/",
    "cookbook/02_agents/03_context_management/",
    "cookbook/02_agents/04_tools/",
    "cookbook/02_agents/05_state_and_session/",
    "cookbook/02_agents/06_memory_and_learning/",
    "cookbook/02_agents/07_knowledge/",
    "cookbook/02_agents/08_guardrails/",
    "cookbook/02_agents/09_hooks/",
    "cookbook/02_agents/10_human_in_the_loop/",
    "cookbook/02_agents/13_reasoning/",
    "cookbook/02_agents/15_dependencies/",
    "cookbook/06_storage/0",
    "cookbook/06_storage/examples/",
    "cookbook/06_storage/in_memory/",
    "cookbook/06_storage/sqlite/",
    "cookbook/06_storage/postgres/",
    "cookbook/07_knowledge/01_getting_started/",
    "cookbook/07_knowledge/02_building_blocks/",
    "cookbook/07_knowledge/04_advanced/",
    "cookbook/90_models/openai/",
    "cookbook/90_models/anthropic/",
    "cookbook/90_models/google/gemini/",
    "cookbook/90_models/xai/",
    "cookbook/90_models/ollama/",
    "cookbook/90_models/vllm/",
    "cookbook/90_models/llama_cpp/",
    "cookbook/91_tools/tool_decorator/",
    "cookbook/91_tools/tool_hooks/",
    "cookbook/91_tools/other/",
)

#: The folders not replayed, one reason each.
EXCLUDED = {
    "cookbook/01_demo/": "an AgentOS application (a web service with Slack/Notion/git agents)",
    "cookbook/02_agents/11_approvals/": "Agno's approval store (agno.approval): not in ferrule",
    "cookbook/02_agents/12_multimodal/": "public images, audio and video fetched by URL",
    "cookbook/02_agents/14_advanced/": "culture, compression, cancellation, background runs",
    "cookbook/02_agents/16_skills/": "Agno's skills folders: not in ferrule",
    "cookbook/02_agents/17_fallback_models/": "Agno's fallback-model API: ferrule's differs",
    "cookbook/02_agents/18_checkpointing/": "Agno's checkpoint endpoints: not in ferrule",
    "cookbook/02_agents/19_regenerate/": "Agno's regenerate: not in ferrule",
    "cookbook/02_agents/20_time_travel/": "Agno's continue_from / fork_run: not in ferrule",
    "cookbook/02_agents/21_fork_session/": "Agno's fork_session: not in ferrule",
    "cookbook/03_teams/": "teams (agno.team): not in ferrule",
    "cookbook/04_workflows/": "workflows (agno.workflow): not in ferrule",
    "cookbook/05_agent_os/": "AgentOS (agno.os): not in ferrule",
    "cookbook/06_storage/": "(the rest) DynamoDB, Firestore, GCS, JSON files, Mongo, MySQL, "
    "Redis, SingleStore, SurrealDB, Valkey: stores ferrule does not ship",
    "cookbook/07_knowledge/03_production/": "remote sources, AgentOS and SSRF host lists",
    "cookbook/07_knowledge/05_integrations/": "third-party vector stores and services",
    "cookbook/07_knowledge/09_archive/": "archived examples (Agno's own, not maintained)",
    "cookbook/08_learning/": "Agno's LearningMachine (agno.learn): not in ferrule",
    "cookbook/09_evals/": "Agno's evals (agno.eval): not in ferrule",
    "cookbook/10_reasoning/": "reasoning models and agents of providers ferrule does not ship",
    "cookbook/90_models/": "(the rest) providers ferrule does not ship",
    "cookbook/90_models/anthropic/skills/": "Anthropic's hosted Agent Skills (a beta API); "
    "they import file_download_helper, which the cookbook does not ship",
    "cookbook/91_tools/": "(the rest) third-party toolkits, almost all on the internet",
    "cookbook/92_integrations/": "third-party services",
    "cookbook/93_components/": "Agno's component registry: not in ferrule",
}

#: Agno modules whose subject ferrule does not cover: a selected file importing one is
#: listed as such, not run.
NOT_COVERED = {
    "agno.team": "teams",
    "agno.workflow": "workflows",
    "agno.os": "AgentOS",
    "agno.eval": "evals",
    "agno.learn": "LearningMachine",
    "agno.culture": "culture",
    "agno.approval": "approvals",
    "agno.skills": "skills",
    "agno.tools.mcp": "MCP servers started with npx/uvx from the internet",
}
#: Families where only some members are ferrule's: the others are not covered.
COVERED_MEMBERS = {
    "agno.models": {
        "openai",
        "anthropic",
        "google",
        "xai",
        "ollama",
        "vllm",
        "llama_cpp",
        "base",
        "message",
        "response",
        "metrics",
    },
    "agno.db": {"sqlite", "postgres", "in_memory", "base", "schemas"},
    "agno.vectordb": {"pgvector", "sqlite_vec", "search", "distance"},
    "agno.knowledge.embedder": {"openai", "google", "sentence_transformer"},
}
#: Toolkits that reach a service on the internet when the model calls them.
INTERNET_TOOLS = {
    "agno.tools.websearch",
    "agno.tools.duckduckgo",
    "agno.tools.yfinance",
    "agno.tools.hackernews",
    "agno.tools.tavily",
    "agno.tools.exa",
    "agno.tools.googlesearch",
    "agno.tools.newspaper4k",
    "agno.tools.wikipedia",
    "agno.tools.arxiv",
    "agno.tools.firecrawl",
    "agno.tools.serpapi",
    "agno.tools.baidusearch",
    "agno.tools.openweather",
    "agno.tools.dalle",
    "agno.tools.openai",
    "agno.tools.models",
    "agno.tools.website",
    "agno.tools.crawl4ai",
    "agno.tools.jina",
    "agno.tools.parallel",
    "agno.tools.github",
    "agno.tools.slack",
    "agno.tools.email",
    "agno.tools.gmail",
    "agno.tools.youtube",
    "agno.tools.reddit",
    "agno.tools.x",
    "agno.tools.apify",
    "agno.tools.brave",
    "agno.tools.linkup",
    "agno.tools.perplexity",
    "agno.tools.valyu",
    "agno.tools.searxng",
    "agno.tools.financial_datasets",
    "agno.tools.openbb",
    "agno.tools.zendesk",
    "agno.tools.nano_banana",
    "agno.tools.mem0",
    "agno.tools.zep",
    "agno.tools.e2b",
    "agno.tools.daytona",
}
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}
#: Model keywords that turn on a provider's own web search or cloud (Vertex AI).
SERVER_SIDE_SEARCH = {"search", "grounding", "search_parameters", "vertexai_search", "vertexai"}
#: Folders given more time than ``--timeout``: their model runs on this machine's CPU.
SLOW_FOLDERS = {"cookbook/90_models/llama_cpp/": 300.0}

#: Where Agno's cookbook expects its PostgreSQL (its docker-compose's pgvector container).
POSTGRES_PORT = 5532
LLAMA_CPP_IDS = ("ggml-org/gpt-oss-20b-GGUF", "ggml-org/Qwen3-8B-GGUF")
TEST_KEY = "sk-agno-replay-0123456789"
KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "VLLM_API_KEY",
)
ERROR_LINE = re.compile(r"^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt|Warning)\b.*")


# -- the model the loopback server plays ----------------------------------------------------


def example_of(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A JSON value of ``schema`` (enough of JSON Schema for tools and output schemas)."""
    if not isinstance(schema, dict) or depth > 8:
        return "example"
    defs = {**defs, **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return example_of(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [s for s in schema.get(key, []) if s.get("type") != "null"]
        if options:
            return example_of(options[0], defs, depth + 1)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    kind = str(kind).lower()  # Gemini spells the types in capitals
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: example_of(sub, defs, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        return [example_of(schema.get("items", {}), defs, depth + 1)]
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if schema.get("format") == "date-time":
        return "2026-01-01T00:00:00Z"
    if schema.get("format") == "date":
        return "2026-01-01"
    return "example"


def hashed_embedding(text: str, size: int) -> list[float]:
    """Words hashed into ``size`` buckets, normalised: texts sharing words are near."""
    vector = [0.0] * size
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % size] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    if not any(vector):
        vector[0] = 1.0
    return [v / norm for v in vector]


def openai_dimension(model: str) -> int:
    return 3072 if "large" in model else 1536


def tool_call(name: str, schema: Any) -> ToolCall:
    return ToolCall(f"call_{uuid.uuid4().hex[:8]}", name, example_of(schema, {}))


def answer(request: RecordedRequest) -> Reply:
    """The reply a model would give to ``request`` (see the module docstring)."""
    body = request.json if request.body else {}
    path = request.path
    if path.endswith("/embeddings"):
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else inputs
        size = body.get("dimensions") or openai_dimension(str(body.get("model", "")))
        data = [
            {"object": "embedding", "index": i, "embedding": hashed_embedding(str(text), size)}
            for i, text in enumerate(inputs)
        ]
        usage = {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}
        return Reply.json({"object": "list", "data": data, "model": body.get("model"), **usage})
    if path.endswith(":batchEmbedContents") or path.endswith(":embedContent"):
        requests = body.get("requests", [body])
        size = 768 if "text-embedding-004" in path else 3072
        vectors = [
            {
                "values": hashed_embedding(
                    " ".join(p.get("text", "") for p in r.get("content", {}).get("parts", [])),
                    r.get("outputDimensionality") or size,
                )
            }
            for r in requests
        ]
        if path.endswith(":embedContent"):
            return Reply.json({"embedding": vectors[0]})
        return Reply.json({"embeddings": vectors})
    if path.endswith("/responses"):
        return responses_answer(body)
    if path.endswith("/messages"):
        return anthropic_answer(body)
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return gemini_answer(body)
    return chat_answer(body)


def chat_answer(body: dict[str, Any]) -> Reply:
    messages = body.get("messages", [])
    turn = messages[_last_index(messages, lambda m: m.get("role") == "user") :]
    tools = body.get("tools") or []
    if (
        tools
        and not any(m.get("role") == "tool" for m in turn)
        and body.get("tool_choice") != "none"
    ):
        function = tools[0].get("function", {})
        return reply(OPENAI, tool_calls=(tool_call(function["name"], function.get("parameters")),))
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return reply(OPENAI, json.dumps(example_of(fmt["json_schema"].get("schema"), {})))
    if fmt.get("type") == "json_object":
        return reply(OPENAI, json.dumps(example_of(_schema_in(messages), {})))
    return reply(OPENAI, "Answered by the loopback model.")


def responses_answer(body: dict[str, Any]) -> Reply:
    items = body.get("input", [])
    items = [{"role": "user", "content": items}] if isinstance(items, str) else items
    turn = items[_last_index(items, lambda i: i.get("role") == "user") :]
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    if tools and not any(i.get("type") == "function_call_output" for i in turn):
        call = tool_call(tools[0]["name"], tools[0].get("parameters"))
        return responses_reply(calls=[ResponsesCall(call.name, call.arguments)])
    fmt = (body.get("text") or {}).get("format") or {}
    if fmt.get("type") == "json_schema":
        return responses_reply(json.dumps(example_of(fmt.get("schema"), {})))
    if fmt.get("type") == "json_object":
        return responses_reply(json.dumps(example_of(_schema_in(items), {})))
    return responses_reply("Answered by the loopback model.")


def anthropic_answer(body: dict[str, Any]) -> Reply:
    messages = body.get("messages", [])
    last_user = messages[-1] if messages else {}
    content = last_user.get("content")
    has_result = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
    tools = [t for t in body.get("tools") or [] if "input_schema" in t]
    if tools and not has_result:
        return reply(ANTHROPIC, tool_calls=(tool_call(tools[0]["name"], tools[0]["input_schema"]),))
    fmt = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
    if fmt.get("type") == "json_schema":
        return reply(ANTHROPIC, json.dumps(example_of(fmt.get("schema"), {})))
    return reply(ANTHROPIC, "Answered by the loopback model.")


def gemini_answer(body: dict[str, Any]) -> Reply:
    contents = body.get("contents", [])
    last = contents[-1] if contents else {}
    has_result = any("functionResponse" in p for p in last.get("parts", []))
    declarations = [
        d for t in body.get("tools") or [] for d in t.get("functionDeclarations", []) or []
    ]
    if declarations and not has_result:
        first = declarations[0]
        schema = first.get("parameters") or first.get("parametersJsonSchema")
        return reply(GEMINI, tool_calls=(tool_call(first["name"], schema),))
    config = body.get("generationConfig") or {}
    schema = config.get("responseSchema") or config.get("responseJsonSchema")
    if schema:
        return reply(GEMINI, json.dumps(example_of(schema, {})))
    return reply(GEMINI, "Answered by the loopback model.")


def _last_index(items: list[Any], is_user: Any) -> int:
    indexes = [i for i, item in enumerate(items) if isinstance(item, dict) and is_user(item)]
    return indexes[-1] if indexes else 0


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def _schema_in(messages: Any) -> Any:
    """The JSON schema a JSON-mode prompt describes (the largest parseable object that has
    ``properties``), else an empty one."""
    text = "\n".join(_texts(messages))
    decoder = json.JSONDecoder()
    best: Any = {}
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict) and "properties" in value:
            if len(json.dumps(value)) > len(json.dumps(best)):
                best = value
    return best


# -- choosing and classifying the files -----------------------------------------------------


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(MIRROR), *args], check=True, capture_output=True, text=True
    ).stdout


def selected_files(prefixes: tuple[str, ...]) -> list[str]:
    names = git("ls-tree", "-r", "--name-only", "HEAD", COOKBOOK).split("\n")

    def chosen(name: str) -> bool:
        # under a chosen prefix, and not under an excluded folder inside it
        chosen_by = [p for p in prefixes if name.startswith(p)]
        if not chosen_by:
            return False
        return not any(name.startswith(e) and len(e) > max(map(len, chosen_by)) for e in EXCLUDED)

    return sorted(
        n for n in names if n.endswith(".py") and not n.endswith("__init__.py") and chosen(n)
    )


def imported_modules(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def not_run_reason(source: str) -> tuple[str, str] | None:
    """``("internet" | "not covered", why)`` for a file not to run, else None."""
    tree = ast.parse(source)
    modules = imported_modules(tree)
    for module in sorted(modules):
        for prefix, subject in NOT_COVERED.items():
            if module == prefix or module.startswith(prefix + "."):
                return "not covered", f"{subject} ({module})"
        for family, members in COVERED_MEMBERS.items():
            if module.startswith(family + "."):
                member = module[len(family) + 1 :].split(".")[0]
                if member not in members:
                    return "not covered", f"{family}.{member} is not ferrule's"
    for module in sorted(modules):
        for toolkit in INTERNET_TOOLS:
            if module == toolkit or module.startswith(toolkit + "."):
                return "internet", f"toolkit {toolkit}"
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in SERVER_SIDE_SEARCH:
            if not (isinstance(node.value, ast.Constant) and not node.value.value):
                return "internet", f"the provider's server-side {node.arg}="
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.strip()
            if re.match(r"^web_(search|fetch)_\d+$", value):
                return "internet", f"the provider's server-side {value} tool"
            if re.match(r"^(https?|s3|gs)://", value):
                host = urlparse(value).hostname or ""
                if host not in LOCAL_HOSTS:
                    return "internet", f"fetches {value[:60]}"
    return None


def as_ferrule(source: str) -> str:
    return re.sub(r"\bagno\b", "ferrule", source)


# -- running --------------------------------------------------------------------------------


@attrs.define
class Outcome:
    path: str
    status: str  # pass | fail | internet | not covered | timeout
    detail: str = ""
    requests: int = 0
    seconds: float = 0.0


def first_error(output: str) -> str:
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    if "Traceback (most recent call last)" in output:
        tail = output[output.rindex("Traceback (most recent call last)") :].splitlines()
        for line in tail[1:]:
            if ERROR_LINE.match(line) and not line.startswith(" "):
                return line.strip()[:240]
    for line in lines:
        if re.search(r"\b(ERROR|Error|error)\b", line):
            return line.strip()[:240]
    return (lines[-1] if lines else "(no output)")[:240]


def sources_at(rev: str, folder: Path) -> list[str]:
    """ferrule's import roots as committed at ``rev``, exported under ``folder``."""

    def here(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(REPOSITORY), *args], check=True, capture_output=True, text=True
        ).stdout

    plugins = [f"{p}/src" for p in here("ls-tree", "-d", "--name-only", rev, "plugins/").split()]
    roots = ["kernel/src", "sdk/kit/src", "sdk/ferrule/src", *plugins]
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", rev, "--", *roots],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    # what a package's build put beside its code (SmolLM2's weights): linked, not in git
    built = here("ls-files", "--others", "--ignored", "--exclude-standard", "--", *roots)
    for name in built.split("\n"):
        if name and "__pycache__" not in name and not (folder / name).exists():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).symlink_to(REPOSITORY / name)
    return [str(folder / root) for root in roots if (folder / root).is_dir()]


def run_file(path: str, timeout: float, python_path: list[str]) -> Outcome:
    source = git("show", f"HEAD:{path}")
    for folder, seconds in SLOW_FOLDERS.items():
        if path.startswith(folder):
            timeout = max(timeout, seconds)
    reason = not_run_reason(source)
    if reason is not None:
        return Outcome(path, reason[0], reason[1])
    with tempfile.TemporaryDirectory(prefix="agno-replay-") as folder:
        script = Path(folder) / Path(path).name
        script.write_text(as_ferrule(source))
        # siblings a file imports (``from db import ...``) come along, renamed the same way
        for sibling in git("ls-tree", "--name-only", "HEAD", str(Path(path).parent) + "/").split():
            if sibling.endswith(".py") and sibling != path:
                (Path(folder) / Path(sibling).name).write_text(
                    as_ferrule(git("show", f"HEAD:{sibling}"))
                )
        server = LoopbackServer()
        server.start_in_thread()
        server.script(*[answer] * 10_000)
        env = dict(os.environ)
        for variable in ("GEMINI_BASE_URL", "OPENAI_ORGANIZATION", "http_proxy", "https_proxy"):
            env.pop(variable, None)
        env.update(
            {
                "OPENAI_BASE_URL": server.url + "/v1",
                "ANTHROPIC_BASE_URL": server.url,
                "GOOGLE_GEMINI_BASE_URL": server.url,
                "XAI_BASE_URL": server.url + "/v1",
                "OLLAMA_HOST": server.url,
                "VLLM_BASE_URL": server.url + "/v1",
                "NO_PROXY": "127.0.0.1,localhost",
                "FERRULE_MODEL_ALIASES": ",".join(
                    f"{i}={DEFAULT_LOCAL_MODEL}" for i in LLAMA_CPP_IDS
                ),
                "PYTHONUNBUFFERED": "1",
                "COLUMNS": "120",
            }
        )
        env.update(dict.fromkeys(KEY_VARIABLES, TEST_KEY))
        if python_path:
            env["PYTHONPATH"] = os.pathsep.join([*python_path, env.get("PYTHONPATH", "")])
        start = time.monotonic()
        try:
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=folder,
                env=env,
                input="y\n" * 200,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as expired:
            server.stop_in_thread()
            out = (expired.stdout or b"").decode() if isinstance(expired.stdout, bytes) else ""
            return Outcome(
                path, "timeout", f"no end in {timeout:.0f}s " + first_error(out), 0, timeout
            )
        finally:
            seconds = time.monotonic() - start
        server.stop_in_thread()
        output = done.stdout + "\n" + done.stderr
        requests = len([r for r in server.requests if r.method == "POST"])
        if done.returncode != 0 or "Traceback (most recent call last)" in output:
            return Outcome(path, "fail", first_error(done.stderr or output), requests, seconds)
        if server.problems:
            return Outcome(
                path, "fail", "bad request: " + server.problems[0][:200], requests, seconds
            )
        return Outcome(path, "pass", "", requests, seconds)


def postgres_for(files: list[str]) -> Iterator[str | None]:
    """A PostgreSQL on localhost:5532 with Agno's role and database, when a file needs one."""
    needs = any(str(POSTGRES_PORT) in git("show", f"HEAD:{f}") for f in files)
    if not needs:
        yield None
        return
    import psycopg
    from ferrule_kit.testing.postgres import start_postgres

    try:
        server = start_postgres(port=POSTGRES_PORT)
    except RuntimeError as exc:  # another replay, or Agno's own container, holds the port
        raise SystemExit(
            f"the cookbook's PostgreSQL needs 127.0.0.1:{POSTGRES_PORT}: {exc}"
        ) from None
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("CREATE ROLE ai LOGIN SUPERUSER PASSWORD 'ai'")
            conn.execute("CREATE DATABASE ai OWNER ai")
        with psycopg.connect(server.dsn("ai"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield server.dsn("ai")
    finally:
        server.stop()


def folder_of(path: str) -> str:
    parts = path.split("/")
    return "/".join(parts[1:-1]) if len(parts) > 2 else "."


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefixes", nargs="*", help="only the files under these paths")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--at", metavar="REV", help="run ferrule as committed at REV")
    args = parser.parse_args(argv)
    if not (MIRROR / "HEAD").exists() and not (MIRROR / ".git").exists():
        print(f"skipped: no mirror of agno-agi/agno at {MIRROR} (set $AGNO_MIRROR)")
        return 0
    prefixes = tuple(args.prefixes) or SELECTED
    files = selected_files(prefixes)
    print(f"agno cookbook at {git('rev-parse', 'HEAD').strip()[:12]}: {len(files)} files")
    for folder, reason in EXCLUDED.items():
        print(f"not replayed: {folder} — {reason}")
    outcomes: list[Outcome] = []
    exported = tempfile.TemporaryDirectory(prefix="ferrule-at-")
    python_path = sources_at(args.at, Path(exported.name)) if args.at else []
    if args.at:
        print(f"ferrule as committed at {args.at}")
    lock = threading.Lock()
    postgres = postgres_for(files)
    next(postgres)
    try:

        def one(path: str) -> Outcome:
            outcome = run_file(path, args.timeout, python_path)
            with lock:
                mark = {"pass": "PASS", "fail": "FAIL", "timeout": "TIME"}.get(
                    outcome.status, "----"
                )
                note = f" [{outcome.status}]" if mark == "----" else ""
                detail = f" :: {outcome.detail}" if outcome.detail else ""
                print(
                    f"{mark} {outcome.path[len(COOKBOOK) :]}"
                    f" ({outcome.requests} req, {outcome.seconds:.1f}s){note}{detail}",
                    flush=True,
                )
            return outcome

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            outcomes = list(pool.map(one, files))
    finally:
        postgres.close()
        exported.cleanup()
    per_folder: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for outcome in outcomes:
        status = "fail" if outcome.status == "timeout" else outcome.status
        per_folder[folder_of(outcome.path)][status] += 1
    print("\nfolder                                      pass  fail  internet  not-covered")
    total: collections.Counter[str] = collections.Counter()
    for folder in sorted(per_folder):
        counts = per_folder[folder]
        total.update(counts)
        print(
            f"{folder:42} {counts['pass']:5} {counts['fail']:5} {counts['internet']:9}"
            f" {counts['not covered']:12}"
        )
    print(
        f"{'TOTAL':42} {total['pass']:5} {total['fail']:5} {total['internet']:9}"
        f" {total['not covered']:12}"
    )
    run = total["pass"] + total["fail"]
    print(f"\n{total['pass']} of {run} runnable files pass")
    return 0 if total["fail"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
