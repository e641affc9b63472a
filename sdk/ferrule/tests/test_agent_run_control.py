"""Agno's run control on the test model: the arguments checked by name, the RunContext a
tool, an instructions function and a tool factory receive, stop_after_tool_call /
show_result, RetryAgentRun and StopAgentRun, external execution, yield_run_output."""

from __future__ import annotations

import pytest
from ferrule import Agent, Runtime, Tool, tool
from ferrule.exceptions import RetryAgentRun, StopAgentRun
from ferrule.run import RunContext
from ferrule.run.agent import RunOutput
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def field_of(error: InvalidInputError) -> str:
    return error.details["errors"][0]["path"]


def requests_of(agent: Agent) -> list:
    return agent.runtime.kernel.component(agent._component).requests


def sent_system(agent: Agent) -> str:
    return requests_of(agent)[-1].messages[0].text


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("markdown", "yes"),
        ("enable_agentic_state", 1),
        ("update_memory_on_run", None),
        ("system_message", 42),
    ],
)
def test_bad_arguments_are_refused_by_name(rt, option, value):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, TestModel(["x"]), **{option: value})
    assert field_of(caught.value) == option


def test_tools_must_be_a_list_or_a_factory(rt):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, TestModel(["x"]), tools=42)
    assert field_of(caught.value) == "tools"

    # a Tool is awaitable with arguments, so callable, but one tool is not a factory
    def echo(text: str) -> str:
        """Say it back."""
        return text

    for one in (Tool.from_function(echo), tool(echo)):
        with pytest.raises(InvalidInputError) as caught:
            Agent(rt, TestModel(["x"]), tools=one)
        assert field_of(caught.value) == "tools"


def test_tool_flags_are_checked():
    with pytest.raises(InvalidInputError) as caught:
        tool(stop_after_tool_call="always")
    assert field_of(caught.value) == "stop_after_tool_call"


def test_update_memory_on_run_is_enable_user_memories(rt):
    with pytest.raises(InvalidInputError) as caught:  # memories are kept in a db
        Agent(rt, TestModel(["x"]), update_memory_on_run=True)
    assert field_of(caught.value) == "db"


def test_yield_run_output_must_be_a_flag(rt):
    with Agent(rt, TestModel(["x"])) as agent, pytest.raises(InvalidInputError) as caught:
        agent.run("hi", stream=True, yield_run_output="yes")
    assert field_of(caught.value) == "yield_run_output"


def test_instructions_get_the_run_context(rt):
    seen: list[RunContext] = []

    def instructions(run_context: RunContext, agent: Agent) -> str:
        seen.append(run_context)
        return f"Help {run_context.user_id} as {agent.name}."

    with Agent(rt, TestModel(["ok"]), name="Ada", instructions=instructions) as agent:
        run = agent.run("hi", user_id="bob", session_id="s1")
        assert "Help bob as Ada." in sent_system(agent)
    assert seen[0].run_id == run.run_id and seen[0].session_id == "s1"


def test_markdown_instruction_is_added_without_an_output_schema(rt):
    with Agent(rt, TestModel(["ok"]), markdown=True) as agent:
        agent.run("hi")
        assert "Use markdown to format your answers." in sent_system(agent)


def test_tool_factory_sees_the_runs_state(rt):
    def cheap() -> str:
        """The cheap plan."""
        return "cheap"

    def premium() -> str:
        """The premium plan."""
        return "premium"

    def factory(session_state: dict) -> list:
        return [premium] if session_state.get("paid") else [cheap]

    model = TestModel([{"tool_calls": [call("premium")]}, "done"])
    with Agent(rt, model, tools=factory) as agent:
        run = agent.run("plan?", session_state={"paid": True})
        sent = requests_of(agent)[0]
    assert [t.function.name for t in sent.tools] == ["premium"]
    assert run.messages[2].content == "premium"


def test_stop_after_tool_call_ends_the_run_with_the_result(rt):
    @tool(stop_after_tool_call=True)
    def lookup() -> str:
        """Look it up."""
        return "found it"

    model = TestModel([{"tool_calls": [call("lookup")]}, "never asked"])
    with Agent(rt, model, tools=[lookup]) as agent:
        run = agent.run("find")
        assert len(requests_of(agent)) == 1  # the model is not asked again
    assert run.status == "completed" and run.content == "found it"


def test_retry_agent_run_shows_the_message_and_the_model_tries_again(rt):
    tries: list[int] = []

    def pick(n: int) -> str:
        """Pick a number."""
        tries.append(n)
        if n < 3:
            raise RetryAgentRun("pick a number of at least 3")
        return f"picked {n}"

    model = TestModel(
        [
            {"tool_calls": [call("pick", n=1)]},
            {"tool_calls": [call("pick", n=2)]},
            {"tool_calls": [call("pick", n=5)]},
            "5",
        ]
    )
    with Agent(rt, model, tools=[pick]) as agent:
        run = agent.run("pick")
    assert tries == [1, 2, 5]
    assert run.content == "5"
    assert [m.content for m in run.messages if m.role == "tool"] == [
        "pick a number of at least 3",
        "pick a number of at least 3",
        "picked 5",
    ]


