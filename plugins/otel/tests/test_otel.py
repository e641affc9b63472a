"""ferrule-otel's spans, read back through the OpenTelemetry SDK's in-memory exporter: an
agent run on the test model (ferrule-testmodel, by its component type) with tools, a
model that fails, a streamed run's time to first token, content capture off and on, and
``ferrule serve``'s OpenAI route."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from ferrule import Agent, Runtime
from ferrule.server import ServerThread
from ferrule_kit.errors import ModelError
from ferrule_kit.instrumentation import instrumentation_of
from ferrule_kit.models.lmspec import ModelRoute
from ferrule_otel import plugin
from ferrule_otel.ondemand import OnDemandInstrumentation
from ferrule_otel.spans import CAPTURE_VARIABLE, GenAIInstrumentation
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import SpanKind, StatusCode


@attrs.frozen
class Scripted:
    """A model spec for the test model's scripted turns, named by its component type (a
    plugin's tests never import another plugin)."""

    turns: list[Any]

    def route(self, kernel: Any) -> ModelRoute:
        return ModelRoute("test_language_model", {"turns": self.turns})


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def broken(text: str) -> str:
    """A tool that always fails."""
    raise ValueError("the tool broke")


class Recording(Sampler):
    """Records spans only while a test of this module asks (`spans`): the global tracer
    provider, set once per process, must not make every other test's agent runs traced."""

    on = False

    def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
        return SamplingResult(Decision.RECORD_AND_SAMPLE if self.on else Decision.DROP)

    def get_description(self) -> str:
        return "recording while a ferrule-otel test runs"


RECORDING = Recording()


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    # One tracer provider per process (OpenTelemetry allows setting it once): ours, unless
    # another test module set an SDK provider first, which then gets our exporter too.
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider(sampler=RECORDING)
        trace.set_tracer_provider(provider)
    else:
        RECORDING.on = True  # not ours to switch: it records anyway
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture
def spans(exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.delenv(CAPTURE_VARIABLE, raising=False)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    monkeypatch.setattr(RECORDING, "on", True)
    exporter.clear()

    def finished() -> list[ReadableSpan]:
        return list(exporter.get_finished_spans())

    yield finished
    exporter.clear()


@pytest.fixture
def rt() -> Iterator[Runtime]:
    with Runtime() as runtime:
        yield runtime


def named(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def attribute_text(spans: list[ReadableSpan]) -> str:
    return json.dumps([dict(s.attributes or {}) for s in spans], default=str)


TOOL_TURNS = [
    {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "call_add"}]},
    {"text": "The sum is 3."},
]


def test_hook_instrumentation_answers_with_the_genai_instrumentation(monkeypatch):
    answer = plugin.ferrule_instrumentation()
    assert isinstance(answer, OnDemandInstrumentation)
    # OpenTelemetry is in use in this process (this module imported it): the spans are
    # made by the GenAI instrumentation, made once
    assert isinstance(answer.spans(), GenAIInstrumentation)
    assert answer.spans() is answer.spans()
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert plugin.ferrule_instrumentation() is None


def test_hook_instrumentation_is_found_through_the_kernels_plugins(rt):
    rt.kernel.load_plugins()
    found = instrumentation_of(rt.kernel.plugin_manager)
    assert found is not None
    assert instrumentation_of(rt.kernel.plugin_manager) is found  # asked once per kernel


