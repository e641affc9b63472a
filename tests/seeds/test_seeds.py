"""Every Python example of the seeds (../shared/seeds/) runs as written: each file here is
one example, its text the seed's (indentation restored, ``ailoy``/``agno`` -> ``ferrule``),
run as a script in a fresh process with the configuration README.md documents:

- the API providers' endpoints moved to a loopback server speaking their wire formats
  (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``,
  ``XAI_BASE_URL``; dummy keys), and DuckDuckGo's to another (``FERRULE_DUCKDUCKGO_URL``);
- the seeds' Qwen3 ids mapped to the offline default model (``FERRULE_MODEL_ALIASES``),
  with the Hugging Face Hub off (``HF_HUB_OFFLINE=1``);
- for the Knowledge example, the kit's real PostgreSQL (with pgvector) on the address the
  seed names, ``localhost:5432``, with its role and database.

A fragment (an example using names an earlier one defined) runs after the examples listed
for it in `AFTER`, in one script. Each case checks what the example printed and what it
sent. The files' text is checked against the seeds too.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from ferrule_kit.content.messages import ToolCall
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.testing import ScriptedTurn, check_stream, tiny_png, tiny_wav
from ferrule_kit.testing import chat_completions as openai_wire
from ferrule_kit.testing.loopback import LoopbackServer, RecordedRequest, Reply
from ferrule_kit.testing.postgres import start_postgres

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SEED_TEXTS = ROOT.parent / "shared" / "seeds"
SEED_FILES = {
    "low_level_runtime_api": "low-level-runtime-api.txt",
    "agent_guide": "agent-guide.txt",
    "multi_turn_conversation": "multi-turn-conversation.txt",
    "agent_class_reference": "agent-class-reference.txt",
}
#: The text the seed does not ship for the split_text example (see README.md).
STAND_IN_TEXT = ROOT / "bench" / "data" / "retrieval" / "harbour.txt"

#: Fragments, and the examples they run after (concatenated before them).
AFTER: dict[str, list[str]] = {
    "low_level_runtime_api/04_chain_of_thought.py": ["low_level_runtime_api/01_echo.py"],
    "low_level_runtime_api/05_system_message.py": ["low_level_runtime_api/01_echo.py"],
    "agent_guide/02_agent.py": ["agent_guide/01_runtime.py"],
    "agent_guide/03_system_message.py": ["agent_guide/01_runtime.py", "agent_guide/02_agent.py"],
    "agent_guide/04_delete.py": ["agent_guide/01_runtime.py", "agent_guide/02_agent.py"],
    "agent_guide/05_context_manager.py": ["agent_guide/01_runtime.py", "agent_guide/02_agent.py"],
    "agent_guide/08_provider.py": ["agent_guide/07_api_models.py"],
    "agent_guide/09_query.py": ["agent_guide/07_api_models.py", "agent_guide/08_provider.py"],
    "agent_guide/10_images.py": ["agent_guide/07_api_models.py", "agent_guide/08_provider.py"],
    "agent_guide/11_audio.py": ["agent_guide/07_api_models.py", "agent_guide/08_provider.py"],
    "agent_guide/12_reasoning.py": ["agent_guide/07_api_models.py", "agent_guide/08_provider.py"],
    "agent_guide/13_messages.py": [
        "agent_guide/07_api_models.py",
        "agent_guide/08_provider.py",
        "agent_guide/09_query.py",
    ],
}

ALIASES = f"Qwen/Qwen3-0.6B={DEFAULT_LOCAL_MODEL},Qwen/Qwen3-8B={DEFAULT_LOCAL_MODEL}"


@attrs.frozen
class Ran:
    stdout: str
    stderr: str
    #: What the API providers' loopback server received, in order.
    requests: list[RecordedRequest]
    #: What the DuckDuckGo loopback server received.
    searches: list[RecordedRequest]
    #: The working directory it ran in.
    folder: Path


def openai_text(*pieces: str) -> Reply:
    return openai_wire.reply(ScriptedTurn(text=pieces))


@attrs.frozen
class Case:
    #: Replies of the providers' server, in order.
    replies: tuple[Any, ...] = ()
    #: Replies of the DuckDuckGo server.
    searches: tuple[Any, ...] = ()
    stdin: str = ""
    check: Callable[[Ran], None] = lambda ran: None
    #: Runs with the seed's PostgreSQL at localhost:5432 (`seed_postgres`).
    postgres: bool = False


def _stream_lines(ran: Ran) -> list[dict[str, Any]]:
    return [ast.literal_eval(line) for line in ran.stdout.splitlines()[1:] if line]


def _check_infer(ran: Ran) -> None:
    items = _stream_lines(ran)
    check_stream(items)
    assert "".join(i["message"]["content"][0]["text"] for i in items).strip()


def _check_split(ran: Ran) -> None:
    lines = ran.stdout.splitlines()
    count = int(lines[0])
    assert count > 1
    first = "\n".join(lines[2:-1])
    assert first.strip() and STAND_IN_TEXT.read_text().startswith(first)


def _last_body(ran: Ran) -> dict[str, Any]:
    return ran.requests[-1].json


def _user_content(ran: Ran) -> list[dict[str, Any]]:
    return _last_body(ran)["messages"][-1]["content"]


def _check_poem(ran: Ran) -> None:
    assert "Circuits dream in light." in ran.stdout
    (request,) = ran.requests
    assert request.path == "/v1/chat/completions"
    assert request.json["model"] == "gpt-4o-audio-preview"
    assert request.headers["authorization"] == "Bearer <OPENAI_API_KEY>"


def _check_images(ran: Ran) -> None:
    first, second = (r.json["messages"][-1]["content"] for r in ran.requests)
    assert first[1]["image_url"]["url"].startswith("https://upload.wikimedia.org/")
    assert second[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert ran.stdout.count("A red square.") == 2


def _check_audio(ran: Ran) -> None:
    content = _user_content(ran)
    assert content[1]["type"] == "input_audio"
    assert content[1]["input_audio"]["format"] == "wav"
    assert "Silence." in ran.stdout


def _check_reasoning(ran: Ran) -> None:
    assert "x = 3, y = 0" in ran.stdout
    assert "[reasoning]" in ran.stdout


def _check_messages(ran: Ran) -> None:
    assert "Please give me a short poem about AI" in ran.stdout
    assert "Circuits dream in light." in ran.stdout.split("\n")[-2]  # the printed list


def _check_context(ran: Ran) -> None:
    assert ran.stdout.strip()


def _check_live_chat(ran: Ran) -> None:
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("(Enter 'exit' to end the conversation.)")
    assert "Agent:" in ran.stdout
    assert lines[-1].endswith("Agent: It was a nice conversation!")


def _check_basic(ran: Ran) -> None:
    assert ran.stdout == "Machine learning is learning from data.\n"
    body = _last_body(ran)
    assert body["model"] == "gpt-4"
    assert "A helpful AI assistant" in json.dumps(body["messages"][0])


def _check_search(ran: Ran) -> None:
    assert ran.stdout == "The review says small open models caught up.\n"
    (search,) = ran.searches
    assert (search.method, search.path) == ("POST", "/html/")
    assert "q=latest+developments+in+AI" in search.body.decode()
    first, second = (r.json for r in ran.requests)
    assert "duckduckgo_search" in [t["function"]["name"] for t in first["tools"]]
    assert "Search the web for current information" in json.dumps(first["messages"][0])
    result = second["messages"][-1]
    assert result["role"] == "tool"
    assert "The state of AI in 2026: a review" in result["content"]


def _check_streaming(ran: Ran) -> None:
    assert ran.stdout == "Once upon a time, a robot learned to paint."


def _check_structured(ran: Ran) -> None:
    assert ran.stdout == "Inception: 9/10\n"
    schema = _last_body(ran)["response_format"]["json_schema"]["schema"]
    assert set(schema["properties"]) == {"title", "rating", "summary"}


def _vector(text: str, dimension: int) -> list[float]:
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    vector = [rng.gauss(0, 1) for _ in range(dimension)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def _knowledge_provider() -> Callable[[RecordedRequest], Reply]:
    """OpenAI's embeddings (a unit vector per text) and chat turns: each run's answer, and
    the memory manager's turns after each run (the first stores a memory with a tool call)."""
    turns = [
        ScriptedTurn(text=("Noted: blue.",)),
        ScriptedTurn(
            tool_calls=(
                ToolCall("call_m1", "add_memory", {"memory": "The user's favorite color is blue."}),
            ),
            finish_reason="tool_calls",
        ),
        ScriptedTurn(text=("done",)),
        ScriptedTurn(text=("Your favorite color is blue.",)),
        ScriptedTurn(text=("done",)),
    ]

    def respond(request: RecordedRequest) -> Reply:
        body = request.json
        if request.path == "/v1/embeddings":
            dimension = body.get("dimensions", 1536)  # text-embedding-3-small's
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(text, dimension)}
                for i, text in enumerate(body["input"])
            ]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            return Reply.json(
                {"object": "list", "model": body["model"], "data": data, "usage": usage}
            )
        return openai_wire.reply(turns.pop(0))

    return respond


