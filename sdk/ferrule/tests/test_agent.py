"""The Agent on the deterministic test model (ferrule-testmodel): the response protocol,
stateful and stateless runs, the step API, limits, pauses, cancellation, structured output
and metrics. Tool kinds (functions, schemas, REST, presets, MCP) are in test_agent_tools.py."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
from typing import Literal

import attrs
import pytest
from ferrule import (
    Agent,
    AsyncRuntime,
    AudioPart,
    ImagePart,
    LangModel,
    LocalModel,
    Message,
    Part,
    Runtime,
    tool,
)
from ferrule.agent import (
    DEFAULT_STEP_INSTRUCTIONS,
    OutputValidationError,
    ToolCallLimitError,
    UnknownRunError,
)
from ferrule_kernel import InvalidInputError, RequestCancelledError, json_schema
from ferrule_kit.errors import ModelError, UnknownModelError
from ferrule_testmodel import ScriptedTurn, TestModel
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def requests(agent: Agent) -> list:
    """What the agent's model component received (the test model keeps every request)."""
    return agent.runtime.kernel.component(agent._component).requests


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# -- the response protocol ---------------------------------------------------------------------


def test_query_streams_the_protocol_in_order(rt):
    model = TestModel(
        [
            {"reasoning": "I should add.", "tool_calls": [call("add", a=1, b=2)]},
            {"text": "The sum is 3."},
        ]
    )
    with Agent(rt, model, tools=[add]) as agent:
        stream = agent.query("What is 1 + 2?", reasoning=True)
        responses = list(stream)
    shape = [(r.type, r.role, r.is_type_switched) for r in responses]
    assert shape == [
        ("reasoning", "assistant", True),
        ("reasoning", "assistant", False),
        ("reasoning", "assistant", False),
        ("tool_call", "assistant", True),
        ("tool_call_result", "tool", True),
        ("output_text", "assistant", True),
        ("output_text", "assistant", False),
        ("output_text", "assistant", False),
        ("output_text", "assistant", False),
    ]
    assert "".join(r.content for r in responses if r.type == "reasoning") == "I should add."
    (tool_call,) = [r.content for r in responses if r.type == "tool_call"]
    assert tool_call == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "add", "arguments": {"a": 1, "b": 2}},
    }
    (result,) = [r.content for r in responses if r.type == "tool_call_result"]
    assert result == {"tool_call_id": "call_1", "name": "add", "result": 3}
    assert "".join(r.content for r in responses if r.type == "output_text") == "The sum is 3."
    assert stream.output.status == "completed" and stream.output.content == "The sum is 3."


def test_an_error_is_the_last_response_and_leaves_the_history(rt):
    model = TestModel(["First answer.", {"text": "half an", "error": "the backend fell over"}])
    with Agent(rt, model) as agent:
        list(agent.query("one"))
        before = agent.get_messages()
        stream = agent.query("two")
        responses = list(stream)
        assert [r.type for r in responses] == ["output_text", "output_text", "error"]
        last = responses[-1]
        assert last.is_type_switched and isinstance(last.error, ModelError)
        assert last.content == "the backend fell over"
        assert stream.output.status == "error" and stream.output.error is last.error
        assert agent.get_messages() == before


turns = st.lists(
    st.fixed_dictionaries(
        {
            "text": st.sampled_from(["", "ok", "two words", "three more words"]),
            "reasoning": st.sampled_from(["", "hmm", "let me think"]),
            # a turn without tool calls would end the run before the failing one
            "tool_calls": st.lists(st.just(call("add", a=1, b=1)), min_size=1, max_size=2),
        }
    ),
    max_size=3,
).map(lambda ts: [*ts, {"text": "done", "error": "boom"}])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turns)
def test_protocol_properties_hold_for_any_script(rt, script):
    with Agent(rt, TestModel(script), tools=[add]) as agent:
        responses = list(agent.query("go", reasoning=True))
    previous = None
    for response in responses:
        assert response.is_type_switched == (response.type != previous)
        assert response.role == ("tool" if response.type == "tool_call_result" else "assistant")
        previous = response.type
    errors = [i for i, r in enumerate(responses) if r.type == "error"]
    assert errors == [len(responses) - 1], "exactly one error, and it is last"
    calls = [r.content["id"] for r in responses if r.type == "tool_call"]
    results = [r.content["tool_call_id"] for r in responses if r.type == "tool_call_result"]
    assert results == calls[: len(results)], "each result follows its call, in order"