def test_stop_agent_run_ends_the_run_cleanly(rt):
    def launch() -> str:
        """Launch."""
        raise StopAgentRun("launch aborted by policy")

    model = TestModel([{"tool_calls": [call("launch")]}, "never asked"])
    with Agent(rt, model, tools=[launch]) as agent:
        run = agent.run("go")
    assert run.status == "completed" and run.content == "launch aborted by policy"
    assert run.error is None


def test_external_execution_waits_for_the_callers_result(rt):
    @tool(external_execution=True)
    def shell(command: str) -> str:
        """Run a shell command."""
        raise AssertionError("never run by the agent")

    model = TestModel([{"tool_calls": [call("shell", command="uptime")]}, "up 3 days"])
    with Agent(rt, model, tools=[shell]) as agent:
        paused = agent.run("uptime?")
        assert paused.is_paused
        assert [r.tool_call.name for r in paused.tools_awaiting_external_execution] == ["shell"]
        assert paused.tools_requiring_confirmation == []
        paused.active_requirements[0].set_external_execution_result("up 3 days, 2 users")
        done = agent.continue_run(paused.run_id, paused.requirements)
    assert done.content == "up 3 days"
    assert [m.content for m in done.messages if m.role == "tool"] == ["up 3 days, 2 users"]


def test_agentic_state_tool_changes_the_session_state(rt):
    updates = {"session_state_updates": {"mood": "happy"}}
    model = TestModel([{"tool_calls": [call("update_session_state", **updates)]}, "noted"])
    with Agent(rt, model, enable_agentic_state=True, session_state={"mood": "sad"}) as agent:
        run = agent.run("I'm happy now")
    assert run.session_state == {"mood": "happy"}


def test_yield_run_output_ends_the_stream(rt):
    with Agent(rt, TestModel(["hello"])) as agent:
        events = list(agent.run("hi", stream=True, yield_run_output=True))
    assert isinstance(events[-1], RunOutput)
    assert events[-1].content == "hello"
    assert not any(isinstance(e, RunOutput) for e in events[:-1])


def test_memory_manager_on_its_own_refuses_bad_use(rt, tmp_path):
    from ferrule.db import SqliteDb
    from ferrule.memory import MemoryManager

    with pytest.raises(InvalidInputError) as caught:
        MemoryManager(db="not a db")
    assert field_of(caught.value) == "db"
    with pytest.raises(InvalidInputError) as caught:
        MemoryManager(runtime=rt).get_user_memories()
    assert field_of(caught.value) == "db"
    manager = MemoryManager(db=SqliteDb(db_file=str(tmp_path / "m.db")), runtime=rt)
    with pytest.raises(InvalidInputError) as caught:
        manager.create_user_memories(message="I like tea", user_id="u")
    assert field_of(caught.value) == "model"
    with pytest.raises(InvalidInputError) as caught:
        manager.replace_user_memory("missing", "x", user_id="u")
    assert field_of(caught.value) == "memory_id"
    kept = manager.add_user_memory("Likes tea", user_id="u")
    assert [m.memory_id for m in manager.get_user_memories("u")] == [kept]
    manager.clear_user_memories("u")
    assert manager.get_user_memories("u") == []


def test_memory_manager_creates_memories_with_its_model(rt, tmp_path):
    from ferrule.db import SqliteDb
    from ferrule.memory import MemoryManager

    model = TestModel([{"tool_calls": [call("add_memory", memory="Likes tea")]}, "done"])
    manager = MemoryManager(model, db=SqliteDb(db_file=str(tmp_path / "m.db")), runtime=rt)
    manager.create_user_memories(message="I like tea", user_id="u")
    assert [m.memory for m in manager.get_user_memories("u")] == ["Likes tea"]


def test_use_json_mode_asks_for_any_json_object_and_describes_the_schema(rt):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with Agent(rt, TestModel(['{"n": 3}']), output_schema=schema, use_json_mode=True) as agent:
        run = agent.run("three")
        sent = requests_of(agent)[-1]
    assert run.content == {"n": 3}
    assert sent.output_schema == {"type": "object"}
    assert '"required": ["n"]' in sent.messages[0].text


def test_show_result_puts_the_result_before_the_reply(rt):
    @tool(show_result=True)
    def weather() -> str:
        """Today's weather."""
        return "Sunny, 21 C"

    model = TestModel([{"tool_calls": [call("weather")]}, "A fine day."])
    with Agent(rt, model, tools=[weather]) as agent:
        run = agent.run("weather?")
    assert run.content == "Sunny, 21 C\nA fine day."


def test_stop_after_tool_call_without_show_result_ends_with_no_content(rt):
    @tool(stop_after_tool_call=True, show_result=False)
    def record() -> str:
        """Record the call."""
        return "recorded"

    model = TestModel([{"tool_calls": [call("record")]}, "never asked"])
    with Agent(rt, model, tools=[record]) as agent:
        run = agent.run("record it")
    assert run.status == "completed" and run.content == ""
    assert [m.content for m in run.messages if m.role == "tool"] == ["recorded"]
