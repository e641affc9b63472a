"""Replay Agno's own cookbook files against ferrule, unchanged but for the package name.

    .nox/tests/bin/python tests/compat/agno/replay_agno.py --agno AGNO_CHECKOUT \
        [-j N] [--timeout S] [--at REV] [--list] [--json OUT] [PREFIX ...]

``AGNO_CHECKOUT`` (or ``$AGNO_CHECKOUT``) is a checkout of agno-agi/agno at the tag the
inventory pins (``git clone https://github.com/agno-agi/agno && git -C agno checkout
v2.9.0``); without one the tool stops, saying how to make it. It replays every file of the
cookbook's folders in ferrule's subjects (`inventory_agno.COOKBOOK_IN_SUBJECT`; the other
folders are listed with their subject), or only those under the PREFIXes given. Each file is
sorted first: one that imports or turns on a subject ferrule does not claim (teams,
workflows, AgentOS, culture...), a provider, store, reader or toolkit ferrule does not ship,
a package ferrule does not install (or that does not import here), or a local server of its
own is *not covered*; one that needs the internet (a web toolkit or reader, a public URL in
its code, a cloud SDK, a provider's server-side search) is *internet*; one that fails as
shipped, in Agno too (it reads a file Agno's repository does not have, listed in
`NOT_SHIPPED` and checked against the checkout) is *not shipped*; the rest are *runnable*,
and run. ``--list`` sorts without running. Each runnable file is laid out in a fresh
temporary folder that stands for Agno's repository (`Checkout.lay_out`: the file and the
modules beside it with the package name ``agno`` replaced by ``ferrule``, the rest linked)
and run from its root as Agno's cookbook is (``python cookbook/.../file.py``, ``__name__ ==
"__main__"``), in its own interpreter, with a timeout, answering ``y`` to any question it
asks on stdin, against:

- one loopback server of its own speaking every provider's wire: OpenAI's Chat Completions
  and Responses, Anthropic's Messages, Gemini's ``streamGenerateContent``, xAI's, Ollama's
  and vLLM's OpenAI-compatible ``/v1``, and the embeddings APIs of OpenAI and Gemini. It is
  found through the variables the providers read (``OPENAI_BASE_URL``,
  ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``, ``XAI_BASE_URL``, ``OLLAMA_HOST``,
  ``VLLM_BASE_URL``), with a test key in each provider's key variable. It acts as a model
  would: when a request offers tools and the turn holds no tool result yet, it calls the
  first tool offered with arguments made from that tool's JSON schema; when a request asks
  for a JSON schema (``response_format``, ``text.format``, Anthropic's ``output_config``,
  Gemini's ``responseSchema``), it answers a JSON document of that schema; when it asks for
  audio or images (``modalities``, ``responseModalities``), it answers a short tone and a
  tiny picture (``loopback_media.py``); when it carries a provider's own tools (code
  execution, web search), it answers as the provider does having run them
  (``loopback_builtin_tools.py``); otherwise a short text. A background response of OpenAI's
  Responses API is queued and polled as OpenAI's are (``loopback_background.py``), and
  Gemini's Interactions API keeps its interactions as Google's does
  (``loopback_interactions.py``).
  Embeddings are words hashed into a vector of the size asked for.
- a throwaway PostgreSQL with pgvector (``ferrule_kit.testing.postgres``) on
  ``localhost:5532`` with role and database ``ai``, where Agno's cookbook expects its
  Docker container, when a selected file names ``localhost:5532``;
- ``$FERRULE_MODEL_ALIASES`` mapping the cookbook's llama.cpp model ids to the offline
  SmolLM2 (ferrule's ``LlamaCpp`` runs llama.cpp in-process).

``--at REV`` runs ferrule's code as committed at REV (kernel, sdk and plugins exported to a
temporary folder, first on each program's ``PYTHONPATH``) rather than the working tree's:
the numbers of a commit, whatever is being edited beside it.

A file passes when it exits 0 with no traceback and no failed run printed (the ``Error``
panel of ``print_response``) and its server saw no malformed request. The summary counts per folder (two levels under ``cookbook/``); ``--json`` keeps
each file's outcome. This file is a tool, not a test (pytest does not collect it).
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import attrs
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply
from ferrule_openai.testing import ResponsesCall, responses_reply

sys.path.insert(0, str(Path(__file__).resolve().parent))
import inventory_agno  # beside this file: the subjects and the cookbook folders
from loopback_background import background_answer  # beside it: Responses' background mode
from loopback_builtin_tools import builtin_tools_answer  # beside it: providers' own tools
from loopback_interactions import interactions_answer  # beside it: Gemini's Interactions API
from loopback_media import media_answer  # beside it: replies in audio and images

REPOSITORY = Path(__file__).resolve().parents[3]
COOKBOOK = "cookbook/"
#: Where the file list of the in-subject cookbook comes from: the inventory's own lists.
SELECTED = inventory_agno.COOKBOOK_IN_SUBJECT
EXCLUDED = inventory_agno.COOKBOOK_OUT_OF_SUBJECT

#: Agno modules whose subject ferrule does not claim: a file importing one is listed as
#: such, not run.
NOT_COVERED = {
    "agno.team": "teams",
    "agno.run.team": "teams",
    "agno.workflow": "workflows",
    "agno.run.workflow": "workflows",
    "agno.run.approval": "approvals",
    "agno.os": "AgentOS",
    "agno.eval": "evals",
    "agno.learn": "learning",
    "agno.culture": "culture",
    "agno.approval": "approvals",
    "agno.skills": "skills",
    "agno.registry": "the component registry",
    "agno.fs": "Agno's agent file system",
    "agno.scheduler": "schedules",
    "agno.client": "AgentOS clients",
    "agno.integrations": "third-party services",
    "agno.tools.mcp": "MCP servers started with npx/uvx from the internet",
}
#: Families of modules where only the inventory's members are ferrule's (a provider, a
#: store, a reader or a toolkit ferrule does not ship): the others are not covered.
FAMILIES = (
    "agno.models",
    "agno.db",
    "agno.vectordb",
    "agno.knowledge.reader",
    "agno.knowledge.embedder",
    "agno.knowledge.chunking",
    "agno.knowledge.reranker",
    "agno.context",
    "agno.guardrails",
    "agno.reasoning",
    "agno.tools",
)
#: Members of those families that ferrule has although the inventory does not list them
#: (their subject is knowledge's own page, docs/memory.md).
ALSO_COVERED = (
    "agno.knowledge.embedder.openai",
    "agno.knowledge.embedder.google",
    "agno.knowledge.embedder.sentence_transformer",
    "agno.knowledge.embedder.base",
    "agno.vectordb.sqlite_vec",
    "agno.tools.duckduckgo",
    "agno.models.utils",
)
#: Functions that download from the internet when called, and what.
INTERNET_FUNCTIONS = {
    "download_knowledge_filters_sample_data": "Agno's sample files, from Agno's servers",
}
#: Toolkits and readers that reach a service on the internet when used.
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
    "agno.knowledge.reader.website_reader",
    "agno.knowledge.reader.firecrawl_reader",
    "agno.knowledge.reader.arxiv_reader",
    "agno.knowledge.reader.youtube_reader",
    "agno.knowledge.reader.wikipedia_reader",
    "agno.knowledge.reader.tavily_reader",
    "agno.knowledge.reader.web_search_reader",
    "agno.knowledge.reader.s3_reader",
    "agno.knowledge.remote_content",  # S3, GCS, Azure Blob, SharePoint, GitHub
    "agno.context.web",
    "agno.context.slack",
    "agno.context.gmail",
    "agno.context.calendar",
    "agno.context.gdrive",
    "agno.context.google",
    "agno.context.mcp",
}
#: Third-party packages that reach a cloud service when used.
INTERNET_PACKAGES = {"boto3": "AWS", "botocore": "AWS", "google.cloud": "Google Cloud"}
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1"}
#: Local ports the replay serves itself (its PostgreSQL); a file naming another local
#: server (a memory service, a vector store's own server) needs what the replay does not
#: start. Ports under 1024 are not servers' here: the cookbook names ``localhost:1`` as an
#: address that refuses (a model that fails, for fallbacks).
SERVED_PORTS = {5532}
#: What a file reads or writes by a path relative to the working directory (Agno's
#: repository root) that Agno's repository does not have, so that it fails as shipped, in
#: Agno as here. Each is checked against the checkout: a path the checkout has runs the file
#: again. (A file beside the program, ``Path(__file__).parent.joinpath("sample.jpg")``, is
#: found by `files_beside`.)
NOT_SHIPPED = {
    "cookbook/07_knowledge/09_archive/readers/csv_reader_async.py": "data/csv",
    "cookbook/90_models/google/gemini/image_editing.py": "tmp/test_photo.png",
    "cookbook/90_models/google/gemini/file_search_image_upload.py": "path/to/your/image.jpeg",
}
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
#: The panel `print_response` shows a failed run in (it prints, and the program goes on).
ERROR_PANEL = re.compile(r"^╭─ Error ─+╮\n│ (.*?)\s*│$", re.MULTILINE)
#: Files that show runs refused on purpose (a guardrail at work), with what each refusal
#: says: such a file passes when it shows at least one refusal and every run it shows failed
#: is one of them.
SHOWN_REFUSALS = {
    "cookbook/02_agents/08_guardrails/pii_detection.py": "Potential PII detected",
    "cookbook/02_agents/08_guardrails/prompt_injection.py": "prompt injection detected",
}
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
    special = (
        interactions_answer(request.method, path, body)
        or background_answer(request.method, path, body)
        or builtin_tools_answer(path, body)
        or media_answer(path, body)
    )
    if special is not None:
        return special
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
    if fmt.get("type") == "json_object":  # the schema is in the instructions or the input
        schema = _schema_in([body.get("instructions"), items])
        return responses_reply(json.dumps(example_of(schema, {})))
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


@attrs.frozen
class Checkout:
    """A work tree of agno-agi/agno at the inventory's tag."""

    root: Path

    def read(self, path: str) -> str:
        return (self.root / path).read_text(errors="replace")

    def cookbook(self) -> list[str]:
        return sorted(
            p.relative_to(self.root).as_posix() for p in (self.root / COOKBOOK).rglob("*.py")
        )

    def local_modules(self, path: str) -> frozenset[str]:
        folder = (self.root / path).parent
        return frozenset(p.stem for p in folder.iterdir() if p.suffix == ".py" or p.is_dir())

    def reason_not_to_run(
        self, path: str, seen: frozenset[str] = frozenset()
    ) -> tuple[str, str] | None:
        """`not_run_reason` of the file at ``path``, else of a module beside it that it
        imports (``from basic_examples import ...``), followed in turn."""
        source, local = self.read(path), self.local_modules(path)
        reason = not_run_reason(source, local)
        if reason is not None:
            return reason
        needed = [NOT_SHIPPED[path]] if path in NOT_SHIPPED else []
        needed += [(Path(path).parent / name).as_posix() for name in files_beside(source)]
        for missing in needed:
            if not (self.root / missing).exists():
                return "not shipped", f"needs {missing}, which Agno's repository does not have"
        for top in sorted({m.split(".")[0] for m in imported_modules(ast.parse(source))}):
            beside = (Path(path).parent / f"{top}.py").as_posix()
            if top in local and beside not in seen and (self.root / beside).is_file():
                found = self.reason_not_to_run(beside, seen | {path, beside})
                if found is not None:
                    return found[0], f"{found[1]} (through {top}.py)"
        return None

    def lay_out(self, path: str, folder: Path) -> Path:
        """The file at ``path`` written under ``folder`` where it lies in Agno's repository,
        ``folder`` standing for the repository's root (the cookbook's working directory):
        the file and the modules beside it (``from db import ...``) with the package name
        rewritten, every other entry of each folder on the way linked (data beside the file,
        ``README.md``, ``cookbook/07_knowledge/testing_resources``...), so that relative and
        ``Path(__file__)``-based paths reach what they reach in Agno's repository; and an
        empty ``tmp/``, the scratch folder Agno's ``.gitignore`` keeps out of the repository
        and its cookbook writes to (``tmp/agent.db``, ``tmp/answer.wav``)."""
        (folder / "tmp").mkdir()  # the cookbook's scratch folder, in Agno's .gitignore
        here, there = folder, self.root
        for part in Path(path).parts[:-1]:
            self._link_entries(there, here, but=part)
            here, there = here / part, there / part
            here.mkdir()
        for entry in there.iterdir():
            if entry.suffix == ".py":
                (here / entry.name).write_text(as_ferrule(entry.read_text(errors="replace")))
        self._link_entries(there, here, but="")
        return folder / path

    @staticmethod
    def _link_entries(there: Path, here: Path, but: str) -> None:
        for entry in there.iterdir():
            link = here / entry.name
            if entry.name != but and not entry.name.startswith((".", "__")) and not link.exists():
                link.symlink_to(entry)


