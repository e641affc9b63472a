"""Agno's public module layout is ferrule's: each Agno path imports and is the very object
of ferrule's own name; the model classes' parameters reach the provider's wire."""

from __future__ import annotations

import importlib
import json

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

#: (Agno's module, name) -> (ferrule's own module, name): the same object.
LAYOUT = {
    ("ferrule.models.openai.chat", "OpenAIChat"): ("ferrule.models.openai", "OpenAIChat"),
    ("ferrule.models.openai.like", "OpenAILike"): ("ferrule.models.openai", "OpenAILike"),
    ("ferrule.models.openai.responses", "OpenAIResponses"): (
        "ferrule.models.openai",
        "OpenAIResponses",
    ),
    ("ferrule.models.anthropic.claude", "Claude"): ("ferrule.models.anthropic", "Claude"),
    ("ferrule.models.google.gemini", "Gemini"): ("ferrule.models.google", "Gemini"),
    ("ferrule.models.xai.xai", "xAI"): ("ferrule.models.xai", "xAI"),
    ("ferrule.models.ollama.chat", "Ollama"): ("ferrule.models.ollama", "Ollama"),
    ("ferrule.models.vllm.vllm", "VLLM"): ("ferrule.models.vllm", "VLLM"),
    ("ferrule.models.llama_cpp.llama_cpp", "LlamaCpp"): ("ferrule.models.llama_cpp", "LlamaCpp"),
    ("ferrule.run", "RunStatus"): ("ferrule.agent.results", "RunStatus"),
    ("ferrule.run.base", "RunStatus"): ("ferrule.agent.results", "RunStatus"),
    ("ferrule.run.agent", "RunOutput"): ("ferrule.agent", "RunOutput"),
    ("ferrule.run.agent", "RunEvent"): ("ferrule.agent", "RunEvent"),
    ("ferrule.run.agent", "RunContentEvent"): ("ferrule.agent", "RunContentEvent"),
    ("ferrule.run.agent", "RunCompletedEvent"): ("ferrule.agent", "RunCompletedEvent"),
    ("ferrule.run.agent", "RunPausedEvent"): ("ferrule.agent", "RunPausedEvent"),
    ("ferrule.run.agent", "RunErrorEvent"): ("ferrule.agent", "RunErrorEvent"),
    ("ferrule.run.agent", "RunStartedEvent"): ("ferrule.agent", "RunStartedEvent"),
    ("ferrule.run.agent", "ToolCallStartedEvent"): ("ferrule.agent", "ToolCallStartedEvent"),
    ("ferrule.run.agent", "ToolCallCompletedEvent"): ("ferrule.agent", "ToolCallCompletedEvent"),
    ("ferrule.exceptions", "InputCheckError"): ("ferrule.agent", "InputCheckError"),
    ("ferrule.exceptions", "OutputCheckError"): ("ferrule.agent", "OutputCheckError"),
    ("ferrule.exceptions", "CheckTrigger"): ("ferrule.agent", "CheckTrigger"),
    ("ferrule.exceptions", "ModelProviderError"): ("ferrule_kit.errors", "ModelError"),
    ("ferrule.exceptions", "ModelRateLimitError"): ("ferrule_kit.errors", "RateLimitError"),
    ("ferrule.memory", "MemoryManager"): ("ferrule.memory.manager", "MemoryManager"),
    ("ferrule.memory", "UserMemory"): ("ferrule.db.schemas.memory", "UserMemory"),
    ("ferrule.db.in_memory", "InMemoryDb"): ("ferrule.db.in_memory.in_memory_db", "InMemoryDb"),
    ("ferrule.db.sqlite", "SqliteDb"): ("ferrule.db", "SqliteDb"),
    ("ferrule.db.postgres", "PostgresDb"): ("ferrule.db", "PostgresDb"),
    ("ferrule.tools", "tool"): ("ferrule.tools.decorator", "tool"),
    ("ferrule.tools", "Toolkit"): ("ferrule.tools.toolkit", "Toolkit"),
    ("ferrule.tools", "Function"): ("ferrule.tools.function", "Function"),
    ("ferrule.tools", "FunctionCall"): ("ferrule.tools.function", "FunctionCall"),
    ("ferrule.tools.reasoning", "ReasoningTools"): ("ferrule.tools.reasoning", "ReasoningTools"),
    ("ferrule.utils.pprint", "pprint_run_response"): (
        "ferrule.utils.pprint",
        "pprint_run_response",
    ),
    ("ferrule.knowledge.knowledge", "Knowledge"): ("ferrule.knowledge", "Knowledge"),
    ("ferrule.knowledge.embedder.openai", "OpenAIEmbedder"): (
        "ferrule.knowledge.embedder",
        "OpenAIEmbedder",
    ),
    ("ferrule.vectordb.pgvector", "PgVector"): ("ferrule.vectordb.pgvector.pgvector", "PgVector"),
    ("ferrule.vectordb.pgvector", "SearchType"): ("ferrule.vectordb.search", "SearchType"),
    ("ferrule.vectordb.sqlite_vec", "SearchType"): ("ferrule.vectordb.search", "SearchType"),
    ("ferrule.knowledge.vectordb", "SearchType"): ("ferrule.vectordb.search", "SearchType"),
}