def _check_knowledge(ran: Ran) -> None:
    chats = [r.json for r in ran.requests if r.path == "/v1/chat/completions"]
    embeddings = [r.json for r in ran.requests if r.path == "/v1/embeddings"]
    assert [e["input"] for e in embeddings] == [
        ["My favorite color is blue"],
        ["What is my favorite color?"],
    ]
    assert all(e["model"] == "text-embedding-3-small" for e in embeddings)
    first, memory, _, second, _ = chats
    assert "search_knowledge_base" in [t["function"]["name"] for t in first["tools"]]
    assert "add_memory" in [t["function"]["name"] for t in memory["tools"]]
    sent = json.dumps(second["messages"])
    assert "My favorite color is blue" in sent  # the history of session user-123
    assert "The user's favorite color is blue." in sent  # the memory stored after run 1
    assert (ran.folder / "agent.db").exists()
    import psycopg

    with psycopg.connect("postgresql://user:pass@localhost:5432/db") as conn:
        tables = {
            row[0] for row in conn.execute("SELECT table_name FROM information_schema.tables")
        }
    assert "ferrule_vector_collections" in tables  # the store the seed's URL names


REVIEW = {"title": "Inception", "rating": 9, "summary": "A heist inside dreams."}

CASES: dict[str, Case] = {
    "low_level_runtime_api/01_echo.py": Case(
        check=lambda ran: (ran.stdout == "{'text': 'Hello world'}\n") or _fail(ran)
    ),
    "low_level_runtime_api/02_split_text.py": Case(check=_check_split),
    "low_level_runtime_api/03_infer.py": Case(
        check=lambda ran: check_stream([ast.literal_eval(x) for x in ran.stdout.splitlines()])
    ),
    "low_level_runtime_api/04_chain_of_thought.py": Case(
        check=lambda ran: ran.stdout.split("\n", 1)[1].strip() or _fail(ran)
    ),
    "low_level_runtime_api/05_system_message.py": Case(
        check=lambda ran: ran.stdout.split("\n", 1)[1].strip() or _fail(ran)
    ),
    "agent_guide/01_runtime.py": Case(),
    "agent_guide/02_agent.py": Case(),
    "agent_guide/03_system_message.py": Case(),
    "agent_guide/04_delete.py": Case(),
    "agent_guide/05_context_manager.py": Case(),
    "agent_guide/06_local_model.py": Case(),
    "agent_guide/07_api_models.py": Case(check=lambda ran: ran.requests == [] or _fail(ran)),
    "agent_guide/08_provider.py": Case(check=lambda ran: ran.requests == [] or _fail(ran)),
    "agent_guide/09_query.py": Case(
        replies=(openai_text("Circuits dream ", "in light."),), check=_check_poem
    ),
    "agent_guide/10_images.py": Case(
        replies=(openai_text("A red square."), openai_text("A red square.")), check=_check_images
    ),
    "agent_guide/11_audio.py": Case(replies=(openai_text("Silence."),), check=_check_audio),
    "agent_guide/12_reasoning.py": Case(
        replies=(
            openai_wire.reply(
                ScriptedTurn(reasoning=("Subtract 3 times the first.",), text=("x = 3, y = 0",))
            ),
        ),
        check=_check_reasoning,
    ),
    "agent_guide/13_messages.py": Case(
        replies=(openai_text("Circuits dream ", "in light."),), check=_check_messages
    ),
    "multi_turn_conversation/01_context.py": Case(check=_check_context),
    "multi_turn_conversation/02_live_chat.py": Case(
        stdin="What's John's favorite color?\nexit\n", check=_check_live_chat
    ),
    "agent_class_reference/01_basic.py": Case(
        replies=(openai_text("Machine learning is ", "learning from data."),), check=_check_basic
    ),
    "agent_class_reference/02_web_search.py": Case(
        replies=(
            openai_wire.reply(
                ScriptedTurn(
                    tool_calls=(
                        ToolCall(
                            "call_1", "duckduckgo_search", {"query": "latest developments in AI"}
                        ),
                    ),
                    finish_reason="tool_calls",
                )
            ),
            openai_text("The review says small open models caught up."),
        ),
        searches=(
            Reply(
                200,
                {},
                [(ROOT / "plugins/duckduckgo/tests/replies/results.html").read_bytes()],
                "text/html",
            ),
        ),
        check=_check_search,
    ),
    "agent_class_reference/03_knowledge.py": Case(
        replies=(_knowledge_provider(),) * 7, postgres=True, check=_check_knowledge
    ),
    "agent_class_reference/04_streaming.py": Case(
        replies=(openai_text("Once upon a time, ", "a robot ", "learned to paint."),),
        check=_check_streaming,
    ),
    "agent_class_reference/05_structured_output.py": Case(
        replies=(openai_text(json.dumps(REVIEW)),), check=_check_structured
    ),
}


