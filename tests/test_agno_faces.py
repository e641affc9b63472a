"""Agno's import paths (issue 17) are faces over ferrule's own objects: each routes to the
component ferrule's own class would, an agent built from them with no Runtime answers
through the provider's real plugin (against a loopback server found through the
provider's usual environment variable), and the default runtime it used is stopped at
exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from ferrule import APIModel, LocalModel, Runtime
from ferrule.agent import Agent
from ferrule.knowledge.embedder import GeminiEmbedder, MiniLMEmbedder, OpenAIEmbedder
from ferrule.knowledge.embedder.google import GeminiEmbedder as GoogleFace
from ferrule.knowledge.embedder.openai import OpenAIEmbedder as OpenAIFace
from ferrule.knowledge.embedder.sentence_transformer import SentenceTransformerEmbedder
from ferrule.knowledge.vectordb import PgVector, SqliteVecDb
from ferrule.models.anthropic import Claude
from ferrule.models.google import Gemini
from ferrule.models.llama_cpp import LlamaCpp
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.models.xai import xAI
from ferrule.shared_runtime import _stop_default_runtime
from ferrule.tools.duckduckgo import DuckDuckGoTools
from ferrule.vectordb.pgvector import PgVector as PgVectorFace
from ferrule.vectordb.sqlite_vec import SqliteVecDb as SqliteVecFace
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.parts import ANTHROPIC, GEMINI, OPENAI, OPENAI_COMPATIBLE
from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
from ferrule_kit.testing.dialects import reply
from ferrule_kit.testing.loopback import LoopbackServer

SECRET = "sk-face-secret-0123456789"


@pytest.fixture
def default_runtime():
    yield
    _stop_default_runtime()


@pytest.mark.parametrize(
    ("face", "same", "component_type"),
    [
        (OpenAIChat(id="gpt-4"), APIModel("gpt-4", "openai"), "openai_language_model"),
        (
            Claude(),
            APIModel("claude-sonnet-4-5-20250929", "anthropic", options={"max_tokens": 8192}),
            "anthropic_language_model",
        ),
        (
            Gemini(id="gemini-2.5-pro"),
            APIModel("gemini-2.5-pro", "gemini"),
            "gemini_language_model",
        ),
        (xAI(id="grok-3"), APIModel("grok-3", "xai"), "xai_language_model"),
        (
            OpenAILike(id="local", base_url="http://127.0.0.1:8000/v1"),
            APIModel("local", "openai", base_url="http://127.0.0.1:8000/v1"),
            "openai_language_model",
        ),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, str) else v,
)
def test_a_provider_face_is_the_api_model_it_stands_for(face, same, component_type):
    assert isinstance(face, APIModel)
    with Runtime() as rt:
        route = face.route(rt.kernel)
        assert route == same.route(rt.kernel)
    assert route.component_type == component_type


def test_settings_of_a_face_become_the_components_attributes_and_keys_stay_hidden():
    face = OpenAIChat(id="gpt-4o", api_key=SECRET, organization="org-1", options={"max_retries": 0})
    with Runtime() as rt:
        attributes = face.route(rt.kernel).attributes
    assert attributes == {
        "model": "gpt-4o",
        "organization": "org-1",
        "max_retries": 0,
        "api_key": SECRET,
    }
    assert SECRET not in repr(face)
    assert Claude(max_tokens=512).options == {"max_tokens": 512}
    # Agno's sampling parameters are the model's inference inputs, not component attributes
    assert OpenAIChat(id="gpt-4o", temperature=0.2).infer_options == {"temperature": 0.2}
    with pytest.raises(TypeError):
        OpenAIChat(id="gpt-4o", temprature=0.2)  # type: ignore[call-arg]  # a misspelling


def test_llama_cpp_always_runs_llama_cpp_and_follows_the_aliases(monkeypatch):
    monkeypatch.setenv("FERRULE_MODEL_ALIASES", f"Qwen/Qwen3-0.6B={DEFAULT_LOCAL_MODEL}")
    with Runtime() as rt:
        route = LlamaCpp("Qwen/Qwen3-0.6B", options={"n_ctx": 2048}).route(rt.kernel)
        assert route.component_type == "llamacpp_language_model"
        assert route.attributes == {"model": DEFAULT_LOCAL_MODEL, "n_ctx": 2048}
        assert (
            LocalModel("Qwen/Qwen3-0.6B").route(rt.kernel).attributes["model"]
            == DEFAULT_LOCAL_MODEL
        )


def test_knowledge_faces_are_ferrules_classes():
    assert (OpenAIFace, GoogleFace, SqliteVecFace) == (OpenAIEmbedder, GeminiEmbedder, SqliteVecDb)
    # Agno's PgVector is a VectorDb of its own that describes the store as ferrule's does
    face = PgVectorFace("documents", db_url="postgresql://u:p@localhost/db", schema="docs")
    described = PgVector(
        table_name="documents", db_url="postgresql://u:p@localhost/db", schema="docs"
    )
    attributes = face.attributes(None)
    assert {k: attributes[k] for k in described.attributes(None)} == described.attributes(None)
    assert face.component_type == described.component_type
    # Agno's local embedder is ferrule's MiniLM, by Agno's signature (dimensions first)
    local = SentenceTransformerEmbedder()
    assert isinstance(local, MiniLMEmbedder) and local.component_type == "minilm_embedder"
    assert local.attributes(None) == MiniLMEmbedder().attributes(None) == {}
    batched = SentenceTransformerEmbedder(384, True, 8, "all-MiniLM-L6-v2")
    assert batched.attributes(None) == MiniLMEmbedder(8).attributes(None) == {"batch_size": 8}
    with pytest.raises(InvalidInputError) as info:
        SentenceTransformerEmbedder(id="sentence-transformers/all-mpnet-base-v2")
    assert info.value.errors[0]["path"] == "id"


@pytest.mark.parametrize(
    ("face", "dialect", "variable", "suffix", "path"),
    [
        (OpenAIChat(id="gpt-4"), OPENAI, "OPENAI_BASE_URL", "/v1", "/v1/chat/completions"),
        (Claude(), ANTHROPIC, "ANTHROPIC_BASE_URL", "", "/v1/messages"),
        (
            Gemini(),
            GEMINI,
            "GOOGLE_GEMINI_BASE_URL",
            "",
            "/v1beta/models/gemini-3.5-flash:streamGenerateContent",
        ),
        (xAI(), OPENAI_COMPATIBLE, "XAI_BASE_URL", "/v1", "/v1/chat/completions"),
    ],
    ids=["openai", "anthropic", "gemini", "xai"],
)
def test_an_agent_without_a_runtime_answers_through_the_providers_usual_variable(
    face, dialect, variable, suffix, path, monkeypatch, default_runtime
):
    with LoopbackServer() as server:
        monkeypatch.setenv(variable, server.url + suffix)
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "XAI_API_KEY"):
            monkeypatch.setenv(key, "test-key")
        server.script(reply(dialect, "Hello from the loopback."))
        agent = Agent(name="Assistant", model=face, description="A helpful AI assistant")
        response = agent.run("What is machine learning?")
        assert response.content == "Hello from the loopback."
        assert [r.path for r in server.requests] == [path]
        agent.delete()


def test_duckduckgo_tools_search_through_the_operator_and_feed_the_model(
    monkeypatch, default_runtime
):
    from pathlib import Path

    from ferrule_kit.testing.loopback import Reply
    from ferrule_testmodel import TestModel

    results = Path(__file__).parents[1] / "plugins/duckduckgo/tests/replies/results.html"
    model = TestModel(
        [
            {"tool_calls": [{"name": "duckduckgo_search", "arguments": {"query": "AI news"}}]},
            "Done.",
        ]
    )
    with LoopbackServer() as search:
        search.script(Reply(200, {}, [results.read_bytes()], "text/html"))
        tools = DuckDuckGoTools(
            enable_news=False, fixed_max_results=2, modifier="site:example.org", base_url=search.url
        )
        agent = Agent(model=model, tools=[tools])
        response = agent.run("What is new in AI?")
        assert response.content == "Done."
        form = search.requests[0].body.decode()
        assert "q=site%3Aexample.org+AI+news" in form
    descriptions = str(next(iter(model_requests(agent))).tools)
    assert "duckduckgo_search" in descriptions
    assert "duckduckgo_news" not in descriptions and "max_results" not in descriptions
    tool_message = response.messages[-2]
    assert tool_message.role == "tool"
    assert "The state of AI in 2026: a review" in tool_message.content
    assert "Long-context" not in tool_message.content  # fixed_max_results=2
    agent.delete()


def model_requests(agent: Agent) -> list:
    return agent.runtime.kernel.component(agent._component).requests


def test_duckduckgo_tools_list_what_is_enabled():
    import asyncio

    names = [t.name for t in asyncio.run(DuckDuckGoTools().list_tools())]
    assert names == ["duckduckgo_search", "duckduckgo_news"]
    search = asyncio.run(DuckDuckGoTools(enable_news=False).list_tools())[0]
    assert search.parameters["required"] == ["query"]
    assert "max_results" in search.parameters["properties"]


def test_the_default_runtime_an_agent_made_is_stopped_at_exit(tmp_path):
    program = textwrap.dedent(
        """
        import atexit
        from ferrule import shared_runtime
        from ferrule.agent import Agent
        from ferrule_testmodel import TestModel

        seen = {}

        def after_ferrules_own_handler():  # atexit runs handlers last-registered first
            print("stopped:", seen["runtime"].stopped, "left:", shared_runtime._default)

        atexit.register(after_ferrules_own_handler)
        agent = Agent(model=TestModel(["Hi."]))
        print(agent.run("Hello").content)
        seen["runtime"] = agent.runtime
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["Hi.", "stopped: True left: None"]


def test_ollama_finds_its_server_through_ollama_host_and_vllm_has_its_default(
    monkeypatch, default_runtime
):
    from ferrule.models.ollama import Ollama
    from ferrule.models.vllm import VLLM

    assert VLLM("Qwen/Qwen3-8B").base_url == "http://localhost:8000/v1"
    assert Ollama("qwen3", host="gpu-box:11434").base_url == "http://gpu-box:11434/v1"
    with LoopbackServer() as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url.removeprefix("http://"))
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # never sent to a server not OpenAI's
        server.script(reply(OPENAI_COMPATIBLE, "Hi from Ollama."))
        agent = Agent(model=Ollama("qwen3:0.6b"))
        assert agent.run("Hi").content == "Hi from Ollama."
        (request,) = server.requests
        assert request.path == "/v1/chat/completions"
        assert request.json["model"] == "qwen3:0.6b"
        assert SECRET not in str(request.headers)
        agent.delete()