@pytest.mark.parametrize(("agno", "own"), LAYOUT.items(), ids=lambda key: ".".join(key))
def test_an_agno_path_is_ferrules_own_object(agno, own):
    agno_module, agno_name = agno
    own_module, own_name = own
    found = getattr(importlib.import_module(agno_module), agno_name)
    assert found is getattr(importlib.import_module(own_module), own_name)


def test_each_model_class_lives_in_agnos_module():
    for (module, name), _ in LAYOUT.items():
        if module.startswith("ferrule.models."):
            cls = getattr(importlib.import_module(module), name)
            assert cls.__module__ == module


def test_agnos_run_event_names_are_the_events_names():
    from ferrule.run.agent import RunContentEvent, RunEvent, ToolCallCompletedEvent

    assert RunEvent.run_content == RunContentEvent.event == "RunContent"
    assert RunEvent.tool_call_completed == ToolCallCompletedEvent.event


def test_agnos_search_type_members_are_the_names_a_store_keeps():
    from ferrule.vectordb.pgvector import PgVector, SearchType
    from ferrule.vectordb.sqlite_vec import SqliteVecDb

    assert PgVector("docs", search_type=SearchType.hybrid).search_type == "hybrid"
    assert type(SqliteVecDb(search_type=SearchType.keyword).search_type) is str
    with pytest.raises(InvalidInputError) as caught:
        SqliteVecDb(search_type="fuzzy")  # type: ignore[arg-type]
    assert caught.value.details["errors"][0]["path"].endswith("search_type")


def test_retry_and_stop_agent_run_carry_agnos_fields():
    from ferrule.exceptions import AgentRunException, RetryAgentRun, StopAgentRun

    stop = StopAgentRun("enough", agent_message="Stopped.")
    assert isinstance(stop, AgentRunException)
    assert stop.stop_execution and stop.agent_message == "Stopped." and str(stop) == "enough"
    assert not RetryAgentRun("again").stop_execution


# -- parameters on the wire ---------------------------------------------------------------


def _ask(model, server, dialect, monkeypatch, variable, suffix):
    monkeypatch.setenv(variable, server.url + suffix)
    server.script(reply(dialect, "ok"))
    with Runtime() as rt:
        agent = Agent(rt, model)
        assert agent.run("hi").content == "ok"
    server.check()
    return server.requests[-1].json


