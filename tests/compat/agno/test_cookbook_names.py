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
        "regenerated",
    ]


def test_run_status_refuses_an_unknown_name():
    import pytest
    from ferrule.run.agent import RunOutput

    with pytest.raises(ValueError, match="unknown run status 'done'"):
        RunOutput("run-1", "done")  # type: ignore[arg-type]


def test_requires_user_input_pauses_for_the_fields_the_user_gives(wire, tmp_path):
    """Agno's ``@tool(requires_user_input=True, user_input_fields=[...])``: the run pauses
    with a `UserInputField` per parameter (the model's arguments already in the others),
    the user's values reach the tool on `continue_run`, and the model sees its result."""
    from ferrule.db.sqlite import SqliteDb
    from ferrule.models.openai import OpenAIChat
    from ferrule.tools import tool
    from ferrule.tools.function import UserInputField

    sent: list[tuple[str, str, str]] = []

    @tool(requires_user_input=True, user_input_fields=["to_address"])
    def send_email(subject: str, body: str, to_address: str) -> str:
        """Send an email.

        Args:
            subject: The subject of the email.
            body: The body of the email.
            to_address: The address to send the email to.
        """
        sent.append((subject, body, to_address))
        return f"Sent email to {to_address}"

    wire.calls("send_email", subject="Hello", body="Hello, world!", to_address="model@guess")
    wire.says("The email is on its way.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o-mini"),
        tools=[send_email],
        db=SqliteDb(db_file=str(tmp_path / "agent.db")),
    )
    run = agent.run("Send an email with the subject 'Hello' and the body 'Hello, world!'")
    assert run.is_paused and sent == []
    [requirement] = run.active_requirements
    assert requirement.needs_user_input and not requirement.needs_confirmation
    assert requirement.tool_execution.tool_name == "send_email"
    assert requirement.tool_execution.tool_args["subject"] == "Hello"
    assert run.tools_requiring_user_input == [requirement]
    schema = requirement.user_input_schema
    assert schema is not None and all(isinstance(f, UserInputField) for f in schema)
    assert [(f.name, f.field_type, f.value) for f in schema] == [
        ("subject", str, "Hello"),
        ("body", str, "Hello, world!"),
        ("to_address", str, None),
    ]
    assert schema[2].description == "The address to send the email to."
    schema[2].value = "ana@example.com"  # as the cookbook sets it
    assert not requirement.needs_user_input
    run = agent.continue_run(run_id=run.run_id, requirements=run.requirements)
    assert sent == [("Hello", "Hello, world!", "ana@example.com")]
    assert run.content == "The email is on its way."
    tool_message = wire.bodies[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "ana@example.com" in tool_message["content"]


def test_requires_user_input_refuses_what_it_cannot_use():
    import pytest
    from ferrule.agent.results import ToolConfirmation
    from ferrule.tools import tool
    from ferrule.tools.function import UserInputField
    from ferrule_kernel import InvalidInputError
    from ferrule_kit.content.messages import ToolCall

    def send(to_address: str) -> str:
        """Send."""
        return to_address

    with pytest.raises(InvalidInputError, match="names no parameter of send: cc") as caught:
        tool(requires_user_input=True, user_input_fields=["cc"])(send)
    assert caught.value.details["errors"][0]["path"] == "user_input_fields"
    with pytest.raises(InvalidInputError) as caught:
        tool(requires_user_input=True, user_input_fields="to_address")(send)  # type: ignore[arg-type]
    assert caught.value.details["errors"][0]["path"] == "user_input_fields"
    waiting = ToolConfirmation(
        ToolCall("c1", "send", {}), user_input_schema=[UserInputField("to_address")]
    )
    with pytest.raises(InvalidInputError, match="no user input named bcc"):
        waiting.provide_user_input({"bcc": "x"})
    waiting.provide_user_input({"to_address": "ana@example.com"})
    assert not waiting.needs_user_input


def test_toolkit_stop_after_tool_call_tools_end_the_run_with_the_result(wire):
    """Agno's ``Toolkit(stop_after_tool_call_tools=[...])``: the named tool's result is the
    run's content and the model is not asked again; the toolkit's other tools go on."""
    from ferrule.models.openai import OpenAIChat
    from ferrule.tools import Toolkit

    class Counter(Toolkit):
        def __init__(self) -> None:
            self.counter = 0
            super().__init__(
                name="counter",
                tools=[self.increment_and_stop, self.increment_continue],
                stop_after_tool_call_tools=["increment_and_stop"],
            )

        def increment_and_stop(self) -> str:
            """Add ten and stop."""
            self.counter += 10
            return f"Counter is {self.counter}; stop here."

        def increment_continue(self) -> str:
            """Add one."""
            self.counter += 1
            return f"Counter is {self.counter}."

    toolkit = Counter()
    flags = {t.name: (t.stop_after_tool_call, t.show_result) for t in toolkit.functions.values()}
    assert flags == {"increment_and_stop": (True, True), "increment_continue": (False, False)}
    # the registered functions carry them, as the cookbook checks
    assert toolkit.functions["increment_and_stop"].stop_after_tool_call is True
    assert toolkit.functions["increment_continue"].stop_after_tool_call is False
    wire.calls("increment_continue")
    wire.calls("increment_and_stop")
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), tools=[toolkit])
    run = agent.run("Count up.")
    assert toolkit.counter == 11
    assert run.content == "Counter is 11; stop here."
    assert len(wire.requests) == 2  # not asked again after the stopping tool


