"""Agno's memory options of the Agent on a real SQLite store, with scripted test models
(what each was asked read from its request log): ``enable_agentic_memory`` (the model
keeps the user's memories itself through ``update_user_memory``, the memory manager's
model doing the task), the `MemoryManager` flags (``add_memories``, ``update_memories``,
``delete_memories``, ``clear_memories``: which tools the memory model is given),
``enable_user_memories`` deciding over ``update_memory_on_run``, and the memories in the
system message."""

from __future__ import annotations

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.memory import MemoryManager
from ferrule_kit.models.lm import InferInput
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def db(tmp_path):
    return SqliteDb(db_file=str(tmp_path / "memory.db"))


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool_names(request: InferInput) -> list[str]:
    return sorted(t.function.name for t in request.tools)


class Recorder:
    """A memory model: records what it is offered; adds the memory it is told to."""

    def __init__(self) -> None:
        self.offered: list[list[str]] = []
        self.prompts: list[str] = []

    def __call__(self, request: InferInput) -> dict | str:
        if request.messages[-1].role == "tool":
            return "done"
        self.offered.append(tool_names(request))
        self.prompts.append(request.messages[-1].text)
        if "clear_memory" in self.offered[-1] and "forget everything" in self.prompts[-1]:
            return call("clear_memory")
        if "add_memory" in self.offered[-1] and "vegetarian" in self.prompts[-1]:
            return call("add_memory", memory="The user is vegetarian")
        return "done"


def test_agentic_memory_tool_runs_the_memory_managers_task(rt, db):
    memory_model = Recorder()
    manager = MemoryManager(model=TestModel(function=memory_model), clear_memories=True)
    main = TestModel(
        [
            call("update_user_memory", task="Remember that the user is vegetarian"),
            "Noted.",
            call("update_user_memory", task="The user asks to forget everything"),
            "Forgotten.",
        ]
    )
    with Agent(
        rt, main, db=db, user_id="ann", memory_manager=manager, enable_agentic_memory=True
    ) as agent:
        assert agent.add_memories_to_context  # Agno's default with agentic memory
        assert agent.run("I am vegetarian").content == "Noted."
        assert [m.memory for m in agent.get_user_memories()] == ["The user is vegetarian"]
        requests = agent.runtime.kernel.component(agent._component).requests
        asked = len(requests)
        assert agent.run("Forget everything about me").content == "Forgotten."
        system = requests[asked].messages[0].text  # the second run's first request
        assert "update_user_memory" in system and "The user is vegetarian" in system
        assert agent.get_user_memories() == []
    # a task is given exactly the flagged changes (Agno's defaults: no delete, here clear)
    assert memory_model.offered[0] == ["add_memory", "clear_memory", "update_memory"]
    assert "<task>" in memory_model.prompts[0]


def test_after_a_run_the_flags_choose_the_tools_and_delete_is_always_given(rt, db):
    memory_model = Recorder()
    manager = MemoryManager(
        model=TestModel(function=memory_model), add_memories=False, update_memories=False
    )
    with Agent(
        rt,
        TestModel(["Hi."]),
        db=db,
        memory_manager=manager,
        update_memory_on_run=True,
    ) as agent:
        agent.run("I am vegetarian")
        assert agent.get_user_memories() == []  # no add_memory to call
    assert memory_model.offered == [["delete_memory"]]


def test_enable_user_memories_decides_over_update_memory_on_run(rt, db):
    memory_model = Recorder()
    manager = MemoryManager(model=TestModel(function=memory_model))
    with Agent(
        rt,
        TestModel(["Hi."]),
        db=db,
        memory_manager=manager,
        update_memory_on_run=True,
        enable_user_memories=False,
    ) as agent:
        assert agent.update_memory_on_run is False
        agent.run("I am vegetarian")
    assert memory_model.offered == []


def test_memories_in_context_even_before_there_are_any(rt, db):
    with Agent(
        rt, TestModel(["Hi."]), db=db, memory_manager=MemoryManager(), add_memories_to_context=True
    ) as agent:
        agent.run("Hello")
        system = agent.runtime.kernel.component(agent._component).requests[-1].messages[0].text
        assert "no memories of this user yet" in system


def test_a_standalone_managers_task_keeps_to_its_flags(rt, db):
    memory_model = Recorder()
    manager = MemoryManager(model=TestModel(function=memory_model), db=db)
    manager.add_user_memory("The user likes tea", user_id="bo")
    manager.update_memory_task("Remember that the user is vegetarian", user_id="bo")
    assert [m.memory for m in manager.get_user_memories("bo")] == [
        "The user likes tea",
        "The user is vegetarian",
    ]
    assert memory_model.offered == [["add_memory", "update_memory"]]
    message = manager.get_system_message(enable_delete_memory=False, enable_clear_memory=False)
    assert "delete_memory" not in message.content and "add_memory" in message.content