# -- the agent guide's surface --------------------------------------------------------------------


def test_agent_guide_surface(rt):
    with Agent(rt, TestModel(), system_message="You are a pirate.") as agent:
        image = ImagePart(data="aGVsbG8=", mime_type="image/png")
        audio = AudioPart(data="aGVsbG8=", format="wav")
        out = io.StringIO()
        for resp in agent.query(["Describe", "these", image, audio]):
            agent.print(resp, file=out)
        assert out.getvalue() == "\nDescribethese"  # the test model echoes the prompt's text
        sent = requests(agent)[-1].messages
        assert sent[0].role == "system" and sent[0].text == "You are a pirate."
        assert [type(p) for p in sent[1].contents] == [Part.Text, Part.Text, Part.Image, Part.Audio]
        messages = agent.get_messages()
        assert [m.role for m in messages] == ["system", "user", "assistant"]
        list(agent.query("again"))
        assert [m.role for m in agent.get_messages()] == [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
        ]
        assert [m.text for m in requests(agent)[-1].messages[1:]] == [
            "Describethese",
            "Describethese",
            "again",
        ]
        agent.clear_messages()
        assert [m.role for m in agent.get_messages()] == ["system"]
        component = agent._component
        assert component in rt.kernel.components()
    assert component not in rt.kernel.components(), "delete() removed the model component"


def test_print_shows_each_kind(rt):
    model = TestModel(
        [{"reasoning": "r", "tool_calls": [call("add", a=2, b=2)]}, {"text": "4", "error": "x"}]
    )
    with Agent(rt, model, tools=[add]) as agent:
        out = io.StringIO()
        for resp in agent.query("2+2", reasoning=True):
            agent.print(resp, file=out)
    assert out.getvalue() == (
        "\n[reasoning]\nr"
        '\n[tool call] {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}\n'
        '\n[tool result] {"tool_call_id": "call_1", "name": "add", "result": 4}\n'
        "\n4"
        "\n[error] x\n"
    )


@pytest.fixture
def without_ferrule_image():
    """The part registry as if ferrule-image were not installed (read again afterwards)."""
    from ferrule_kit.content.parts import registry

    registry.unregister("image")
    yield
    registry.reload()


def test_pillow_images_need_ferrule_image(rt, without_ferrule_image):
    class Image:  # Pillow's base class, as far as the agent looks: its qualified name
        __module__, __qualname__ = "PIL.Image", "Image"

    class PngImageFile(Image):  # what Image.open returns
        __module__ = "PIL.PngImagePlugin"

    with Agent(rt, TestModel()) as agent:
        with pytest.raises(ImportError, match="pip install ferrule-image"):
            agent.query(["What is this?", PngImageFile()])


def test_pillow_images_become_image_parts(rt):
    image_module = pytest.importorskip("PIL.Image", reason="Pillow comes with ferrule-image")
    pytest.importorskip("ferrule_image", reason="ferrule-image converts Pillow images")
    image = image_module.new("RGB", (2, 2), "red")
    with Agent(rt, TestModel()) as agent:
        list(agent.query(["What colour is this?", image]))
        (text, part) = requests(agent)[-1].messages[-1].contents
    assert text.text == "What colour is this?"
    assert isinstance(part, ImagePart) and part.mime_type == "image/png"
    assert image_module.open(io.BytesIO(part.to_bytes())).getpixel((0, 0)) == (255, 0, 0)