def test_toolkit_refuses_a_stop_or_show_name_it_has_not():
    import pytest
    from ferrule.tools import Toolkit
    from ferrule_kernel import InvalidInputError

    def ping() -> str:
        """Ping."""
        return "pong"

    for field in ("stop_after_tool_call_tools", "show_result_tools"):
        with pytest.raises(InvalidInputError, match="names no tool of toolkit 'kit': pong"):
            Toolkit(name="kit", tools=[ping], **{field: ["pong"]})


def test_run_input_from_agnos_path_is_what_a_pre_hook_gets(wire):
    """``from ferrule.run.agent import RunInput`` (Agno's path): a pre-hook gets one and
    may change the input the model sees."""
    from ferrule.models.openai import OpenAIChat
    from ferrule.run.agent import RunInput

    seen: list[object] = []

    def tidy(run_input: RunInput) -> None:
        seen.append(type(run_input))
        run_input.input_content = run_input.input_content_string().strip().upper()

    wire.says("Hello!")
    agent = Agent(model=OpenAIChat(id="gpt-4o-mini"), pre_hooks=[tidy])
    assert agent.run("   say hello   ").content == "Hello!"
    assert seen == [RunInput]
    assert wire.last["messages"][-1]["content"] == "SAY HELLO"


def test_utils_log_writes_to_agnos_logger():
    import logging

    from ferrule.utils.log import log_info, log_warning, logger

    assert isinstance(logger, logging.Logger) and logger.name == "agno"
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        log_info("loaded %d documents", False, "*", 3)
        log_warning("slow")
    finally:
        logger.removeHandler(handler)
    assert [(r.levelname, r.getMessage()) for r in seen] == [
        ("INFO", "loaded 3 documents"),
        ("WARNING", "slow"),
    ]


def test_ollama_responses_talks_to_ollamas_responses_endpoint_without_openais_key(
    wire, monkeypatch
):
    """``OllamaResponses`` (Agno's): the Responses wire at ``$OLLAMA_HOST/v1/responses``;
    the OpenAI key in the environment is not sent to Ollama."""
    from ferrule.models.ollama import OllamaResponses
    from ferrule_openai.testing import responses_reply

    monkeypatch.setenv("OLLAMA_HOST", wire.server.url.removeprefix("http://"))
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)
    # OpenAI's endpoint is OpenAI's own again: the wire stands in for Ollama alone
    monkeypatch.delenv("OPENAI_BASE_URL")
    wire.replies(responses_reply("Hello from gpt-oss."))
    run = Agent(model=OllamaResponses(id="gpt-oss:20b")).run("Say hello")
    assert run.content == "Hello from gpt-oss."
    [request] = wire.requests
    assert request.path == "/v1/responses"
    assert request.json["model"] == "gpt-oss:20b"
    assert "authorization" not in request.headers


def test_async_sqlite_db_serves_an_async_agent_from_the_same_store(wire, tmp_path):
    import asyncio

    from ferrule.db.base import AsyncBaseDb
    from ferrule.db.sqlite import AsyncSqliteDb
    from ferrule.models.openai import OpenAIChat

    assert issubclass(AsyncSqliteDb, AsyncBaseDb)
    wire.says("Ottawa.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o-mini"), db=AsyncSqliteDb(db_file=str(tmp_path / "a.db"))
    )

    async def main() -> None:
        run = await agent.arun("Capital of Canada?", session_id="s1")
        stored = await agent.aget_run_output(run.run_id, session_id="s1")
        assert stored is not None and stored.content == "Ottawa."

    asyncio.run(main())


def test_an_agent_without_a_model_uses_agnos_default(wire):
    """``Agent()`` with no model, as several cookbook files write it: Agno's default, an
    ``OpenAIResponses(id="gpt-5.4")``, on OpenAI's endpoint with its key."""
    from ferrule.models.openai import OpenAIResponses
    from ferrule_openai.testing import responses_reply

    wire.replies(responses_reply("Hi."))
    agent = Agent(instructions="Be brief.")
    assert isinstance(agent.model, OpenAIResponses) and agent.model.id == "gpt-5.4"
    assert agent.run("Hello").content == "Hi."
    [request] = wire.requests
    assert request.path == "/v1/responses" and request.json["model"] == "gpt-5.4"