def _fail(ran: Ran) -> None:
    raise AssertionError(f"unexpected output:\n{ran.stdout}\n--- stderr ---\n{ran.stderr}")


def seed_examples() -> list[str]:
    return sorted(str(p.relative_to(HERE)) for p in HERE.glob("*/*.py"))


@pytest.fixture(scope="module")
def servers():
    with LoopbackServer() as providers, LoopbackServer() as duckduckgo:
        yield providers, duckduckgo


@pytest.fixture(scope="module")
def seed_postgres():
    """The kit's PostgreSQL (with pgvector) on the address the Knowledge example names,
    ``postgresql://user:pass@localhost:5432/db``: its role, and its database with the
    vector extension (created by the superuser, as a DBA would)."""
    import psycopg

    server = start_postgres(port=5432)
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            conn.execute("CREATE ROLE \"user\" LOGIN PASSWORD 'pass'")
            conn.execute('CREATE DATABASE db OWNER "user"')
        with psycopg.connect(server.dsn("db"), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
        yield server
    finally:
        server.stop()


def run_example(name: str, case: Case, servers: Any, folder: Path) -> Ran:
    providers, duckduckgo = servers
    providers.requests.clear()
    duckduckgo.requests.clear()
    providers.script(*case.replies)
    duckduckgo.script(*case.searches)
    (folder / "what_men_live_by.txt").write_text(STAND_IN_TEXT.read_text())
    (folder / "path" / "to").mkdir(parents=True, exist_ok=True)
    (folder / "path" / "to" / "image.png").write_bytes(tiny_png())
    (folder / "path" / "to" / "audio.wav").write_bytes(tiny_wav())
    program = "\n".join((HERE / part).read_text() for part in [*AFTER.get(name, []), name])
    env = {
        **os.environ,
        "OPENAI_BASE_URL": providers.url + "/v1",
        "OPENAI_API_KEY": "sk-seed-test",
        "ANTHROPIC_BASE_URL": providers.url,
        "ANTHROPIC_API_KEY": "sk-ant-seed-test",
        "GOOGLE_GEMINI_BASE_URL": providers.url,
        "GEMINI_API_KEY": "gemini-seed-test",
        "XAI_BASE_URL": providers.url + "/v1",
        "XAI_API_KEY": "xai-seed-test",
        "FERRULE_DUCKDUCKGO_URL": duckduckgo.url,
        "FERRULE_MODEL_ALIASES": ALIASES,
        "HF_HUB_OFFLINE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=case.stdin,
        capture_output=True,
        text=True,
        timeout=280,
        cwd=folder,
        env=env,
    )
    ran = Ran(done.stdout, done.stderr, list(providers.requests), list(duckduckgo.requests), folder)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n--- stderr ---\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    providers.check()
    duckduckgo.check()
    assert providers.pending == 0 and duckduckgo.pending == 0, "a scripted reply was not asked for"
    return ran


@pytest.mark.parametrize("name", [n for n in seed_examples() if n in CASES])
def test_seed_example_runs_as_written(
    name: str, servers: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    case = CASES[name]
    if case.postgres:
        request.getfixturevalue("seed_postgres")
    ran = run_example(name, case, servers, tmp_path)
    case.check(ran)


def test_every_example_has_a_case_or_a_reason() -> None:
    untested = set(seed_examples()) - set(CASES)
    assert not untested, f"add a Case for {sorted(untested)}"


# -- the files are the seeds' text ------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("name", seed_examples())
def test_the_file_is_the_seeds_text(name: str) -> None:
    folder = name.split("/")[0]
    seed = SEED_TEXTS / SEED_FILES[folder]
    if not seed.exists():
        pytest.skip(f"the seeds are not in this checkout ({seed})")
    seed_lines = _lines(re.sub(r"\b(ailoy|agno)\b", "ferrule", seed.read_text()))
    ours = _lines((HERE / name).read_text())
    joined = "\n".join(seed_lines)
    # The seed runs the file's lines together with others ("...): ...Execute agents"), so
    # the file's lines must be found in order, each a run of the seed's text.
    position = 0
    for line in ours:
        found = joined.find(line, position)
        assert found >= 0, f"{name}: {line!r} is not in {seed.name} after position {position}"
        position = found + len(line)