def test_a_tool_using_run_is_an_agent_span_with_model_and_tool_children(rt, spans):
    with Agent(rt, Scripted(TOOL_TURNS), tools=[add], name="adder", session_id="s-1") as agent:
        output = agent.run("What is 1 + 2?")
    assert output.content == "The sum is 3."
    finished = spans()
    (run,) = named(finished, "invoke_agent")
    chats = named(finished, "chat")
    (tool,) = named(finished, "execute_tool")
    assert run.name == "invoke_agent adder" and run.kind is SpanKind.INTERNAL
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "adder"
    assert run.attributes["gen_ai.agent.id"] == agent.id
    assert run.attributes["gen_ai.conversation.id"] == "s-1"
    assert run.attributes["gen_ai.provider.name"] == "test"
    assert run.attributes["ferrule.run.id"] == output.run_id
    assert run.attributes["ferrule.run.status"] == "completed"
    assert run.status.status_code is StatusCode.UNSET
    # every other span is a child of the run's, in one trace
    for child in [*chats, tool]:
        assert child.parent is not None and child.parent.span_id == run.context.span_id
        assert child.context.trace_id == run.context.trace_id
    assert [c.attributes["gen_ai.response.finish_reasons"] for c in chats] == [
        ("tool_calls",),
        ("stop",),
    ]
    assert all(
        c.kind is SpanKind.CLIENT and c.attributes["gen_ai.operation.name"] == "chat" for c in chats
    )
    metrics = output.metrics.model_calls
    for chat, call in zip(chats, metrics, strict=True):
        assert chat.attributes["gen_ai.usage.input_tokens"] == call.input_tokens > 0
        assert chat.attributes["gen_ai.usage.output_tokens"] == call.output_tokens > 0
    assert run.attributes["gen_ai.usage.input_tokens"] == output.metrics.input_tokens
    assert run.attributes["gen_ai.usage.output_tokens"] == output.metrics.output_tokens
    assert tool.name == "execute_tool add"
    assert tool.attributes["gen_ai.tool.name"] == "add"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_add"
    assert tool.attributes["gen_ai.tool.type"] == "function"
    # the tool ran between the two model calls
    assert chats[0].end_time <= tool.start_time <= tool.end_time <= chats[1].start_time


def test_content_is_not_recorded_by_default(rt, spans):
    with Agent(rt, Scripted(TOOL_TURNS), tools=[add], system_message="Be terse.") as agent:
        agent.run("What is 1 + 2?")
    text = attribute_text(spans())
    for content in ("What is 1 + 2", "The sum is 3", "Be terse", '"a": 1'):
        assert content not in text
    assert "gen_ai.input.messages" not in text and "gen_ai.tool.call.result" not in text


@pytest.mark.parametrize("value", ["true", "SPAN_ONLY"])
def test_content_capture_records_messages_and_tool_io(rt, spans, monkeypatch, value):
    monkeypatch.setenv(CAPTURE_VARIABLE, value)
    with Agent(rt, Scripted(TOOL_TURNS), tools=[add], system_message="Be terse.") as agent:
        agent.run("What is 1 + 2?")
    finished = spans()
    first, second = named(finished, "chat")
    (tool,) = named(finished, "execute_tool")
    (run,) = named(finished, "invoke_agent")
    assert json.loads(first.attributes["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "Be terse."}
    ]
    assert json.loads(first.attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "What is 1 + 2?"}]}
    ]
    (call,) = json.loads(first.attributes["gen_ai.output.messages"])
    assert call["finish_reason"] == "tool_calls"
    assert {
        "type": "tool_call",
        "id": "call_add",
        "name": "add",
        "arguments": {"a": 1, "b": 2},
    } in call["parts"]
    inputs = json.loads(second.attributes["gen_ai.input.messages"])
    assert inputs[-1] == {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "call_add", "response": "3"}],
    }
    (reply,) = json.loads(second.attributes["gen_ai.output.messages"])
    assert reply == {
        "role": "assistant",
        "parts": [{"type": "text", "content": "The sum is 3."}],
        "finish_reason": "stop",
    }
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"a": 1, "b": 2}
    assert tool.attributes["gen_ai.tool.call.result"] == "3"
    assert "The sum is 3." in run.attributes["gen_ai.output.messages"]


