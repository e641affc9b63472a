"""Agno's knowledge factory: ``Agent(knowledge=make_knowledge)``, a function called as a run
starts (given ``agent`` / ``session_state`` / ``run_context`` by name; it may be async)
whose knowledge base is the run's: its search tool, its instructions, the references
``add_knowledge_to_context`` adds, the filters. What it makes is kept per key as a tool
factory's tools are (``cache_callables``, ``callable_knowledge_cache_key``, else the run's
user, else its session), and ``clear_callable_cache(kind="knowledge")`` forgets it. Runs on
the scripted `TestModel`, with knowledge bases of Agno's protocol, `FileSystemKnowledge`
over real folders, and a `Knowledge` on a real sqlite-vec file with the offline MiniLM
embedder."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.knowledge import Knowledge
from ferrule.knowledge.filesystem import FileSystemKnowledge
from ferrule.knowledge.vectordb import SqliteVecDb
from ferrule.run import RunContext
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def requests(agent: Agent[Any]) -> list[Any]:
    return list(agent.runtime.kernel.component(agent._component).requests)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool_results(output: Any) -> list[str]:
    return [m.content for m in output.messages if m.role == "tool"]


class Shelf:
    """A knowledge base of Agno's protocol holding one note, counting its closings."""

    def __init__(self, note: str) -> None:
        self.note = note
        self.closed = 0
        self.asked: list[Any] = []

    def build_context(self, **kwargs: Any) -> str:
        return f"A shelf of notes about {self.note}."

    def retrieve(self, query: str, max_results: int | None = None, **kwargs: Any) -> list[Any]:
        self.asked.append(kwargs.get("filters"))
        return [{"content": f"{self.note}: on {query}"}]

    async def aclose(self) -> None:
        self.closed += 1


class Shelves:
    """A knowledge factory: one shelf per user it is called for, counting its calls and
    what it was given."""

    def __init__(self) -> None:
        self.calls = 0
        self.made: dict[str, Shelf] = {}
        self.states: list[dict[str, Any]] = []

    def __call__(self, agent: Agent[Any], run_context: RunContext, session_state: dict) -> Shelf:
        assert isinstance(agent, Agent)
        self.calls += 1
        self.states.append(dict(session_state))
        user = run_context.user_id or "nobody"
        shelf = self.made[f"{user}-{self.calls}"] = Shelf(f"{user}'s notes #{self.calls}")
        return shelf


def test_each_users_runs_search_the_knowledge_made_for_that_user(rt):
    shelves = Shelves()
    model = TestModel([call("search_knowledge_base", query="boats"), "done"] * 4)
    agent = Agent(rt, model, knowledge=shelves, session_state={"tier": "gold"})
    with agent:
        ann = agent.run("Boats?", user_id="ann")
        again = agent.run("Boats?", user_id="ann")
        bob = agent.run("Boats?", user_id="bob")
        sent = requests(agent)
        assert agent.run("Boats?", user_id="ann").content == "done"
    assert "ann's notes #1: on boats" in tool_results(ann)[0]
    assert "ann's notes #1: on boats" in tool_results(again)[0]  # kept for ann
    assert "bob's notes #2: on boats" in tool_results(bob)[0]
    assert shelves.calls == 2
    assert shelves.states[0] == {"tier": "gold"}
    # the made knowledge's instructions open the run's system message
    assert "A shelf of notes about ann's notes #1." in sent[0].messages[0].text
    assert "A shelf of notes about bob's notes #2." in sent[4].messages[0].text
    assert ann.references[0].references == [{"content": "ann's notes #1: on boats"}]


def test_without_caching_the_factory_is_called_once_per_run(rt):
    shelves = Shelves()
    model = TestModel(["a", "b"])
    with Agent(rt, model, knowledge=shelves, cache_callables=False) as agent:
        agent.run("hi", user_id="ann")
        agent.run("hi", user_id="ann")
    assert shelves.calls == 2  # one per run, though both its system message and tools read it


def test_without_a_user_the_session_is_the_key(rt):
    shelves = Shelves()
    with Agent(rt, TestModel(["a"] * 3), knowledge=shelves) as agent:
        agent.run("hi", session_id="s1")
        agent.run("hi", session_id="s1")
        agent.run("hi", session_id="s2")
    assert shelves.calls == 2


def test_a_key_function_decides_the_key_and_may_be_async(rt):
    shelves = Shelves()
    seen = []

    async def by_tenant(agent, run_context):
        seen.append(agent.name)
        return (run_context.metadata or {}).get("tenant")

    agent = Agent(
        rt,
        TestModel(["a"] * 5),
        name="desk",
        knowledge=shelves,
        callable_knowledge_cache_key=by_tenant,
    )
    with agent:
        assert agent.callable_knowledge_cache_key is by_tenant
        agent.run("a", user_id="ann", metadata={"tenant": "t1"})
        agent.run("b", user_id="bob", metadata={"tenant": "t1"})  # same tenant: kept
        agent.run("c", user_id="bob", metadata={"tenant": "t2"})
        agent.run("d", user_id="bob")  # None: not kept
        agent.run("e", user_id="bob")
    assert shelves.calls == 4
    assert seen == ["desk"] * 5