def test_openai_chat_parameters_reach_the_wire(monkeypatch):
    from ferrule.models.openai import OpenAIChat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = OpenAIChat(
        id="gpt-4o",
        temperature=0.3,
        top_p=0.9,
        max_tokens=64,
        stop="END",
        seed=7,
        frequency_penalty=0.5,
        presence_penalty=-0.5,
        logit_bias={"50256": -100},
        user="u-1",
        service_tier="flex",
        store=False,
        metadata={"case": "layout"},
        extra_body={"custom_field": 1},
        request_params={"parallel_tool_calls": False},
    )
    with LoopbackServer() as server:
        body = _ask(model, server, OPENAI, monkeypatch, "OPENAI_BASE_URL", "/v1")
    expected = {
        "temperature": 0.3,
        "top_p": 0.9,
        "max_completion_tokens": 64,  # OpenAI's own API: max_tokens is the old name
        "stop": ["END"],
        "seed": 7,
        "frequency_penalty": 0.5,
        "presence_penalty": -0.5,
        "logit_bias": {"50256": -100},
        "user": "u-1",
        "service_tier": "flex",
        "store": False,
        "metadata": {"case": "layout"},
        "custom_field": 1,
        "parallel_tool_calls": False,
    }
    assert {key: body.get(key) for key in expected} == expected


def test_reasoning_effort_reaches_a_reasoning_model(monkeypatch):
    from ferrule.models.openai import OpenAIChat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with LoopbackServer() as server:
        body = _ask(
            OpenAIChat(id="o4-mini", reasoning_effort="low", max_completion_tokens=300),
            server,
            OPENAI,
            monkeypatch,
            "OPENAI_BASE_URL",
            "/v1",
        )
    assert body["reasoning_effort"] == "low"
    assert body["max_completion_tokens"] == 300


def test_openai_like_sends_max_tokens_to_a_compatible_server():
    from ferrule.models.openai import OpenAILike

    with LoopbackServer() as server:
        server.script(reply(OPENAI, "ok"))
        model = OpenAILike(id="local", base_url=server.url + "/v1", max_tokens=32, seed=3)
        with Runtime() as rt:
            assert Agent(rt, model).run("hi").content == "ok"
        body = server.requests[-1].json
    assert body["max_tokens"] == 32 and body["seed"] == 3


def test_xai_parameters_reach_the_wire(monkeypatch):
    from ferrule.models.xai import xAI

    monkeypatch.setenv("XAI_API_KEY", "xai-test")
    with LoopbackServer() as server:
        body = _ask(
            xAI(id="grok-4", temperature=0.1, seed=11),
            server,
            OPENAI,
            monkeypatch,
            "XAI_BASE_URL",
            "/v1",
        )
    assert body["temperature"] == 0.1 and body["seed"] == 11


def test_claude_parameters_reach_the_wire(monkeypatch):
    from ferrule.models.anthropic import Claude

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = Claude(
        id="claude-sonnet-4-20250514",
        max_tokens=200,
        temperature=0.4,
        top_p=0.8,
        stop_sequences=["STOP"],
    )
    with LoopbackServer() as server:
        body = _ask(model, server, ANTHROPIC, monkeypatch, "ANTHROPIC_BASE_URL", "")
    assert body["max_tokens"] == 200
    assert body["temperature"] == 0.4 and body["top_p"] == 0.8
    assert body["stop_sequences"] == ["STOP"]