def checkout_at(path: str | None) -> Checkout:
    """The checkout given (``--agno`` or ``$AGNO_CHECKOUT``), checked to be the tag's."""
    if not path:
        raise SystemExit(
            "give the path of an Agno checkout with --agno PATH (or set $AGNO_CHECKOUT); "
            f"make one with:\n    {inventory_agno.CLONE_HINT}"
        )
    root = inventory_agno.package_root(Path(path))
    inventory_agno.checked_version(root)
    return Checkout(root.parents[1])


def unaccounted_folders(checkout: Checkout) -> list[str]:
    """Top-level cookbook folders in neither list (a newer cookbook's)."""
    listed = (*SELECTED, *EXCLUDED)
    folders = {str(Path(p).parent) + "/" for p in checkout.cookbook()}
    return sorted(f for f in folders if not any(f.startswith(x) or x.startswith(f) for x in listed))


def selected_files(checkout: Checkout, prefixes: tuple[str, ...]) -> list[str]:
    def chosen(name: str) -> bool:
        # under a chosen prefix, and not under an excluded folder inside it
        chosen_by = [p for p in prefixes if name.startswith(p)]
        if not chosen_by:
            return False
        return not any(name.startswith(e) and len(e) > max(map(len, chosen_by)) for e in EXCLUDED)

    return [
        n
        for n in checkout.cookbook()
        if not n.endswith("__init__.py") and not Path(n).name.startswith("_") and chosen(n)
    ]