def test_bad_prompts_name_the_field(rt):
    with Agent(rt, TestModel()) as agent:
        with pytest.raises(InvalidInputError, match="prompt\\[1\\]"):
            agent.query(["ok", 3])
        with pytest.raises(InvalidInputError, match="empty"):
            agent.query([])


def test_unknown_model_fails_at_construction(rt):
    with pytest.raises(UnknownModelError, match="no installed backend"):
        Agent(rt, LocalModel("no such model"))  # owner/repo would name a hub repository


def test_local_model_test_id_resolves_to_the_test_model(rt):
    with Agent(rt, LocalModel("test")) as agent:
        assert "".join(r.content for r in agent.query("hello there")) == "hello there"


# -- stateless runs (multi-turn-conversation) -------------------------------------------------------


async def test_multi_turn_seed_shape():
    lm = await LangModel.new_local("test")  # on the default runtime, as in the seed
    agent = Agent(lm)
    messages = [
        Message(role="user", contents="John's favorite color is blue. Please remember that."),
        Message(role="assistant", contents="Great to hear that John's favorite color is blue."),
        Message(role="user", contents="What's John's favorite color?"),
    ]
    printed = []
    async for resp in agent.run(messages):
        if isinstance(resp.message.contents[0], Part.Text):
            printed.append(resp.message.contents[0].text)
        messages.append(resp.message)
    assert printed == ["What's John's favorite color?"]
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    # the live loop: the next run gets the whole history, and the agent kept none of it
    messages.append(Message(role="user", contents="And mine?"))
    async for resp in agent.run(messages):
        messages.append(resp.message)
    sent = agent.runtime.kernel.component(lm.name).requests[-1].messages
    assert [m.text for m in sent] == [m.text for m in messages[:-1]]
    assert agent.get_messages() == []
    await agent.adelete()
    assert lm.name in lm.runtime.kernel.components(), "an agent does not delete a shared LangModel"
    await lm.adelete()


def test_run_is_also_a_sync_iterator_and_yields_each_message(rt, langmodel):
    model = TestModel([{"tool_calls": [call("add", a=2, b=3)]}, "It is 5."])
    with Agent(langmodel(rt, model), tools=[add]) as agent:  # Ailoy 0.2's form
        outputs = list(agent.run([Message(role="user", contents="2+3?")]))
    assert [o.message.role for o in outputs] == ["assistant", "tool", "assistant"]
    assert outputs[0].message.tool_calls[0].arguments == {"a": 2, "b": 3}
    assert outputs[0].usage == {"input_tokens": 1, "output_tokens": 4}
    assert outputs[1].message.tool_call_id == "call_1" and outputs[1].message.text == "5"
    assert outputs[2].message.text == "It is 5."


def test_run_raises_the_typed_error(rt, langmodel):
    with Agent(langmodel(rt, TestModel([{"error": "down"}]))) as agent:
        stream = agent.run([{"role": "user", "content": "hi"}])
        with pytest.raises(ModelError, match="down"):
            list(stream)
        assert stream.output.status == "error"
        with pytest.raises(InvalidInputError, match=r"messages\[0\]"):
            agent.run([{"role": "robot", "content": "hi"}])


# -- the step API -------------------------------------------------------------------------------------


