"""An `Agent` with knowledge, driven by the scripted test model: the ``search_knowledge_base``
tool (agentic RAG), ``add_knowledge_to_context``, knowledge filters, agentic filters and
``RunOutput.references``, on a real sqlite-vec file and the offline MiniLM embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ferrule import Agent, Runtime
from ferrule.agent.retrieval import SEARCH_TOOL
from ferrule.knowledge import Knowledge, MessageReferences
from ferrule.knowledge.vectordb import SqliteVecDb
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel

TEXTS = {
    "harbour": ("Ships dock at pier four after dusk.", {"town": "Esk", "year": 1890}),
    "bakery": ("The bakery on Mill Lane sells rye bread from dawn.", {"town": "Esk", "year": 1950}),
    "ferry": (
        "The ferry to Holm leaves at nine and returns at five.",
        {"town": "Holm", "year": 2001},
    ),
}


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@pytest.fixture(scope="module")
def knowledge(rt: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("kb") / "kb.db"
    kb = Knowledge(vector_db=SqliteVecDb(db_file=path), runtime=rt)
    for name, (text, meta) in TEXTS.items():
        kb.add_content(text_content=text, name=name, metadata=meta)
    yield kb
    kb.close()


def requests(rt: Any, agent: Agent[Any]) -> list[Any]:
    return list(rt.kernel.component(agent._component).requests)


def search_call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": SEARCH_TOOL, "arguments": arguments}]}


def test_the_model_searches_the_knowledge_base(rt: Any, knowledge: Knowledge) -> None:
    model = TestModel([search_call({"query": "when does the boat to Holm leave?"}), "At nine."])
    with Agent(rt, model, knowledge=knowledge) as agent:
        output = agent.run("When does the ferry leave?")
        sent = requests(rt, agent)
    assert output.content == "At nine."
    assert [t.function.name for t in sent[0].tools] == [SEARCH_TOOL]
    parameters = sent[0].tools[0].function.parameters
    assert set(parameters["properties"]) == {"query"}  # no filters unless enabled
    assert output.references is not None and len(output.references) == 1
    ref = output.references[0]
    assert isinstance(ref, MessageReferences) and ref.query == "when does the boat to Holm leave?"
    assert ref.references[0]["name"] == "ferry" and ref.time is not None
    tool_message = next(m for m in output.messages if m.role == "tool")
    shown = json.loads(tool_message.content)
    assert shown[0]["content"] == TEXTS["ferry"][0]  # what the model read is what was found


def test_knowledge_filters_bound_every_search(rt: Any, knowledge: Knowledge) -> None:
    model = TestModel([search_call({"query": "boats and ships"}), "done"])
    with Agent(rt, model, knowledge=knowledge, knowledge_filters={"town": "Esk"}) as agent:
        output = agent.run("Tell me about boats")
        docs = agent.get_relevant_docs_from_knowledge("boats", num_documents=5)
        narrower = agent.get_relevant_docs_from_knowledge("boats", filters={"year": {"$gt": 1900}})
    assert output.references is not None
    assert {r["name"] for r in output.references[0].references} == {"harbour", "bakery"}
    # called directly, it searches with the filters it is given (Agno's method)
    assert {d["name"] for d in docs} == {"harbour", "bakery", "ferry"}
    assert {d["name"] for d in narrower} == {"bakery", "ferry"}


def test_agentic_filters_let_the_model_narrow_its_search(rt: Any, knowledge: Knowledge) -> None:
    model = TestModel(
        [
            search_call({"query": "what is there?", "filters": {"town": "Holm"}}),
            search_call({"query": "what is there?", "filters": {"year": {"$oops": 1}}}),
            "done",
        ]
    )
    with Agent(rt, model, knowledge=knowledge, enable_agentic_knowledge_filters=True) as agent:
        output = agent.run("What is in Holm?")
        sent = requests(rt, agent)
    parameters = sent[0].tools[0].function.parameters
    assert set(parameters["properties"]) == {"query", "filters"}
    assert output.references is not None
    assert [r["name"] for r in output.references[0].references] == ["ferry"]
    # a bad filter from the model is a tool error the model reads, not the end of the run
    assert output.status == "completed" and len(output.references) == 1
    tool_results = [m.content for m in output.messages if m.role == "tool"]
    assert "$oops" in tool_results[1]


def test_add_knowledge_to_context(rt: Any, knowledge: Knowledge) -> None:
    model = TestModel(["Rye bread."])
    with Agent(
        rt, model, knowledge=knowledge, add_knowledge_to_context=True, search_knowledge=False
    ) as agent:
        output = agent.run("What does the bakery sell?")
        sent = requests(rt, agent)
    assert sent[0].tools == []  # search_knowledge=False: no tool
    user = sent[0].messages[-1]
    assert user.role == "user" and user.text.startswith("What does the bakery sell?")
    assert "<references>" in user.text and TEXTS["bakery"][0] in user.text
    assert output.references is not None and output.references[0].query == (
        "What does the bakery sell?"
    )


def test_runs_without_searches_have_no_references(rt: Any, knowledge: Knowledge) -> None:
    with Agent(rt, TestModel(["Hello."]), knowledge=knowledge) as agent:
        assert agent.run("Hi").references is None
    with Agent(rt, TestModel(["Hello."])) as agent:
        assert agent.run("Hi").references is None
        with pytest.raises(InvalidInputError) as caught:
            agent.get_relevant_docs_from_knowledge("x")
        assert caught.value.errors[0]["path"] == "knowledge"


def test_bad_knowledge_settings_name_the_field(rt: Any, tmp_path: Path) -> None:
    for options, field in (
        ({"knowledge": "not a knowledge"}, "knowledge"),
        ({"knowledge_filters": [("town", "Esk")]}, "knowledge_filters"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            Agent(rt, TestModel(["x"]), **options)
        assert caught.value.errors[0]["path"] == field


def test_a_knowledge_without_runtime_uses_the_agents(rt: Any, tmp_path: Path) -> None:
    kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"))
    with Agent(rt, TestModel(["ok"]), knowledge=kb) as agent:
        kb.add_content(text_content=TEXTS["ferry"][0], name="ferry")
        assert kb.runtime is rt
        assert agent.get_relevant_docs_from_knowledge("ferry")[0]["name"] == "ferry"
    kb.close()


@pytest.mark.parametrize("resumer", ["the same agent", "another agent"])
def test_references_are_stored_with_the_run_and_survive_a_pause(
    rt: Any, knowledge: Knowledge, tmp_path: Path, resumer: str
) -> None:
    from ferrule import tool
    from ferrule.db.sqlite import SqliteDb

    @tool(requires_confirmation=True)
    def book_ticket(route: str) -> str:
        """Book a ticket."""
        return f"booked {route}"

    model = TestModel(
        [
            search_call({"query": "ferry"}),
            {"tool_calls": [{"name": "book_ticket", "arguments": {"route": "Holm"}}]},
            search_call({"query": "bread"}),
            "Booked; the bakery opens at dawn.",
        ]
    )
    db = SqliteDb(db_file=tmp_path / "agent.db")
    with Agent(rt, model, tools=[book_ticket], knowledge=knowledge, db=db) as agent:
        paused = agent.run("Book me the ferry", metadata={"who": "test"})
        assert paused.is_paused
        assert [r.query for r in paused.references or []] == ["ferry"]
        if resumer == "another agent":  # it loads the paused run from the db
            rest = TestModel([search_call({"query": "bread"}), "Booked; the bakery opens at dawn."])
            agent = Agent(rt, rest, tools=[book_ticket], knowledge=knowledge, db=db)
        done = agent.continue_run(paused.run_id, confirm=True)
        assert done.status == "completed"
        assert [r.query for r in done.references or []] == ["ferry", "bread"]
        stored = agent.get_last_run_output(session_id=done.session_id)
    assert stored is not None and stored.metadata == {"who": "test"}
    assert stored.references == done.references


def test_ailoy_form_takes_its_knowledge_as_ailoy_does(
    rt: Any, knowledge: Knowledge, langmodel: Any
) -> None:
    """``Agent(lm, tools, knowledge)``, Ailoy 0.2's constructor: the knowledge is searched
    for the run's last user message and given with it (as `Agent.set_knowledge`), not
    offered as a search tool; by keyword too."""
    for made in (
        lambda lm: Agent(lm, [], knowledge),
        lambda lm: Agent(lm, knowledge=knowledge),
    ):
        lm = langmodel(rt, TestModel(["At nine."]))
        with made(lm) as agent:
            outputs = list(agent.run("When does the ferry to Holm leave?"))
            sent = requests(rt, agent)
        assert [o.message.text for o in outputs] == ["At nine."]
        assert sent[0].tools in (None, [])
        assert "ferry to Holm leaves at nine" in sent[0].messages[-1].text