def test_a_failing_model_marks_its_call_and_the_run(rt, spans):
    turns = [{"text": "partial answer", "error": "the backend fell over"}]
    with Agent(rt, Scripted(turns)) as agent:
        assert isinstance(agent.run("Hi").error, ModelError)  # reported, as Agno's
    finished = spans()
    (chat,) = named(finished, "chat")
    (run,) = named(finished, "invoke_agent")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert span.attributes["error.type"] == "model_error"
        assert "the backend fell over" in span.status.description
    assert run.attributes["ferrule.run.status"] == "error"
    assert chat.attributes["gen_ai.response.time_to_first_chunk"] > 0  # it streamed first


def test_a_failing_tool_marks_its_span_and_the_run_goes_on(rt, spans):
    turns = [
        {"tool_calls": [{"name": "broken", "arguments": {"text": "x"}}]},
        {"text": "It broke."},
    ]
    with Agent(rt, Scripted(turns), tools=[broken]) as agent:
        assert agent.run("Try it").content == "It broke."
    finished = spans()
    (tool,) = named(finished, "execute_tool")
    (run,) = named(finished, "invoke_agent")
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.attributes["error.type"] == "tool_error"
    assert "the tool broke" in tool.status.description
    assert run.status.status_code is StatusCode.UNSET


def test_a_streamed_run_records_time_to_first_token(rt, spans):
    # each streamed item comes 50 ms after the one before
    turns = [{"text": "one two three", "delay": 0.05}]
    with Agent(rt, Scripted(turns)) as agent:
        texts = [e.content for e in agent.run("Hi", stream=True) if e.event == "RunContent"]
    assert "".join(t for t in texts if t) == "one two three"
    (chat,) = named(spans(), "chat")
    ttft = chat.attributes["gen_ai.response.time_to_first_chunk"]
    duration = (chat.end_time - chat.start_time) / 1e9
    assert 0.05 <= ttft < duration  # the first item, not the whole reply
    (event,) = [e for e in chat.events if e.name == "gen_ai.first_chunk"]
    assert chat.start_time < event.timestamp < chat.end_time
    assert abs((event.timestamp - chat.start_time) / 1e9 - ttft) < 0.01


def test_spans_a_tool_makes_are_children_of_its_tool_span(rt, spans):
    tracer = trace.get_tracer("a host tool")

    def lookup(key: str) -> str:
        """Look a key up."""
        with tracer.start_as_current_span("database query"):
            return key.upper()

    async def alookup(key: str) -> str:
        """Look a key up, asynchronously."""
        await asyncio.sleep(0)
        with tracer.start_as_current_span("async database query"):
            return key.upper()

    turns = [
        {
            "tool_calls": [
                {"name": "lookup", "arguments": {"key": "a"}},
                {"name": "alookup", "arguments": {"key": "b"}},
            ]
        },
        {"text": "Done."},
    ]
    with Agent(rt, Scripted(turns), tools=[lookup, alookup]) as agent:
        agent.run("Look them up")
    finished = spans()
    tools = {s.attributes["gen_ai.tool.name"]: s for s in named(finished, "execute_tool")}
    (query,) = named(finished, "database query")
    (aquery,) = named(finished, "async database query")
    assert query.parent.span_id == tools["lookup"].context.span_id
    assert aquery.parent.span_id == tools["alookup"].context.span_id


def test_request_parameters_and_structured_output(rt, spans):
    @attrs.define
    class Answer:
        value: int

    options = {"temperature": 0.2, "max_tokens": 50, "top_p": 0.9, "stop": ["END"]}
    with Agent(rt, Scripted([{"output": {"value": 3}}]), options=options) as agent:
        assert agent.run("3?", output_schema=Answer).content == Answer(3)
    (chat,) = named(spans(), "chat")
    assert chat.attributes["gen_ai.request.temperature"] == 0.2
    assert chat.attributes["gen_ai.request.max_tokens"] == 50
    assert chat.attributes["gen_ai.request.top_p"] == 0.9
    assert chat.attributes["gen_ai.request.stop_sequences"] == ("END",)
    assert chat.attributes["gen_ai.output.type"] == "json"