def test_step_returns_tool_requests_then_a_final_answer(rt):
    weather = {
        "name": "get_weather",
        "description": "Weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
    model = TestModel([{"tool_calls": [call("get_weather", city="Oslo")]}, "It is 3°C in Oslo."])
    with Agent(rt, model) as agent:
        messages = [Message(role="user", contents="Weather in Oslo?")]
        step = agent.step(messages, tools=[weather])
        assert not step.is_final
        (request,) = step.tool_requests
        assert (request.name, request.arguments) == ("get_weather", {"city": "Oslo"})
        first = requests(agent)[-1]
        assert (
            first.messages[0].role == "system"
            and first.messages[0].text == DEFAULT_STEP_INSTRUCTIONS
        )
        assert first.tools[0].function.name == "get_weather"
        # the caller runs the tool and sends the result back
        messages += [
            step.message,
            Message(role="tool", contents='{"temp": 3}', tool_call_id=request.id),
        ]
        final = agent.step(messages, tools=[weather])
        assert final.is_final and final.content == "It is 3°C in Oslo."
        assert agent.get_messages() == []


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"function": "x"}, "tools[1].function"),
        ({"function": 5}, "tools[1].function"),
        ({"type": "function", "function": {"description": "no name"}}, "tools[1].function.name"),
        ({"name": 7}, "tools[1].name"),
        ({"name": "f", "description": ["x"]}, "tools[1].description"),
        ({"function": {"name": "f", "parameters": "any"}}, "tools[1].function.parameters"),
    ],
)
def test_step_refuses_a_malformed_tool_description_naming_its_field(rt, spec, field):
    fine = {"name": "ok", "parameters": {"type": "object", "properties": {}}}
    with Agent(rt, TestModel(["unused"])) as agent:
        with pytest.raises(InvalidInputError) as caught:
            agent.step([{"role": "user", "content": "hi"}], tools=[fine, spec])
        assert caught.value.errors[0]["path"] == field
        assert list(requests(agent)) == []  # refused before the model was asked


async def test_astep_on_an_async_runtime_uses_the_agents_tools():
    async with AsyncRuntime() as art:
        agent = Agent(
            art,
            TestModel([{"tool_calls": [call("add", a=1, b=1)]}]),
            tools=[add],
            system_message="Be brief.",
        )
        step = await agent.astep([{"role": "user", "content": "1+1"}])
        assert step.tool_requests[0].name == "add"
        sent = requests(agent)[-1]
        assert sent.messages[0].text == "Be brief." and sent.tools[0].function.name == "add"
        await agent.adelete()


# -- limits, pauses, cancellation -----------------------------------------------------------------------


def test_tool_call_limit_stops_the_run(rt):
    calls = []

    def record(x: int) -> int:
        calls.append(x)
        return x

    script = [
        {"tool_calls": [call("record", x=1)]},
        {"tool_calls": [call("record", x=2), call("record", x=3)]},
        "never",
    ]
    with Agent(rt, TestModel(script), tools=[record], tool_call_limit=2) as agent:
        responses = list(agent.query("go"))
        assert [r.type for r in responses] == [
            "tool_call",
            "tool_call_result",
            "tool_call",
            "tool_call",
            "error",
        ]
        assert isinstance(responses[-1].error, ToolCallLimitError)
        assert "tool_call_limit of 2" in responses[-1].content
    assert calls == [1], "the calls past the limit never ran"
    # not streaming: the same stop, read from the output
    with Agent(rt, TestModel(script), tools=[record], tool_call_limit=0) as agent:
        output = agent.query("go").result()
    assert output.status == "error" and isinstance(output.error, ToolCallLimitError)
    assert calls == [1]


def test_confirmation_pauses_and_continue_run_resumes(rt):
    deleted = []

    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    script = [{"tool_calls": [call("delete_file", path="a.txt"), call("add", a=1, b=1)]}, "Done."]
    with Agent(rt, TestModel(script), tools=[delete_file, add]) as agent:
        responses = list(agent.query("clean up"))
        paused = responses[-1]
        assert [r.type for r in responses] == ["tool_call", "tool_call", "paused"]
        run_id = paused.content["run_id"]
        assert paused.content["requirements"] == [
            {"tool_call_id": "call_1", "name": "delete_file", "arguments": {"path": "a.txt"}}
        ]
        assert deleted == [] and agent.get_messages() == []
        rest = list(agent.continue_run(run_id, confirm=True))
        assert [r.type for r in rest] == ["tool_call_result", "tool_call_result", "output_text"]
        assert rest[0].content["result"] == "deleted a.txt" and rest[1].content["result"] == 2
        assert deleted == ["a.txt"]
        assert [m.role for m in agent.get_messages()] == [
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
        ]
        with pytest.raises(UnknownRunError):
            agent.continue_run(run_id, confirm=True)