def imported_modules(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


#: The inventory's modules, each with its public names.
INVENTORIED = {
    module: set(facts["names"])
    for module, facts in json.loads(
        (Path(__file__).resolve().parent / "agno_inventory.json").read_text()
    )["modules"].items()
}


def is_ferrules(module: str) -> bool:
    """Whether a module of a family (`FAMILIES`) is one ferrule has."""
    return (
        module in INVENTORIED
        or any(m.startswith(module + ".") for m in INVENTORIED)
        or any(module == m or module.startswith(m + ".") for m in ALSO_COVERED)
    )


def installed(package: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def files_beside(source: str) -> list[str]:
    """The files a program reads from beside itself: ``Path(__file__).parent.joinpath(
    "sample.jpg")`` or ``Path(__file__).parent / "sample.jpg"``, in a program that makes no
    file or folder (which may be that one)."""

    def is_own_folder(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "parent"
            and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", None) == "Path"
            and [getattr(a, "id", None) for a in node.value.args] == ["__file__"]
        )

    names = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        name: ast.expr | None = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "joinpath" and is_own_folder(node.func.value) and node.args:
                name = node.args[0]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            name = node.right if is_own_folder(node.left) else None
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            names.append(name.value)
    code = ast.unparse(tree)  # without its comments ("please download a sample...")
    makes = r"\.write_(bytes|text)\(|\.mkdir\(|open\([^)]*[\"']w|download|urlretrieve"
    return [] if re.search(makes, code) else names


def namespace_members(tree: ast.AST) -> set[str]:
    """``google.genai`` for ``from google import genai``: what is imported from a namespace
    package (one with no code of its own) is a package in its own right."""
    import importlib.util

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] in {"agno", "ferrule", "__future__"}:
                continue
            try:
                spec = importlib.util.find_spec(node.module)
            except (ImportError, ValueError):
                continue
            if spec is not None and spec.origin in (None, "namespace"):
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def import_error(module: str) -> str | None:
    """The first line of the error importing an installed ``module`` raises (a module a
    newer major version of its package keeps only to say it moved), else None."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError as error:
        return str(error).split(". ")[0][:120]
    except Exception:  # any other failure is the program's to meet
        return None
    return None


def unknown_provider(value: ast.expr) -> str | None:
    """The provider of a ``model="provider:id"`` string that ferrule does not ship."""
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None
    provider, colon, model_id = value.value.partition(":")
    if not colon or not model_id or not re.fullmatch(r"[\w-]+", provider):
        return None
    from ferrule.models.fallback import model_of
    from ferrule_kernel import InvalidInputError

    try:
        model_of(f"{provider}:x")
    except InvalidInputError as error:
        return provider if "unknown provider" in str(error) else None
    return None


def ferrule_has(module: str, name: str) -> bool:
    """Whether ferrule's ``module`` has ``name`` (one the inventory does not list: a
    constant, a name Agno imports into the module)."""
    import importlib

    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def not_run_reason(source: str, local: frozenset[str] = frozenset()) -> tuple[str, str] | None:
    """``("internet" | "not covered", why)`` for a file not to run, else None; ``local``:
    the modules beside the file (``from db import ...``)."""
    tree = ast.parse(source)
    modules = imported_modules(tree)
    for module in sorted(modules):
        if module.startswith("agno.") and any(p.startswith("_") for p in module.split(".")):
            return "not covered", f"Agno's private module ({module})"
    for module in sorted(modules):
        for prefix, subject in NOT_COVERED.items():
            if module == prefix or module.startswith(prefix + "."):
                return "not covered", f"{subject} ({module})"
    for module in sorted(modules):
        for toolkit in INTERNET_TOOLS:
            if module == toolkit or module.startswith(toolkit + "."):
                return "internet", f"{toolkit}"
    named = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    named |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for module in sorted(named):
        family = next((f for f in FAMILIES if module.startswith(f + ".")), None)
        if family is not None and not is_ferrules(module):
            return "not covered", f"{module} is not ferrule's"
    for node in ast.walk(tree):  # a store, provider... a family's package names lazily
        if isinstance(node, ast.ImportFrom) and (node.module or "") in INVENTORIED:
            module = node.module or ""
            if module == "agno" or not module.startswith(FAMILIES):
                continue
            for alias in node.names:
                if alias.name == "*" or alias.name in INVENTORIED[module]:
                    continue
                if not ferrule_has(as_ferrule(module), alias.name):
                    return "not covered", f"{module}.{alias.name} is not ferrule's"
    foreign = {m for m in named if m.split(".")[0] not in {"agno", "ferrule", "__future__"}}
    foreign |= namespace_members(tree)
    for module in sorted(m for m in foreign if m.split(".")[0] not in local):
        if module.split(".")[0] not in sys.stdlib_module_names and not installed(module):
            return "not covered", f"needs {module}, which ferrule does not install"
        unusable = import_error(module) if "." in module else None
        if unusable is not None:
            return "not covered", f"needs {module}, which does not import here: {unusable}"
        for package, service in INTERNET_PACKAGES.items():
            if module == package or module.startswith(package + "."):
                return "internet", f"{service} ({module})"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Agent":
            for keyword in node.keywords:
                subject = inventory_agno.out_of_subject(keyword.arg or "")
                if subject is not None:
                    return "not covered", f"{subject} (Agent({keyword.arg}=...))"
                unknown = unknown_provider(keyword.value) if keyword.arg == "model" else None
                if unknown is not None:
                    return "not covered", f"a model of {unknown!r}, a provider ferrule lacks"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in INTERNET_FUNCTIONS:
                    return "internet", INTERNET_FUNCTIONS[alias.name]
        if isinstance(node, ast.keyword) and node.arg in SERVER_SIDE_SEARCH:
            if not (isinstance(node.value, ast.Constant) and not node.value.value):
                return "internet", f"the provider's server-side {node.arg}="
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value.strip()
            if re.match(r"^web_(search|fetch)_\d+$", value):
                return "internet", f"the provider's server-side {value} tool"
            if re.match(r"^(https?|s3|gs)://", value):
                url = urlparse(value)
                if (url.hostname or "") not in LOCAL_HOSTS:
                    return "internet", f"fetches {value[:60]}"
                if url.port is not None and url.port >= 1024 and url.port not in SERVED_PORTS:
                    return "not covered", f"a server of its own on {url.hostname}:{url.port}"
    return None


def as_ferrule(source: str) -> str:
    """``source`` with the name ``agno`` made ``ferrule`` where it names the package (an
    import, ``agno.x``), not in strings or comments (``"libs/agno/agno"`` is a path of
    Agno's repository, read as it is)."""
    lines = source.splitlines(keepends=True)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return re.sub(r"\bagno\b", "ferrule", source)
    for token in reversed(tokens):
        if token.type == tokenize.NAME and token.string == "agno":
            row, column = token.start
            line = lines[row - 1]
            lines[row - 1] = line[:column] + "ferrule" + line[column + len("agno") :]
    return "".join(lines)


# -- running --------------------------------------------------------------------------------


@attrs.define
class Outcome:
    path: str
    status: str  # pass | fail | internet | not covered | not shipped | timeout
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


def run_file(checkout: Checkout, path: str, timeout: float, python_path: list[str]) -> Outcome:
    for folder, seconds in SLOW_FOLDERS.items():
        if path.startswith(folder):
            timeout = max(timeout, seconds)
    reason = checkout.reason_not_to_run(path)
    if reason is not None:
        return Outcome(path, reason[0], reason[1])
    with tempfile.TemporaryDirectory(prefix="agno-replay-") as folder:
        checkout.lay_out(path, Path(folder))
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
                [sys.executable, path],
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
        refusal = SHOWN_REFUSALS.get(path)
        failed = [
            text for text in ERROR_PANEL.findall(output) if not refusal or refusal not in text
        ]
        if failed:
            return Outcome(path, "fail", "printed an error: " + failed[0][:220], requests, seconds)
        if refusal and refusal not in output:
            return Outcome(path, "fail", f"showed no refusal ({refusal})", requests, seconds)
        if server.problems:
            return Outcome(
                path, "fail", "bad request: " + server.problems[0][:200], requests, seconds
            )
        return Outcome(path, "pass", "", requests, seconds)


def postgres_for(checkout: Checkout, files: list[str]) -> Iterator[str | None]:
    """A PostgreSQL on localhost:5532 with Agno's role and database, when a file needs one."""
    needs = any(
        str(POSTGRES_PORT) in checkout.read(f) and checkout.reason_not_to_run(f) is None
        for f in files
    )
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
    """The file's folder, two levels under cookbook/ at most (``90_models/openai``)."""
    parts = path.split("/")[1:-1]
    return "/".join(parts[:2]) if parts else "."


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prefixes", nargs="*", help="only the files under these paths")
    parser.add_argument(
        "--agno",
        default=os.environ.get("AGNO_CHECKOUT"),
        help=f"an Agno checkout at {inventory_agno.TAG} (default: $AGNO_CHECKOUT)",
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--at", metavar="REV", help="run ferrule as committed at REV")
    parser.add_argument("--list", action="store_true", help="sort the files, run none")
    parser.add_argument("--json", type=Path, help="write each file's outcome here")
    args = parser.parse_args(argv)
    checkout = checkout_at(args.agno)
    stray = unaccounted_folders(checkout)
    if stray:
        raise SystemExit(f"cookbook folders in neither list of inventory_agno.py: {stray}")
    prefixes = tuple(args.prefixes) or SELECTED
    files = selected_files(checkout, prefixes)
    print(f"agno cookbook at {inventory_agno.TAG}: {len(files)} files in subject")
    for folder, reason in EXCLUDED.items():
        print(f"not replayed: {folder} — {reason}")
    outcomes: list[Outcome] = []
    exported = tempfile.TemporaryDirectory(prefix="ferrule-at-")
    python_path = sources_at(args.at, Path(exported.name)) if args.at else []
    if args.at:
        print(f"ferrule as committed at {args.at}")
    lock = threading.Lock()
    if args.list:
        files_to_run = []
        for path in files:
            reason = checkout.reason_not_to_run(path)
            status, detail = reason if reason else ("runnable", "")
            outcomes.append(Outcome(path, status, detail))
    else:
        files_to_run = files
    postgres = postgres_for(checkout, files_to_run)
    next(postgres)
    try:

        def one(path: str) -> Outcome:
            outcome = run_file(checkout, path, args.timeout, python_path)
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
            outcomes += list(pool.map(one, files_to_run))
    finally:
        postgres.close()
        exported.cleanup()
    per_folder: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for outcome in outcomes:
        status = "fail" if outcome.status == "timeout" else outcome.status
        per_folder[folder_of(outcome.path)][status] += 1
    if args.json:
        args.json.write_text(json.dumps([attrs.asdict(o) for o in outcomes], indent=1))
    print(
        "\nfolder                                      pass  fail  internet  not-covered"
        "  not-shipped" + ("  runnable" if args.list else "")
    )
    total: collections.Counter[str] = collections.Counter()
    for folder in sorted(per_folder):
        counts = per_folder[folder]
        total.update(counts)
        print(
            f"{folder:42} {counts['pass']:5} {counts['fail']:5} {counts['internet']:9}"
            f" {counts['not covered']:12} {counts['not shipped']:12}"
            + (f" {counts['runnable']:9}" if args.list else "")
        )
    print(
        f"{'TOTAL':42} {total['pass']:5} {total['fail']:5} {total['internet']:9}"
        f" {total['not covered']:12} {total['not shipped']:12}"
    )
    run = total["pass"] + total["fail"] + total["runnable"]
    print(f"\n{total['pass']} of {run} runnable files pass")
    return 0 if total["fail"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