def test_claude_thinking_turns_extended_thinking_on(monkeypatch):
    from ferrule.models.anthropic import Claude

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    model = Claude(
        id="claude-sonnet-4-20250514",
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    with LoopbackServer() as server:
        body = _ask(model, server, ANTHROPIC, monkeypatch, "ANTHROPIC_BASE_URL", "")
    assert body["thinking"]["type"] in ("enabled", "adaptive")
    assert body["max_tokens"] == 4096


def test_gemini_parameters_reach_the_generation_config(monkeypatch):
    from ferrule.models.google import Gemini

    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")
    model = Gemini(
        id="gemini-2.5-flash",
        temperature=0.2,
        top_p=0.7,
        max_output_tokens=128,
        stop_sequences=["###"],
    )
    with LoopbackServer() as server:
        body = _ask(model, server, GEMINI, monkeypatch, "GOOGLE_GEMINI_BASE_URL", "")
    config = body["generationConfig"]
    assert config["temperature"] == 0.2 and config["topP"] == 0.7
    assert config["maxOutputTokens"] == 128 and config["stopSequences"] == ["###"]


def test_a_runs_own_options_win_over_the_models(monkeypatch):
    from ferrule.models.openai import OpenAIChat

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with LoopbackServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        server.script(reply(OPENAI, "ok"))
        with Runtime() as rt:
            agent = Agent(
                rt,
                OpenAIChat(id="gpt-4o", temperature=0.3, top_p=0.5),
                options={"temperature": 1.0},
            )
            agent.run("hi")
        body = server.requests[-1].json
    assert body["temperature"] == 1.0 and body["top_p"] == 0.5


def test_timeout_and_max_retries_configure_the_client():
    from ferrule.models.anthropic import Claude
    from ferrule.models.openai import OpenAIChat

    with Runtime() as rt:
        attributes = OpenAIChat(timeout=5.0, max_retries=1).route(rt.kernel).attributes
        assert attributes["read_timeout"] == 5.0 and attributes["max_retries"] == 1
        assert Claude(timeout=9.0).route(rt.kernel).attributes["read_timeout"] == 9.0


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (
            lambda: __import__("ferrule.models.openai").models.openai.OpenAIChat(temperature=3.0),
            "temperature",
        ),
        (lambda: __import__("ferrule.models.openai").models.openai.OpenAIChat(top_p=1.5), "top_p"),
        (
            lambda: __import__("ferrule.models.openai").models.openai.OpenAIChat(max_tokens=0),
            "max_tokens",
        ),
        (
            lambda: __import__("ferrule.models.openai").models.openai.OpenAIChat(
                frequency_penalty=3
            ),
            "frequency_penalty",
        ),
        (
            lambda: __import__("ferrule.models.openai").models.openai.OpenAIChat(
                reasoning_effort="max"
            ),
            "reasoning_effort",
        ),
        (
            lambda: __import__("ferrule.models.anthropic").models.anthropic.Claude(
                thinking={"type": "on"}
            ),
            "thinking",
        ),
    ],
)
def test_a_bad_parameter_is_refused_by_name(build, field):
    with pytest.raises(InvalidInputError) as caught:
        build()
    assert field in json.dumps(caught.value.to_dict())


# -- the faces' own behaviour ------------------------------------------------------------


def test_a_toolkit_refuses_a_name_it_does_not_have_and_marks_confirmations():
    import asyncio

    from ferrule.tools import Toolkit

    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    def wipe() -> None:
        """Delete everything."""

    with pytest.raises(InvalidInputError) as caught:
        Toolkit(name="math", tools=[add], exclude_tools=["subtract"])
    assert caught.value.details["errors"][0]["path"].endswith("exclude_tools")
    assert "subtract" in caught.value.message
    kit = Toolkit(name="math", tools=[add, wipe], requires_confirmation_tools=["wipe"])
    tools = {tool.name: tool for tool in asyncio.run(kit.list_tools())}
    assert not tools["add"].requires_confirmation and tools["wipe"].requires_confirmation


def test_in_memory_dbs_share_nothing_and_leave_nothing_behind():
    import gc

    from ferrule.db.in_memory import InMemoryDb
    from ferrule.models.openai import OpenAIChat

    first, second = InMemoryDb(), InMemoryDb()
    assert first.folder != second.folder and first.folder.is_dir()
    with Runtime() as rt:
        assert first.attributes(rt)["path"].startswith(str(first.folder))
        agent = Agent(rt, OpenAIChat(api_key="sk-test", base_url="http://127.0.0.1:9/v1"), db=first)
        assert agent.get_session(session_id="none") is None
    folder = first.folder
    del first, agent
    gc.collect()
    assert not folder.exists()