def test_refusal_tells_the_model_and_skips_the_tool(rt):
    ran = []

    @tool(requires_confirmation=True)
    def wire_money(amount: int) -> str:
        """Send money."""
        ran.append(amount)
        return "sent"

    script = [{"tool_calls": [call("wire_money", amount=100)]}, "OK, I did not send it."]
    with Agent(rt, TestModel(script), tools=[wire_money]) as agent:
        first = agent.query("pay").result()  # not streaming
        assert first.is_paused and len(first.requirements) == 1
        with pytest.raises(InvalidInputError, match="no decision"):
            agent.continue_run(first.run_id)
        first.requirements[0].reject("too much")
        second = agent.continue_run(first.run_id, first.requirements).result()
        assert second.status == "completed" and second.content == "OK, I did not send it."
        tool_message = requests(agent)[-1].messages[-1]
        assert json.loads(tool_message.text) == {
            "error": "the user declined this tool call: too much"
        }
    assert ran == []


def test_stateless_run_pauses_with_requirements_on_the_assistant_message(rt, langmodel):
    @tool(requires_confirmation=True)
    def launch() -> str:
        """Launch."""
        return "launched"

    model = TestModel([{"tool_calls": [call("launch")]}, "Launched."])
    with Agent(langmodel(rt, model), tools=[launch]) as agent:
        stream = agent.run([Message(role="user", contents="go")])
        outputs = list(stream)
        assert len(outputs) == 1 and outputs[0].requirements[0].tool_call.name == "launch"
        assert stream.output.is_paused
        rest = list(
            agent.continue_run(
                stream.run_id, confirm={outputs[0].requirements[0].tool_call.id: True}
            )
        )
        assert [o.message.role for o in rest] == ["tool", "assistant"] and rest[
            0
        ].message.text == "launched"


