"""The Agent reference's hooks and conveniences, on the test model: pre- and post-hooks
(functions, async functions, guardrail objects) and the checks that stop a run, tool
hooks around each call, `deep_copy`, the static `cancel_run`, `print_response` and
`cli_app`, the reasoning and parser models, Ailoy's ``ignore_reasoning_messages`` and
``debug_mode``."""

from __future__ import annotations

import asyncio
import inspect
import io
import logging
import threading
import time

import attrs
import pytest
from ferrule import Agent, AsyncRuntime, Runtime
from ferrule.agent import (
    BaseGuardrail,
    CheckTrigger,
    HookError,
    InputCheckError,
    OutputCheckError,
    RunInput,
    RunOutput,
)
from ferrule.db import SqliteDb
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def sent_texts(agent: Agent, component: str | None = None) -> list[list[str]]:
    """The texts of the messages each request to the model carried."""
    requests = agent.runtime.kernel.component(component or agent._component).requests
    return [[m.text for m in request.messages] for request in requests]


def last_user_text(agent: Agent) -> str:
    return sent_texts(agent)[-1][-1]


# -- pre-hooks -------------------------------------------------------------------------------


def shout(run_input: RunInput) -> None:
    run_input.input_content = run_input.input_content_string().upper()


def test_a_pre_hook_changes_what_the_model_sees_and_what_is_stored(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "agent.db")
    with Agent(rt, TestModel(), pre_hooks=[shout], db=db) as agent:
        output = agent.run("hello there")
        assert last_user_text(agent) == "HELLO THERE"
        assert output.content == "HELLO THERE"
        stored = agent.get_last_run_output()
        assert stored is not None and stored.messages[0].content == "HELLO THERE"


@settings(max_examples=25, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=200))
def test_the_model_sees_exactly_what_the_pre_hooks_leave(rt, text):
    def reverse(run_input: RunInput) -> None:
        run_input.input_content = run_input.input_content_string()[::-1] + "."

    seen: list[str] = []
    with Agent(
        rt, TestModel(), pre_hooks=[reverse, lambda run_input: seen.append(run_input.input_content)]
    ) as agent:
        agent.run(text)
        assert seen == [text[::-1] + "."]
        assert last_user_text(agent) == text[::-1] + "."