def test_chat_completions_in_ferrule_serve_are_chat_spans(spans):
    body = {
        "model": "test",
        "messages": [{"role": "user", "content": "hello there"}],
        "stream": True,
        "max_tokens": 20,
    }
    with ServerThread() as url:  # the server's own kernel, with every installed plugin
        request = urllib.request.Request(
            f"{url}/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            events = response.read().decode()
    assert "hello" in events and events.rstrip().endswith("data: [DONE]")
    (chat,) = named(spans(), "chat")
    assert chat.kind is SpanKind.CLIENT
    assert chat.attributes["gen_ai.provider.name"] == "test"
    assert chat.attributes["gen_ai.request.max_tokens"] == 20
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 2
    assert chat.attributes["gen_ai.usage.output_tokens"] == 2
    assert chat.attributes["gen_ai.response.time_to_first_chunk"] > 0
    assert "hello there" not in attribute_text([chat])


def test_switched_off_no_span_is_made(rt, spans, monkeypatch):
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    with Runtime() as fresh, Agent(fresh, Scripted([{"text": "Hi."}])) as agent:
        assert agent._instrumentation is None
        agent.run("Hi")
    assert spans() == []


def _printed_by(code: str, tmp_path) -> list[str]:
    """The lines ``code`` prints, run in a fresh Python (caches under ``tmp_path``)."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={"XDG_CACHE_HOME": str(tmp_path), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_process_that_never_traces_never_imports_opentelemetry(tmp_path):
    # the plugin is installed and every agent asks it, but nothing here uses OpenTelemetry
    code = (
        "import sys\n"
        "from ferrule import Agent, LocalModel, Runtime\n"
        "def add(a: int, b: int) -> int:\n"
        "    'Add two numbers.'\n"
        "    return a + b\n"
        "with Runtime() as rt, Agent(rt, LocalModel('test'), tools=[add]) as agent:\n"
        "    assert agent._instrumentation is not None\n"
        "    print(agent.run('Hi there').content)\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    assert _printed_by(code, tmp_path) == ["Hi there", "[]"]


def test_once_opentelemetry_is_in_use_spans_are_made(tmp_path):
    # the same process, but the host configures a tracer provider after the agent is made
    code = (
        "from ferrule import Agent, LocalModel, Runtime\n"
        "with Runtime() as rt, Agent(rt, LocalModel('test')) as agent:\n"
        "    agent.run('untraced')\n"
        "    from opentelemetry import trace\n"
        "    from opentelemetry.sdk.trace import TracerProvider\n"
        "    from opentelemetry.sdk.trace.export import SimpleSpanProcessor\n"
        "    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (\n"
        "        InMemorySpanExporter,\n"
        "    )\n"
        "    exporter = InMemorySpanExporter()\n"
        "    provider = TracerProvider()\n"
        "    provider.add_span_processor(SimpleSpanProcessor(exporter))\n"
        "    trace.set_tracer_provider(provider)\n"
        "    agent.run('traced')\n"
        "print(sorted(s.name for s in exporter.get_finished_spans()))\n"
    )
    assert _printed_by(code, tmp_path) == ["['chat', 'invoke_agent']"]


def test_agent_steps_in_ferrule_serve_are_chat_spans(spans):
    def post(url: str, route: str, body: dict[str, Any]) -> str:
        request = urllib.request.Request(
            f"{url}/ferrule/v1/{route}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    turns = [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}]
    with ServerThread() as url:
        post(
            url,
            "define_model",
            {"name": "m", "model": "test", "local": True, "options": {"turns": turns}},
        )
        step = {
            "name": "m",
            "messages": [{"role": "user", "content": "1 + 2?"}],
            "options": {"temperature": 0.5},
        }
        lines = [json.loads(line) for line in post(url, "agent_step", step).splitlines()]
    assert lines[-2]["item"]["tool_requests"][0]["function"]["name"] == "add"
    (chat,) = named(spans(), "chat")
    assert chat.attributes["gen_ai.provider.name"] == "test"
    assert chat.attributes["gen_ai.request.temperature"] == 0.5
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert chat.attributes["gen_ai.usage.output_tokens"] > 0


@pytest.mark.parametrize(
    ("component_type", "provider"),
    [
        ("openai_language_model", "openai"),
        ("anthropic_language_model", "anthropic"),
        ("gemini_language_model", "gcp.gemini"),
        ("xai_language_model", "x_ai"),
        ("llamacpp_language_model", "llamacpp"),
    ],
)
def test_provider_and_model_come_from_the_route_and_keys_never_do(
    spans, monkeypatch, component_type, provider
):
    monkeypatch.setenv(CAPTURE_VARIABLE, "true")  # even with content capture on
    route = ModelRoute(component_type, {"model": "m-1", "api_key": "sk-do-not-record"})
    instrumentation = GenAIInstrumentation()
    instrumentation.start_model_call(route=route, inputs={"messages": []}).finish(
        message=None, finish_reason="stop", usage=None, time_to_first_token=None, exception=None
    )
    (chat,) = spans()
    assert chat.name == "chat m-1"
    assert chat.attributes["gen_ai.provider.name"] == provider
    assert chat.attributes["gen_ai.request.model"] == "m-1"
    assert "sk-do-not-record" not in attribute_text([chat])


def test_media_parts_are_recorded_by_type_only(spans, monkeypatch):
    monkeypatch.setenv(CAPTURE_VARIABLE, "true")
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    message = {"role": "user", "content": [{"type": "text", "text": "What is it?"}, image]}
    instrumentation = GenAIInstrumentation()
    instrumentation.start_model_call(
        route=ModelRoute("test_language_model"), inputs={"messages": [message]}
    ).finish(message=None, finish_reason=None, usage=None, time_to_first_token=None, exception=None)
    (chat,) = spans()
    assert json.loads(chat.attributes["gen_ai.input.messages"]) == [
        {
            "role": "user",
            "parts": [{"type": "text", "content": "What is it?"}, {"type": "image_url"}],
        }
    ]
    assert "base64" not in attribute_text([chat])


def test_a_cancelled_run_ends_its_spans_as_cancelled(rt, spans, caplog):
    turns = [{"text": "one two three four five six", "delay": 0.05}]
    with Agent(rt, Scripted(turns)) as agent:
        stream = agent.run("Hi", stream=True)
        for event in stream:
            if event.event == "RunContent":
                break  # the reader leaves mid-reply, and cancels the run
        stream.cancel()
        deadline = time.monotonic() + 10
        while len(spans()) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finished = spans()
    (chat,) = named(finished, "chat")
    (run,) = named(finished, "invoke_agent")
    assert chat.attributes["error.type"] == run.attributes["error.type"] == "cancelled"
    assert run.attributes["ferrule.run.status"] == "cancelled"
    assert "Failed to detach context" not in caplog.text  # the run's span unwound in order


def test_other_tests_runs_are_not_recorded(exporter, rt):
    if RECORDING.on:
        pytest.skip("another test module set the process's tracer provider")
    exporter.clear()
    with Agent(rt, Scripted([{"text": "Hi."}])) as agent:
        agent.run("Hi")
    assert exporter.get_finished_spans() == ()


def test_an_agent_on_a_remote_runtime_is_traced_in_its_own_process(spans):
    with ServerThread() as url, Runtime(url=url) as remote:
        with Agent(remote, Scripted(TOOL_TURNS), tools=[add], name="remote") as agent:
            assert agent.run("What is 1 + 2?").content == "The sum is 3."
        with Agent(remote, Scripted([{"text": "Hi."}])) as other:  # the same routing kernel
            assert other._instrumentation is agent._instrumentation
    finished = spans()
    (run,) = named(finished, "invoke_agent remote")
    assert [
        s.name for s in finished if s.parent is not None and s.parent.span_id == run.context.span_id
    ] == [
        "chat",
        "execute_tool add",
        "chat",
    ]