def test_cancel_from_another_thread_stops_a_running_tool(rt):
    started, cancelled = threading.Event(), threading.Event()

    async def wait_forever() -> str:
        """Wait."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    with Agent(
        rt, TestModel([{"tool_calls": [call("wait_forever")]}]), tools=[wait_forever]
    ) as agent:
        stream = agent.query("go")
        threading.Thread(target=lambda: (started.wait(10), stream.cancel())).start()
        responses = list(stream)
        assert responses[-1].type == "error" and isinstance(
            responses[-1].error, RequestCancelledError
        )
        assert cancelled.is_set() and stream.output.is_cancelled
        assert agent.get_messages() == []


async def test_cancel_by_run_id_from_another_task():
    async with AsyncRuntime() as art:
        agent = Agent(art, TestModel(delay=0.01))
        stream = agent.aquery("one two three four five six seven eight nine ten " * 20)
        seen = []
        async for response in stream:
            seen.append(response)
            if len(seen) == 3:
                asyncio.get_running_loop().call_soon(agent.cancel, stream.run_id)
        assert isinstance(seen[-1].error, RequestCancelledError)
        assert len(seen) < 50
        assert agent.cancel(stream.run_id) is False, "a finished run cannot be cancelled"
        await agent.adelete()


def test_leaving_the_stream_early_stops_the_run(rt):
    stopped = threading.Event()

    async def slow() -> str:
        """Slow."""
        try:
            await asyncio.sleep(30)
        finally:
            stopped.set()
        return "x"

    with Agent(
        rt, TestModel([{"text": "calling", "tool_calls": [call("slow")]}]), tools=[slow]
    ) as agent:
        for response in agent.query("go"):
            if response.type == "tool_call":
                break
        assert stopped.wait(5)


# -- structured output ---------------------------------------------------------------------------------


@attrs.frozen
class MovieReview:
    title: str
    rating: int
    verdict: Literal["see", "skip"]


def test_output_schema_attrs_class_gives_a_validated_object(rt):
    review = {"title": "Inception", "rating": 9, "verdict": "see"}
    with Agent(rt, TestModel([{"output": review}]), output_schema=MovieReview) as agent:
        output = agent.query("Review Inception").result()
        assert output.content == MovieReview("Inception", 9, "see")
        assert requests(agent)[0].output_schema == json_schema(MovieReview)


def test_output_schema_with_tools(rt):
    schema = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
    script = [{"tool_calls": [call("add", a=20, b=22)]}, {"output": {"sum": 42}}]
    with Agent(rt, TestModel(script), tools=[add]) as agent:
        output = agent.query("20+22", output_schema=schema).result()
        assert output.content == {"sum": 42}
        assert all(r.output_schema == schema for r in requests(agent))


def test_invalid_structured_reply_is_retried_then_a_typed_error(rt):
    script = [{"output": {"title": "X", "rating": "nine", "verdict": "see"}}, {"text": "not json"}]
    with Agent(rt, TestModel(script), output_schema=MovieReview) as agent:
        responses = list(agent.query("Review X"))
        assert isinstance(responses[-1].error, OutputValidationError)
        assert "not JSON" in responses[-1].content
        retry = requests(agent)[1].messages[-1]
        assert retry.role == "user" and "$.rating" in retry.text
    good = [{"output": {"title": "X"}}, {"output": {"title": "X", "rating": 7, "verdict": "skip"}}]
    with Agent(rt, TestModel(good), output_schema=MovieReview) as agent:
        assert agent.query("Review X").result().content == MovieReview("X", 7, "skip")


def test_json_schema_output_failure_names_the_field(rt):
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    with Agent(
        rt, TestModel([{"output": {"n": "x"}}]), output_schema=schema, output_retries=0
    ) as agent:
        output = agent.query("n?").result()
    assert (
        isinstance(output.error, OutputValidationError)
        and output.error.details["errors"][0]["path"] == "$.n"
    )


def test_the_test_models_default_reply_satisfies_an_output_schema(rt):
    with Agent(rt, TestModel(), output_schema=MovieReview) as agent:
        review = agent.query("anything").result().content
    assert isinstance(review, MovieReview) and review.verdict == "see"


# -- metrics -------------------------------------------------------------------------------------------


def test_usage_and_latency_metrics(rt):
    script = [{"text": "calling", "tool_calls": [call("add", a=1, b=1)]}, "two words"]
    with Agent(rt, TestModel(script), tools=[add]) as agent:
        metrics = agent.query("one two three").result().metrics
    first, second = metrics.model_calls
    # the test model counts words: "calling" and the arguments' JSON {"a": 1, "b": 1}
    assert (first.input_tokens, first.output_tokens, first.finish_reason) == (
        3,
        1 + 4,
        "tool_calls",
    )
    # second call: the prompt, the assistant turn (text, 1 per call, arguments) and the result
    assert (second.input_tokens, second.output_tokens, second.finish_reason) == (
        3 + 6 + 1,
        2,
        "stop",
    )
    assert (metrics.input_tokens, metrics.output_tokens, metrics.tool_calls) == (13, 7, 1)
    assert 0 < first.time_to_first_token <= first.latency <= metrics.duration
    assert 0 < metrics.time_to_first_token <= metrics.duration


# -- runtimes ------------------------------------------------------------------------------------------


async def test_async_runtime_streams_with_async_for_only():
    async with AsyncRuntime() as art:
        agent = Agent(art, TestModel(["a b c"]))
        with pytest.raises(TypeError, match="AsyncRuntime"):
            list(agent.query("x"))
        agent = Agent(art, TestModel(["a b c"]))
        texts = [r.content async for r in agent.aquery("x")]
        assert texts == ["a ", "b ", "c"]
        with pytest.raises(TypeError, match="adelete"):
            agent.delete()
        await agent.adelete()


async def test_runtime_async_twins_from_another_loop(rt):
    agent = Agent(rt, TestModel())
    texts = [r.content async for r in agent.aquery("x y")]
    assert texts == ["x ", "y"]
    outputs = [o async for o in agent.arun([Message(role="user", contents="z")])]
    assert outputs[0].message.text == "z"
    await agent.adelete()


def test_a_stream_is_iterated_once(rt):
    with Agent(rt, TestModel()) as agent:
        stream = agent.query("hi")
        list(stream)
        with pytest.raises(RuntimeError, match="once"):
            list(stream)


def test_scripted_turn_objects_and_reasoning_default(rt):
    model = TestModel([ScriptedTurn(text="t", reasoning="r")])
    with Agent(rt, model, reasoning=True) as agent:
        assert [r.type for r in agent.query("q")] == ["reasoning", "output_text"]


def test_reasoning_reaches_the_model_as_its_one_switch(rt):
    model = TestModel([ScriptedTurn(text="t", reasoning="r")] * 3)
    with Agent(rt, model, reasoning="low") as agent:
        assert [r.type for r in agent.query("q")] == ["reasoning", "output_text"]
        list(agent.query("q", reasoning="high"))
        list(agent.query("q", reasoning=False))
        assert [request.reasoning for request in requests(agent)] == ["low", "high", False]


def test_agent_on_a_remote_runtime():
    """The model runs in a `ferrule serve` process; tools and the run loop stay here."""
    import signal
    import subprocess

    server = subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = server.stdout.readline()
        assert "listening on" in line, line + server.stderr.read()
        url = line.split("listening on ")[1].split()[0]
        model = TestModel([{"tool_calls": [call("add", a=40, b=2)]}, "It is 42."])
        with Runtime(url=url) as remote, Agent(remote, model, tools=[add]) as agent:
            responses = list(agent.query("40 + 2?"))
            assert [r.type for r in responses] == [
                "tool_call",
                "tool_call_result",
                "output_text",
                "output_text",
                "output_text",
            ]
            assert responses[1].content["result"] == 42
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(20)


# -- the options, checked -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("name", 5),
        ("instructions", 3.5),
        ("session_state", ["a"]),
        ("add_history_to_context", "yes"),
        ("num_history_runs", -1),
        ("num_history_runs", True),
        ("output_retries", "2"),
        ("tool_call_limit", -1),
        ("tool_timeout", 0),
        ("tool_timeout", "soon"),
        ("usage_limits", {"request_limit": 1}),
        ("reasoning", 2),
        ("options", ["temperature"]),
        ("memory_manager", "mm"),
        ("stream", "on"),
        ("pre_hooks", ["not callable"]),
    ],
)
def test_a_bad_option_is_refused_naming_it(rt, option, value):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, TestModel(), **{option: value})
    assert caught.value.errors[0]["path"].split("[")[0] == option


def test_the_options_are_one_settings_object_and_the_agents_attributes(rt):
    agent = Agent(
        rt,
        TestModel(),
        name="Helper",
        enable_session_summaries=False,
        options={"temperature": 0.1},
        tool_timeout=5,
    )
    assert agent.settings.identity.name == agent.name == "Helper"
    assert agent.settings.model.options == agent.options == {"temperature": 0.1}
    assert agent.tool_timeout == 5
    # the follow-on defaults are resolved in the settings
    assert agent.settings.history.add_session_summary_to_context is False
    assert agent.add_memories_to_context is False
    assert agent.pre_hooks == [] and agent.settings.hooks.pre_hooks == []