def test_pre_hooks_see_every_kind_of_input(rt, langmodel):
    seen: list[str] = []

    def record(run_input: RunInput) -> None:
        seen.append(run_input.input_content_string())

    conversation = [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    with Agent(rt, TestModel(), pre_hooks=[record]) as agent:
        list(agent.query("a query"))
        agent.run({"city": "Oslo"})
        agent.run(conversation)  # Agno's run: a list of messages is its input
    with Agent(langmodel(rt, TestModel()), pre_hooks=[record]) as agent:
        list(agent.run(conversation))  # Ailoy 0.2's: the whole conversation, streamed
    assert seen == ["a query", '{"city": "Oslo"}', "one\ntwo", "one\ntwo"]


def refuse_secrets(run_input: RunInput) -> None:
    if "secret" in run_input.input_content_string():
        raise InputCheckError("no secrets here", check_trigger=CheckTrigger.INPUT_NOT_ALLOWED)


def test_an_input_check_stops_the_run_before_the_model_and_the_db(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "agent.db")
    with Agent(rt, TestModel(), pre_hooks=[refuse_secrets], db=db) as agent:
        refused = agent.run("my secret is 42")
        assert refused.status == "error" and refused.content == "no secrets here"
        assert isinstance(refused.error, InputCheckError)
        assert refused.error.check_trigger is CheckTrigger.INPUT_NOT_ALLOWED
        assert refused.error.to_dict()["details"] == {"check_trigger": "input_not_allowed"}
        events = list(agent.run("another secret", stream=True, stream_events=True))
        assert [e.event for e in events] == ["PreHookStarted", "RunError"]
        assert events[0].pre_hook_name == "refuse_secrets"
        assert isinstance(events[1].error, InputCheckError)
        responses = list(agent.query("a secret again"))
        assert [(r.type, r.content) for r in responses] == [("error", "no secrets here")]
        assert sent_texts(agent) == []  # the model never saw any of them
        assert agent.get_last_run_output() is None  # and nothing was stored
        assert agent.run("fine").content == "fine"


def test_hooks_get_the_arguments_they_name_sync_or_async(rt):
    got: dict[str, object] = {}

    async def named(run_input: RunInput, agent: Agent, user_id: str, metadata: dict) -> None:
        await asyncio.sleep(0)
        got.update(input=run_input.input_content, agent=agent, user=user_id, meta=metadata)

    def everything(**kwargs: object) -> None:
        got["all"] = sorted(kwargs)

    with Agent(rt, TestModel(), pre_hooks=[named, everything], user_id="ada") as agent:
        agent.run("hi", metadata={"k": 1})
        assert got["agent"] is agent
    assert (got["input"], got["user"], got["meta"]) == ("hi", "ada", {"k": 1})
    assert got["all"] == [
        "agent",
        "debug_mode",
        "metadata",
        "run_context",
        "run_input",
        "session_id",
        "user_id",
    ]


class TopicGuardrail(BaseGuardrail):
    def __init__(self, banned: str) -> None:
        self.banned = banned

    def check(self, run_input: RunInput) -> None:
        if self.banned in run_input.input_content_string().lower():
            raise InputCheckError(
                f"{self.banned} is off topic", check_trigger=CheckTrigger.OFF_TOPIC
            )


def test_a_guardrail_object_checks_the_input(rt):
    with Agent(rt, TestModel(), pre_hooks=[TopicGuardrail("football")]) as agent:
        refused = agent.run("Who won the Football cup?")
        assert refused.content == "football is off topic"
        assert isinstance(refused.error, InputCheckError)
        assert refused.error.check_trigger is CheckTrigger.OFF_TOPIC
        assert agent.run("Who wrote Hamlet?").content == "Who wrote Hamlet?"


def test_a_hook_that_breaks_stops_the_run_with_hook_error(rt):
    def broken(run_input: RunInput) -> None:
        raise KeyError("oops")

    with Agent(rt, TestModel(), pre_hooks=[refuse_secrets, broken]) as agent:
        output = agent.run("hi")
    assert output.status == "error" and isinstance(output.error, HookError)
    assert output.error.details == {"hook": broken.__qualname__, "index": 1}
    assert "KeyError" in output.error.message


@pytest.mark.parametrize("hooks", [["not callable"], "shout", [42]])
def test_hooks_must_be_functions_or_guardrails(rt, hooks):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, TestModel(), pre_hooks=hooks)
    assert caught.value.errors[0]["path"] in ("pre_hooks", "pre_hooks[0]")


def test_pre_hooks_run_once_for_a_run_that_pauses_and_continues(rt):
    calls: list[str] = []

    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    from ferrule import Tool

    tool = Tool.from_function(delete_file, requires_confirmation=True)
    model = TestModel([{"tool_calls": [{"name": "delete_file", "arguments": {"path": "x"}}]}, "ok"])
    hook = lambda run_input: calls.append(run_input.input_content_string())  # noqa: E731
    with Agent(rt, model, tools=[tool], pre_hooks=[hook]) as agent:
        paused = agent.run("remove x")
        assert paused.is_paused
        done = agent.continue_run(paused.run_id, confirm=True)
        assert done.content == "ok"
    assert calls == ["remove x"]


# -- post-hooks ------------------------------------------------------------------------------


def test_post_hooks_see_and_change_the_output(rt, tmp_path):
    async def sign(run_output: RunOutput) -> None:
        run_output.content += " -- the agent"
        run_output.metadata["signed"] = True

    db = SqliteDb(db_file=tmp_path / "agent.db")
    with Agent(rt, TestModel(["Hello"]), post_hooks=[sign], db=db) as agent:
        output = agent.run("hi")
        assert (output.content, output.metadata) == ("Hello -- the agent", {"signed": True})
        stored = agent.get_last_run_output()
        assert stored is not None and stored.content == "Hello -- the agent"


def test_an_output_check_fails_the_run(rt):
    def no_numbers(run_output: RunOutput) -> None:
        if any(ch.isdigit() for ch in run_output.content):
            raise OutputCheckError("numbers are not allowed")

    with Agent(rt, TestModel(["It costs 42", "It is cheap"]), post_hooks=[no_numbers]) as agent:
        events = list(agent.run("price?", stream=True))
        assert events[-1].event == "RunError"
        assert isinstance(events[-1].error, OutputCheckError)
        assert events[-1].error.check_trigger is CheckTrigger.OUTPUT_NOT_ALLOWED
        assert events[-1].content == "numbers are not allowed"
        assert agent.run("price?").content == "It is cheap"


