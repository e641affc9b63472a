"""What Agno's own cookbook files needed that ferrule lacked, found by replaying them
(``replay_agno.py`` beside this file): each name or keyword checked for its behaviour on
the `wire` (conftest) or in the objects a program gets back."""

from __future__ import annotations

from ferrule.agent import Agent


def test_vllm_reads_its_server_and_key_from_the_environment(wire, monkeypatch):
    """Agno's VLLM takes ``$VLLM_BASE_URL`` / ``$VLLM_API_KEY``; ``top_k`` and
    ``enable_thinking`` reach vLLM in the body, where vLLM reads them."""
    from ferrule.models.vllm import VLLM

    monkeypatch.setenv("VLLM_BASE_URL", wire.server.url + "/v1")
    monkeypatch.setenv("VLLM_API_KEY", "vllm-test-key")
    wire.says("Qwen here.")
    model = VLLM(id="Qwen/Qwen2.5-7B-Instruct", top_k=20, enable_thinking=False)
    run = Agent(model=model).run("Who are you?")
    assert run.content == "Qwen here."
    [request] = wire.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer vllm-test-key"
    assert request.json["model"] == "Qwen/Qwen2.5-7B-Instruct"
    assert request.json["top_k"] == 20
    assert request.json["chat_template_kwargs"] == {"enable_thinking": False}


def test_vllm_base_url_argument_wins_over_the_environment(monkeypatch):
    from ferrule.models.vllm import VLLM

    monkeypatch.setenv("VLLM_BASE_URL", "http://127.0.0.1:9/v1")
    assert VLLM(id="m", base_url="http://127.0.0.1:8123/v1").base_url == "http://127.0.0.1:8123/v1"
    monkeypatch.delenv("VLLM_BASE_URL")
    assert VLLM(id="m").base_url == "http://localhost:8000/v1"
