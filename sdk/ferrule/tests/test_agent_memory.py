"""User memories and session summaries on a real SQLite file: the MemoryManager's model
adds, updates and deletes memories through its tool calls, memories reach the agent's
system message, each user sees only their own, and summaries are written and read back.
The models are the deterministic test model (a function reading its request, where the
reply depends on ids the store made)."""

from __future__ import annotations

import re

import pytest
from ferrule import Agent, Runtime
from ferrule.agent import MemoryManager
from ferrule.db.sqlite import SqliteDb
from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lm import InferInput
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def db(tmp_path):
    return SqliteDb(db_file=tmp_path / "memory.db")


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def requests(rt: Runtime, component: str) -> list[InferInput]:
    return list(rt.kernel.component(component).requests)


class Curator:
    """The memory model: acts on what the newest user message says, with the ids it was
    shown; after its tool calls it says "done"."""

    def __init__(self) -> None:
        self.seen: list[InferInput] = []
        self.other_id = ""  # another user's memory, which it is told to delete

    def __call__(self, request: InferInput) -> dict | str:
        self.seen.append(request)
        if request.messages[-1].role == "tool":
            return "done"
        prompt = request.messages[-1].text
        stored = dict(re.findall(r"- \[(\S+)\] (.+)", prompt))
        said = prompt.split("<new_user_messages>")[1]
        by_text = {text.split(" (topics")[0]: memory_id for memory_id, text in stored.items()}
        if "I am Ann" in said:
            return {
                "tool_calls": [
                    call("add_memory", memory="The user is called Ann", topics=["name"]),
                    call("add_memory", memory="The user likes tea", topics=["drinks"]),
                ]
            }
        if "coffee now" in said:
            return {
                "tool_calls": [
                    call(
                        "update_memory",
                        memory_id=by_text["The user likes tea"],
                        memory="The user likes coffee",
                        topics=["drinks"],
                    )
                ]
            }
        if "forget my name" in said:
            return {
                "tool_calls": [call("delete_memory", memory_id=by_text["The user is called Ann"])]
            }
        if "someone else's" in said:
            return {"tool_calls": [call("delete_memory", memory_id=self.other_id)]}
        return "done"


def test_the_memory_manager_adds_updates_and_deletes_through_tool_calls(rt, db):
    curator = Curator()
    manager = MemoryManager(model=TestModel(function=curator))
    with Agent(
        rt,
        TestModel(["Hello Ann.", "Coffee it is.", "Done.", "Hi."]),
        db=db,
        user_id="ann",
        memory_manager=manager,
        enable_user_memories=True,
    ) as agent:
        agent.run("Hi, I am Ann and I like tea")
        memories = agent.get_user_memories()
        assert [(m.memory, m.topics, m.user_id) for m in memories] == [
            ("The user is called Ann", ["name"], "ann"),
            ("The user likes tea", ["drinks"], "ann"),
        ]
        first_ids = [m.memory_id for m in memories]

        agent.run("I drink coffee now")
        assert [m.memory for m in agent.get_user_memories()] == [
            "The user is called Ann",
            "The user likes coffee",
        ]
        assert [m.memory_id for m in agent.get_user_memories()] == first_ids  # updated in place
        # the agent's model saw the memories stored before the run
        system = requests(rt, agent._component)[-1].messages[0]
        assert system.role == "system"
        assert "<memories_from_previous_interactions>\n- The user is called Ann\n" in system.text
        assert "- The user likes tea\n</memories_from_previous_interactions>" in system.text

        agent.run("Please forget my name")
        assert [m.memory for m in agent.get_user_memories()] == ["The user likes coffee"]
        # the manager was shown the ids and the user's words, and had exactly its three tools
        shown = curator.seen[-2]
        assert {t.function.name for t in shown.tools} == {
            "add_memory",
            "update_memory",
            "delete_memory",
        }
        assert "- Please forget my name" in shown.messages[-1].text

        # another user's memory is out of the manager's reach
        agent.runtime.call_method(
            agent._sessions.component, "upsert_memory", {"user_id": "bob", "memory": "Bob's secret"}
        )
        (bob,) = agent.get_user_memories("bob")
        curator.other_id = bob.memory_id
        agent.run("Delete someone else's memory")
        assert [m.memory for m in agent.get_user_memories("bob")] == ["Bob's secret"]
        tool_result = curator.seen[-1].messages[-1]
        assert tool_result.role == "tool" and "there is no memory" in tool_result.text


def test_memories_on_the_agents_own_model(rt, db):
    model = TestModel(
        [
            "Nice to meet you, Bo.",  # the answer
            {"tool_calls": [call("add_memory", memory="The user is Bo")]},  # the memory call
            "done",
        ]
    )
    with Agent(rt, model, db=db, user_id="bo", enable_user_memories=True) as agent:
        assert agent.run("I am Bo").content == "Nice to meet you, Bo."
        assert [m.memory for m in agent.get_user_memories()] == ["The user is Bo"]
        sent = requests(rt, agent._component)
        assert len(sent) == 3 and sent[1].messages[0].text.startswith("You manage what")


def test_memories_need_a_db(rt):
    with pytest.raises(InvalidInputError, match="db"):
        Agent(rt, TestModel(), enable_user_memories=True)


def test_session_summaries_are_written_and_read_back(rt, db):
    model = TestModel(
        [
            "Paris is lovely in May.",
            {"output": {"summary": "The user plans a trip to Paris in May.", "topics": ["travel"]}},
            "Book early.",
            {"output": {"summary": "Trip to Paris in May; book early.", "topics": ["travel"]}},
        ]
    )
    with Agent(rt, model, db=db, session_id="trip", enable_session_summaries=True) as agent:
        agent.run("I go to Paris in May")
        summary = agent.get_session().summary
        assert summary.summary == "The user plans a trip to Paris in May."
        assert summary.topics == ["travel"]
        agent.run("Any advice?")
        sent = requests(rt, agent._component)
        answer, summarizing = sent[2], sent[3]
        assert "<summary_of_previous_interactions>\nThe user plans a trip" in (
            answer.messages[0].text
        )
        assert summarizing.output_schema is not None
        assert "The user plans a trip to Paris in May." in summarizing.messages[-1].text
        assert agent.get_session().summary.summary == "Trip to Paris in May; book early."