def test_post_hooks_get_the_structured_content(rt):
    @attrs.define
    class City:
        name: str

    seen = []
    with Agent(
        rt,
        TestModel([{"output": {"name": "Oslo"}}]),
        output_schema=City,
        post_hooks=[lambda run_output: seen.append(run_output.content)],
    ) as agent:
        assert agent.run("a city").content == City("Oslo")
    assert seen == [City("Oslo")]


# -- tool hooks ------------------------------------------------------------------------------


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_tool_hooks_wrap_each_call_first_outermost(rt):
    trace: list[str] = []

    def outer(function_name, function_call, arguments):
        trace.append(f"outer before {function_name}{sorted(arguments.items())}")
        result = function_call(**{**arguments, "b": 10})  # changes an argument
        trace.append(f"outer after {result}")
        return result * 2  # and the result

    async def inner(function_name, function_call, arguments, agent):
        assert isinstance(agent, Agent)
        trace.append(f"inner before {arguments['b']}")
        result = await function_call(**arguments)
        trace.append(f"inner after {result}")
        return result

    model = TestModel([{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "done"])
    with Agent(rt, model, tools=[add], tool_hooks=[outer, inner]) as agent:
        output = agent.run("add")
    assert [m.content for m in output.messages if m.role == "tool"] == ["22"]
    assert trace == [
        "outer before add[('a', 1), ('b', 2)]",
        "inner before 10",
        "inner after 11",
        "outer after 11",
    ]


def test_a_tool_hook_may_refuse_the_call(rt):
    calls = []

    def guarded(a: int, b: int) -> int:
        """Add two numbers."""
        calls.append((a, b))
        return a + b

    def refuse(function_name, function_call, arguments):
        raise PermissionError(f"{function_name} is not allowed now")

    model = TestModel([{"tool_calls": [{"name": "guarded", "arguments": {"a": 1, "b": 2}}]}, "ok"])
    with Agent(rt, model, tools=[guarded], tool_hooks=[refuse]) as agent:
        output = agent.run("add")
    assert calls == []
    assert [m.content for m in output.messages if m.role == "tool"] == [
        '{"error": "PermissionError: guarded is not allowed now"}'
    ]


def test_hooks_on_an_async_runtime():
    def plus_100(function_name, function_call, arguments):
        return function_call(**arguments) + 100  # a sync hook: its call blocks its thread

    async def main() -> list[str]:
        async with AsyncRuntime() as runtime:
            model = TestModel(
                [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "done"]
            )
            agent = Agent(runtime, model, tools=[add], tool_hooks=[plus_100], pre_hooks=[shout])
            output = await agent.arun("go")
            await agent.adelete()
            return [m.content for m in output.messages]

    assert asyncio.run(main()) == ["GO", "", "103", "done"]


# -- deep_copy and cancel_run ----------------------------------------------------------------


def test_deep_copy_keeps_every_setting_and_applies_updates(rt):
    agent = Agent(
        rt,
        TestModel(),
        name="Helper",
        instructions=["Be brief"],
        session_state={"items": [1]},
        pre_hooks=[shout],
        tool_call_limit=3,
        options={"temperature": 0.1},
    )
    parameters = [p for p in inspect.signature(Agent.__init__).parameters if p != "self"]
    for name in parameters:  # a new setting that deep_copy cannot read fails here
        assert name == "tools" or hasattr(agent, name), name
    copy = agent.deep_copy(update={"name": "Critic", "description": "A critic"})
    assert (copy.name, copy.id, copy.description) == ("Critic", "critic", "A critic")
    assert (copy.tool_call_limit, copy.options, copy.pre_hooks) == (
        3,
        {"temperature": 0.1},
        [shout],
    )
    copy.session_state["items"].append(2)
    copy.instructions.append("Be kind")
    assert agent.session_state == {"items": [1]} and agent.instructions == ["Be brief"]
    assert copy.run("hi").content == "HI"
    with pytest.raises(InvalidInputError) as caught:
        agent.deep_copy(update={"colour": "blue"})
    assert caught.value.errors[0]["path"] == "update.colour"
    copy.delete()
    agent.delete()


def test_cancel_run_stops_a_run_of_any_agent_from_another_thread(rt):
    slow = TestModel([{"text": "one two three four five six", "delay": 0.2}])
    with Agent(rt, slow) as agent:
        stream = agent.run("go", stream=True)
        cancelled = []
        timer = threading.Timer(0.5, lambda: cancelled.append(Agent.cancel_run(stream.run_id)))
        timer.start()
        started = time.perf_counter()
        events = list(stream)
        timer.join()
        assert cancelled == [True]
        assert time.perf_counter() - started < 1.0  # six pieces would take 1.2 s
        assert events[-1].event == "RunCancelled" and events[-1].is_cancelled
        assert stream.output.status == "cancelled" and stream.output.is_cancelled
        assert Agent.cancel_run(stream.run_id) is False  # no longer running
    assert Agent.cancel_run("no-such-run") is False


# -- print_response and cli_app ----------------------------------------------------------


def console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=60, color_system=None), out


