"""Agno's knowledge options of the Agent, with the scripted test model on a real
sqlite-vec file and the offline MiniLM embedder: a knowledge base of Agno's protocol
(`FileSystemKnowledge`: its own tools and instructions), the knowledge's instructions in
the system message (``add_search_knowledge_instructions``), ``update_knowledge`` (the
model adds to it with ``add_to_knowledge``), ``references_format``, a run's own
``knowledge_filters`` (a dict, or `ferrule.filters` expressions) and
`get_relevant_docs_from_knowledge` with Agno's arguments."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.filters import EQ
from ferrule.knowledge import Knowledge
from ferrule.knowledge.filesystem import FileSystemKnowledge
from ferrule.knowledge.vectordb import SqliteVecDb
from ferrule_testmodel import TestModel

TEXTS = {
    "harbour": ("Ships dock at pier four after dusk.", {"town": "Esk"}),
    "ferry": ("The ferry to Holm leaves at nine.", {"town": "Holm"}),
}


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def knowledge(rt: Any, tmp_path: Any) -> Any:
    kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"), runtime=rt)
    for name, (text, meta) in TEXTS.items():
        kb.add_content(text_content=text, name=name, metadata=meta)
    yield kb
    kb.close()


def requests(agent: Agent[Any]) -> list[Any]:
    return list(agent.runtime.kernel.component(agent._component).requests)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_filesystem_knowledge_gives_the_model_its_own_tools(rt, tmp_path):
    (tmp_path / "guide.md").write_text("Brew green tea at 80 degrees for two minutes.\n")
    files = FileSystemKnowledge(base_dir=str(tmp_path))
    model = TestModel([call("grep_file", query="green tea"), "At 80 degrees."])
    with Agent(rt, model, knowledge=files) as agent:
        output = agent.run("How hot for green tea?")
        sent = requests(agent)
    assert sorted(t.function.name for t in sent[0].tools) == ["get_file", "grep_file", "list_files"]
    assert "grep_file(query)" in sent[0].messages[0].text  # its build_context
    assert "80 degrees" in next(m.content for m in output.messages if m.role == "tool")
    with Agent(rt, TestModel(["x"]), knowledge=files) as agent:
        docs = agent.get_relevant_docs_from_knowledge("green tea")
    assert docs[0]["name"] == "guide.md" and "80 degrees" in docs[0]["content"]


def test_the_knowledge_instructions_can_be_left_out(rt, knowledge):
    with Agent(rt, TestModel(["x", "y"]), knowledge=knowledge) as agent:
        agent.run("hi")
        assert "search_knowledge_base" in requests(agent)[-1].messages[0].text
        agent.add_search_knowledge_instructions = False
        agent.run("hi")
        assert requests(agent)[-1].messages[0].role != "system"


def test_update_knowledge_lets_the_model_add_to_it(rt, knowledge):
    model = TestModel(
        [call("add_to_knowledge", query="When is the market?", result="Saturdays."), "Noted."]
    )
    with Agent(rt, model, knowledge=knowledge, update_knowledge=True) as agent:
        assert agent.run("Remember: the market is on Saturdays.").content == "Noted."
        assert "add_to_knowledge" in [t.function.name for t in requests(agent)[0].tools]
        found = agent.get_relevant_docs_from_knowledge("market day", num_documents=1)
        assert found[0]["name"] == "When_is_the_market"
        assert agent.add_to_knowledge("Ferry fare?", "Four coins.").startswith("Successfully")
    files = FileSystemKnowledge(base_dir=".")
    with Agent(rt, TestModel(), knowledge=files, update_knowledge=True) as agent:
        assert agent.add_to_knowledge("q", "r") == "Knowledge does not support insert"


def test_references_as_yaml(rt, knowledge):
    with Agent(
        rt,
        TestModel(["Nine."]),
        knowledge=knowledge,
        search_knowledge=False,
        add_knowledge_to_context=True,
        references_format="yaml",
    ) as agent:
        agent.run("When does the ferry to Holm leave?")
        text = requests(agent)[0].messages[-1].text
    block = text.split("<references>\n")[1].split("\n</references>")[0]
    assert any(r["name"] == "ferry" for r in yaml.safe_load(block))


def test_a_runs_knowledge_filters_go_over_the_agents(rt, knowledge):
    model = TestModel([call("search_knowledge_base", query="boats"), "done"] * 2)
    with Agent(rt, model, knowledge=knowledge, knowledge_filters={"town": "Esk"}) as agent:
        esk = agent.run("Boats?")
        holm = agent.run("Boats?", knowledge_filters={"town": "Holm"})
        expressed = agent.get_relevant_docs_from_knowledge("boats", filters=[EQ("town", "Holm")])
    assert [r["name"] for r in esk.references[0].references] == ["harbour"]
    assert [r["name"] for r in holm.references[0].references] == ["ferry"]
    assert [d["name"] for d in expressed] == ["ferry"]


class Shelf:
    """A knowledge base of Agno's protocol: documents for a query, and the filter keys its
    documents hold."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    def build_context(self, **kwargs: Any) -> str:
        return "A shelf of notes."

    def retrieve(self, query: str, max_results: int | None = None, **kwargs: Any) -> list[Any]:
        self.asked.append(kwargs.get("filters"))
        return [{"content": f"a note on {query}"}]

    def validate_filters(self, filters: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        valid = {k: v for k, v in filters.items() if k == "town"}
        return valid, [k for k in filters if k not in valid]


def test_relevant_docs_with_agnos_arguments(rt):
    shelf = Shelf()
    with Agent(rt, TestModel(), knowledge=shelf) as agent:
        found = agent.get_relevant_docs_from_knowledge(
            "boats", filters={"town": "Holm", "colour": "red"}, validate_filters=True
        )
        assert found == [{"content": "a note on boats"}]
        agent.get_relevant_docs_from_knowledge("boats", filters={"colour": "red"})
    assert shelf.asked == [{"town": "Holm"}, {"colour": "red"}]

    seen = {}

    def retriever(query, num_documents=None, filters=None, run_context=None, tag=None):
        seen.update(query=query, num=num_documents, filters=filters, tag=tag)
        return [{"content": "from the retriever"}]

    with Agent(rt, TestModel(), knowledge=shelf, knowledge_retriever=retriever) as agent:
        found = agent.get_relevant_docs_from_knowledge("q", 2, {"a": 1}, tag="x")
    assert found == [{"content": "from the retriever"}]
    assert seen == {"query": "q", "num": 2, "filters": {"a": 1}, "tag": "x"}
