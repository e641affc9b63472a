"""The instrumentation seam (`ferrule_kit.instrumentation`): what an agent tells a plugin's
``ferrule_instrumentation`` observers, in which order, and that an observer that raises
never fails the run it observes."""

from __future__ import annotations

from typing import Any

import pluggy
from ferrule import Agent, Runtime
from ferrule_kernel import Kernel, hookimpl
from ferrule_kit import hookspecs, kit_plugin
from ferrule_kit.instrumentation import instrumentation_of
from ferrule_testmodel import TestModel


class Span:
    def __init__(self, log: list[tuple[str, Any]], what: str) -> None:
        self.log, self.what = log, what

    def finish(self, **kwargs: Any) -> None:
        self.log.append((f"finish {self.what}", kwargs))


class Recorder:
    """A plugin whose instrumentation writes down every call."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    @hookimpl
    def ferrule_instrumentation(self) -> Recorder:
        return self

    def start_run(self, **kwargs: Any) -> Span:
        self.log.append(("start run", kwargs))
        return Span(self.log, "run")

    def start_model_call(self, **kwargs: Any) -> Span:
        self.log.append(("start model", kwargs))
        return Span(self.log, "model")

    def start_tool_call(self, **kwargs: Any) -> Span:
        self.log.append(("start tool", kwargs))
        return Span(self.log, "tool")


class Broken:
    """A plugin whose instrumentation fails at every call."""

    @hookimpl
    def ferrule_instrumentation(self) -> Broken:
        return self

    def start_run(self, **kwargs: Any) -> Any:
        raise RuntimeError("broken instrumentation")

    def start_model_call(self, **kwargs: Any) -> Broken:
        return self  # a span whose finish raises

    def finish(self, **kwargs: Any) -> None:
        raise RuntimeError("broken span")

    def start_tool_call(self, **kwargs: Any) -> Any:
        raise RuntimeError("broken instrumentation")


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TURNS = [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}, "id": "c1"}]}, "3."]


def runtime_with(*plugins: object) -> Runtime:
    return Runtime(kernel=Kernel(plugins=[kit_plugin, *plugins]))


def test_hook_instrumentation_none_without_an_instrumenting_plugin():
    pm = pluggy.PluginManager("ferrule")
    pm.add_hookspecs(hookspecs)
    pm.register(Span)  # a plugin that does not instrument
    assert instrumentation_of(pm) is None


def test_hook_instrumentation_sees_run_model_and_tool_calls_in_order():
    recorder = Recorder()
    with runtime_with(recorder) as rt:
        agent = Agent(rt, TestModel(TURNS), tools=[add], name="adder", session_id="s")
        output = agent.run("What is 1 + 2?")
        agent.delete()
    log = [(what, kwargs) for what, kwargs in recorder.log]
    assert [what for what, _ in log] == [
        "start run",
        "start model",
        "finish model",
        "start tool",
        "finish tool",
        "start model",
        "finish model",
        "finish run",
    ]
    run = log[0][1]
    assert (run["run_id"], run["agent_name"], run["conversation_id"]) == (
        output.run_id,
        "adder",
        "s",
    )
    assert run["route"].component_type == "test_language_model"
    assert run["messages"][-1].text == "What is 1 + 2?"
    first_model = log[2][1]
    assert first_model["finish_reason"] == "tool_calls" and first_model["exception"] is None
    assert first_model["message"].tool_calls[0].name == "add"
    assert first_model["time_to_first_token"] > 0
    assert log[3][1]["call"].id == "c1"
    assert log[4][1] == {"result": "3", "error": None}
    finished = log[-1][1]
    assert finished["status"] == "completed" and finished["exception"] is None
    assert finished["output"].text == "3."
    assert finished["input_tokens"] == output.metrics.input_tokens


def test_a_failing_model_call_is_finished_with_its_error():
    recorder = Recorder()
    with runtime_with(recorder) as rt:
        agent = Agent(rt, TestModel([{"text": "so", "error": "gone"}]))
        assert agent.run("Hi").content == "gone"  # a failed run: its error's message
        agent.delete()
    model = next(kwargs for what, kwargs in recorder.log if what == "finish model")
    assert model["message"] is None and "gone" in str(model["exception"])
    run = recorder.log[-1][1]
    assert run["status"] == "error" and run["exception"].kind == "model_error"


def test_an_instrumentation_that_raises_never_fails_the_run(caplog):
    recorder = Recorder()
    with runtime_with(Broken(), recorder) as rt:
        agent = Agent(rt, TestModel(TURNS), tools=[add])
        assert agent.run("What is 1 + 2?").content == "3."
        agent.delete()
    # the working plugin still saw everything; the failures were logged
    assert [w for w, _ in recorder.log].count("finish tool") == 1
    assert [w for w, _ in recorder.log][-1] == "finish run"
    assert caplog.text.count("instrumentation_failed") == 4  # run, 2 model calls, tool


def test_a_run_with_pre_hooks_is_traced_from_what_they_leave():
    def mask(run_input: Any) -> None:
        run_input.input_content = run_input.input_content_string().replace("4111", "****")

    def refuse(run_input: Any) -> None:
        if "secret" in run_input.input_content_string():
            from ferrule.agent import InputCheckError

            raise InputCheckError("no secrets")

    recorder = Recorder()
    with runtime_with(recorder) as rt, Agent(rt, TestModel(), pre_hooks=[mask, refuse]) as agent:
        agent.run("card 4111")
        runs = [kwargs for what, kwargs in recorder.log if what == "start run"]
        assert [m.text for m in runs[0]["messages"]] == ["card ****"]
        recorder.log.clear()
        assert agent.run("a secret").status == "error"
        assert recorder.log == []  # a refused input is never traced