def test_print_response_prints_the_message_and_the_response(rt):
    con, out = console()
    model = TestModel(
        [
            {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
            {"text": "The sum is **3**", "reasoning": "Add them."},
        ]
    )
    with Agent(rt, model, tools=[add]) as agent:
        agent.print_response("What is 1 + 2?", markdown=True, console=con, reasoning=True)
    text = out.getvalue()
    for expected in ("Message", "What is 1 + 2?", "Tool Calls", 'add({"a": 1, "b": 2}) -> 3'):
        assert expected in text
    assert "Reasoning" in text and "Add them." in text
    assert "The sum is 3" in text  # rendered as Markdown: no asterisks
    assert "Response (" in text


def test_print_response_streams_and_prints_failures(rt):
    con, out = console()
    with Agent(rt, TestModel(), pre_hooks=[refuse_secrets]) as agent:
        agent.print_response("plain words", stream=True, show_message=False, console=con)
        agent.print_response("a secret", console=con)
    text = out.getvalue()
    assert "Message" in text  # only the second shows its message
    assert text.count("Message") == 1
    assert "plain words" in text
    assert "Error" in text and "no secrets here" in text


def test_cli_app_answers_each_line_until_exit(rt, monkeypatch):
    con, out = console()
    monkeypatch.setattr("sys.stdin", io.StringIO("first line\n\nsecond line\nexit\nnever read\n"))
    with Agent(rt, TestModel()) as agent:
        agent.cli_app(input="opening", console=con)
    text = out.getvalue()
    assert [w for w in ("opening", "first line", "second line", "never read") if w in text] == [
        "opening",
        "first line",
        "second line",
    ]
    assert text.count("\N{SMILING FACE WITH SUNGLASSES} User") == 4  # three answered, then exit


def test_cli_app_ends_at_the_end_of_input(rt, monkeypatch):
    con, out = console()
    monkeypatch.setattr("sys.stdin", io.StringIO("only line\n"))
    with Agent(rt, TestModel()) as agent:
        agent.cli_app(console=con, exit_on=["stop"])
    assert "only line" in out.getvalue()


def test_aprint_response_and_acli_app_for_async_code(rt, monkeypatch):
    con, out = console()
    monkeypatch.setattr("sys.stdin", io.StringIO("from the loop\nbye\nnever read\n"))

    async def main() -> None:
        async with Agent(rt, TestModel()) as agent:
            await agent.aprint_response("async hello", stream=True, console=con)
            await agent.acli_app(console=con)

    asyncio.run(main())
    text = out.getvalue()
    assert "async hello" in text and "from the loop" in text
    assert "never read" not in text


# -- reasoning and parser models -------------------------------------------------------------


def test_a_reasoning_model_thinks_before_the_main_model_answers(rt):
    thinker = TestModel([{"text": "", "reasoning": ["Paris is ", "the capital."]}])
    with Agent(rt, TestModel(["Paris."]), reasoning_model=thinker) as agent:
        responses = list(agent.query("Capital of France?"))
        assert [(r.type, r.content) for r in responses] == [
            ("reasoning", "Paris is "),
            ("reasoning", "the capital."),
            ("output_text", "Paris."),
        ]
        assert sent_texts(agent)[-1][-1] == "<thinking>\nParis is the capital.\n</thinking>"
        reasoner = agent._helper_models["reasoning"].name
        assert agent.runtime.kernel.component(reasoner).requests[0].reasoning_on
        assert [m.role for m in agent.get_messages()] == ["user", "assistant", "assistant"]


def test_a_reasoning_model_without_a_reasoning_channel_thinks_aloud(rt):
    thinker = TestModel(["Step one, step two."])
    with Agent(rt, TestModel(["Done."]), reasoning_model=thinker) as agent:
        events = list(agent.run("solve", stream=True, stream_events=True))
    reasoning = [e.reasoning_content for e in events if getattr(e, "reasoning_content", None)]
    assert reasoning == ["Step one, step two."]


@attrs.define
class Review:
    title: str
    rating: int


def test_a_parser_model_turns_the_reply_into_the_output_schema(rt):
    parser = TestModel([{"output": {"title": "Inception", "rating": 9}}])
    main = TestModel(["Inception: a dream within a dream. I give it 9 out of 10."])
    with Agent(rt, main, output_schema=Review, parser_model=parser) as agent:
        output = agent.run("Review Inception")
        assert output.content == Review("Inception", 9)
        assert agent.runtime.kernel.component(agent._component).requests[0].output_schema is None
        parser_component = agent._helper_models["parser"].name
        request = agent.runtime.kernel.component(parser_component).requests[0]
        assert request.output_schema is not None
        assert request.messages[-1].text.startswith("Inception: a dream")


def test_parse_response_false_keeps_the_text(rt):
    with Agent(rt, TestModel(["not json"]), output_schema=Review, parse_response=False) as agent:
        assert agent.run("Review").content == "not json"


# -- ignore_reasoning_messages and debug_mode ------------------------------------------------


def test_ignore_reasoning_messages_leaves_reasoning_out_of_the_stream(rt):
    with Agent(rt, TestModel([{"text": "x = 1", "reasoning": "Think."}] * 2)) as agent:
        shown = list(agent.query("Solve", reasoning=True, ignore_reasoning_messages=True))
        assert {r.type for r in shown} == {"output_text"}
        assert "".join(r.content for r in shown) == "x = 1"
        assert agent.runtime.kernel.component(agent._component).requests[0].reasoning_on
        types = [r.type for r in agent.query("Solve", reasoning=True)]
        assert types[0] == "reasoning"


def test_debug_mode_logs_each_step_through_the_ferrule_logger(rt, caplog):
    caplog.set_level(logging.DEBUG, logger="ferrule")
    model = TestModel([{"tool_calls": [{"name": "add", "arguments": {"a": 40, "b": 2}}]}, "42"])
    with Agent(rt, model, tools=[add], debug_mode=True, pre_hooks=[shout]) as agent:
        agent.run("hi")
    events = [r.getMessage() for r in caplog.records if r.name == "ferrule.agent"]
    steps = [
        "pre_hooks_passed",
        "run_started",
        "model_request",
        "model_response",
        "tool_call",
        "model_request",
        "model_response",
        "run_completed",
    ]
    assert [e.split(" ", 1)[0] for e in events] == steps, events
    assert not any("'a': 40" in e or "arguments" in e for e in events)  # no tool arguments
    caplog.clear()
    with Agent(rt, TestModel()) as agent:
        agent.run("hi")
    assert not [r for r in caplog.records if "run_started" in r.getMessage()]
    assert logging.getLogger("ferrule").handlers == []  # nothing was configured


def test_run_input_as_text():
    from ferrule.agent import RunInput as Input
    from ferrule_kit.content.messages import Message, TextPart

    @attrs.define
    class Order:
        item: str

    class Image:  # a media part: nothing to read as text
        type = "image"
        data = b"\x89PNG"

    assert Input("plain").input_content_string() == "plain"
    assert Input(["a", TextPart("b"), Image()]).input_content_string() == "a\nb"
    assert Input(Message("user", "hi")).input_content_string() == "hi"
    assert Input({"role": "user", "content": "hey"}).input_content_string() == "hey"
    assert Input({"city": "Oslo"}).input_content_string() == '{"city": "Oslo"}'
    assert Input(Order("tea")).input_content_string() == '{"item": "tea"}'
