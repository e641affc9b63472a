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


def test_run_status_is_agnos_enum_equal_to_the_names_ferrule_emits(wire, tmp_path):
    """``run.status == RunStatus.completed`` as in the cookbook, and the plain name still
    works: a finished run, a paused one, and one read back from the db."""
    import json

    from ferrule.db.sqlite import SqliteDb
    from ferrule.models.openai import OpenAIChat
    from ferrule.run import RunStatus
    from ferrule.tools import tool

    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    wire.says("Done.")
    wire.calls("delete_file", path="old.log")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o-mini"),
        tools=[delete_file],
        db=SqliteDb(db_file=str(tmp_path / "agent.db")),
    )
    done = agent.run("Say done.")
    assert done.status is RunStatus.completed
    assert done.status == "completed" and str(done.status) == "completed"
    assert json.dumps({"status": done.status}) == '{"status": "completed"}'
    paused = agent.run("Delete old.log")
    assert paused.status is RunStatus.paused and paused.is_paused
    assert paused.status != RunStatus.completed
    stored = agent.get_run_output(paused.run_id)
    assert stored is not None and stored.status is RunStatus.paused
    assert [s.value for s in RunStatus] == [
        "pending",
        "running",
        "completed",
        "paused",
        "error",
        "cancelled",
    ]


def test_run_status_refuses_an_unknown_name():
    import pytest
    from ferrule.run.agent import RunOutput

    with pytest.raises(ValueError, match="unknown run status 'done'"):
        RunOutput("run-1", "done")  # type: ignore[arg-type]