def test_the_knowledge_and_tools_caches_are_cleared_apart(rt):
    shelves = Shelves()
    tool_calls = []

    def make_tools() -> list:
        tool_calls.append(1)

        def ping() -> str:
            """Ping."""
            return "pong"

        return [ping]

    with Agent(rt, TestModel(["a"] * 6), knowledge=shelves, tools=make_tools) as agent:
        agent.run("a", user_id="ann")
        agent.clear_callable_cache(kind="tools")
        agent.run("b", user_id="ann")
        assert (shelves.calls, len(tool_calls)) == (1, 2)
        agent.clear_callable_cache(kind="knowledge")
        agent.run("c", user_id="ann")
        assert (shelves.calls, len(tool_calls)) == (2, 2)
        agent.clear_callable_cache()
        agent.run("d", user_id="ann")
        assert (shelves.calls, len(tool_calls)) == (3, 3)
        kept = shelves.made["ann-3"]
        agent.clear_callable_cache(kind="knowledge", close=True)
        assert kept.closed == 1
        assert shelves.made["ann-2"].closed == 0  # forgotten earlier, without close


def test_an_async_factory_with_add_knowledge_to_context_and_filters(rt):
    shelf = Shelf("harbour")

    async def make(run_context):
        await asyncio.sleep(0)
        return shelf

    async def main() -> None:
        agent = Agent(
            rt,
            TestModel(["Nine."]),
            knowledge=make,
            search_knowledge=False,
            add_knowledge_to_context=True,
            knowledge_filters={"town": "Esk"},
        )
        output = await agent.arun("When does the ferry leave?", user_id="ann")
        sent = requests(agent)
        await agent.adelete()
        assert "harbour: on When does the ferry leave?" in sent[0].messages[-1].text
        assert output.references[0].references[0]["content"].startswith("harbour")
        assert not sent[0].tools

    asyncio.run(main())
    assert shelf.asked == [{"town": "Esk"}]
    # a sync run takes the async factory too: it runs on the agent's loop
    with Agent(rt, TestModel(["a"]), knowledge=make) as agent:
        assert agent.run("hi").content == "a"


def test_a_filesystem_knowledge_per_user_folder(rt, tmp_path):
    for user, text in (("ann", "Ann's tea: 80 degrees."), ("bob", "Bob's tea: 95 degrees.")):
        (tmp_path / user).mkdir()
        (tmp_path / user / "tea.md").write_text(text + "\n")

    def folder(run_context):
        return FileSystemKnowledge(base_dir=str(tmp_path / run_context.user_id))

    model = TestModel([call("grep_file", query="tea"), "ok"] * 2)
    with Agent(rt, model, knowledge=folder) as agent:
        ann = agent.run("tea?", user_id="ann")
        bob = agent.run("tea?", user_id="bob")
        sent = requests(agent)
    assert sorted(t.function.name for t in sent[0].tools) == ["get_file", "grep_file", "list_files"]
    assert "80 degrees" in tool_results(ann)[0] and "95" not in tool_results(ann)[0]
    assert "95 degrees" in tool_results(bob)[0]


def test_a_real_knowledge_made_per_user_with_its_filters(rt, tmp_path):
    made: list[Knowledge] = []

    def per_user(run_context) -> Knowledge:
        kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / f"{run_context.user_id}.db"))
        kb.add_content(text_content="Ships dock at pier four.", name="pier", metadata={"a": 1})
        kb.add_content(text_content="The ferry leaves at nine.", name="ferry", metadata={"a": 2})
        made.append(kb)
        return kb

    model = TestModel([call("search_knowledge_base", query="boats"), "done"])
    with Agent(rt, model, knowledge=per_user, knowledge_filters={"a": 2}) as agent:
        output = agent.run("Boats?", user_id="ann")
        assert agent.add_to_knowledge("q", "r") == "Knowledge not available"  # a run's only
        context = RunContext(run_id="r2", session_id="s", user_id="ann")
        agent.get_tools(run_context=context)  # ann's knowledge: the one kept
        assert context.knowledge is made[0]
        found = agent.get_relevant_docs_from_knowledge("boats", run_context=context)
        with pytest.raises(InvalidInputError) as raised:
            agent.get_relevant_docs_from_knowledge("boats")
        assert raised.value.errors[0]["path"] == "run_context"
        agent.clear_callable_cache(close=True)
    assert len(made) == 1
    assert [r["name"] for r in output.references[0].references] == ["ferry"]
    assert {d["name"] for d in found} == {"pier", "ferry"}


def test_what_the_factory_makes_is_checked(rt):
    with Agent(rt, TestModel(["a"]), knowledge=lambda: "notes") as agent:
        with pytest.raises(InvalidInputError) as raised:
            agent.run("hi")
    assert raised.value.errors[0]["path"] == "knowledge"
    assert "must return" in raised.value.message and "str" in raised.value.message

    calls = []

    def nothing(run_context):
        calls.append(run_context.run_id)

    with Agent(rt, TestModel(["a", "b"]), knowledge=nothing) as agent:
        agent.run("hi", user_id="ann")
        agent.run("hi", user_id="ann")  # None is not kept
        assert not requests(agent)[0].tools
    assert len(calls) == 2

    with Agent(
        rt, TestModel(["a"]), knowledge=Shelves(), callable_knowledge_cache_key=lambda: 7
    ) as agent:
        with pytest.raises(InvalidInputError) as raised:
            agent.run("hi")
    assert raised.value.errors[0]["path"] == "callable_knowledge_cache_key"


def test_bad_settings_are_refused_naming_them(rt):
    with pytest.raises(InvalidInputError) as raised:
        Agent(rt, TestModel(), callable_knowledge_cache_key="user")
    assert raised.value.errors[0]["path"] == "callable_knowledge_cache_key"
    with pytest.raises(InvalidInputError) as raised:
        Agent(rt, TestModel(), knowledge=Knowledge)  # a class is not a factory
    assert raised.value.errors[0]["path"] == "knowledge"
