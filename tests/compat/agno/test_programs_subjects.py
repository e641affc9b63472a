"""Our own cookbook-style programs, one per subject of the inventory's first phase (toolkits,
knowledge readers and a local Chroma collection, a context wiki, reasoning steps,
guardrails, named db tables with memory tools), each run against the loopback `wire` and
checked for what it did."""

from __future__ import annotations

import json


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_workspace_assistant(wire, program):
    wire.calls("read_file", file_name="orders.csv")
    wire.calls("run_shell_command", args=["wc", "-l", "orders.csv"])
    wire.calls("run_shell_command", args=["rm", "orders.csv"])  # not on the host's list
    wire.calls("run_python_code", code="total = 3 + 1", variable_to_return="total")
    wire.calls("add", a=3, b=1)
    wire.calls("save_file", contents="4", file_name="total.txt")
    wire.says("Four items; saved to total.txt.")
    scope = program("toolkits_workspace_assistant")
    work = scope["work"]
    results = [tool_results(b)[-1] for b in wire.bodies[1:7]]
    assert "lamp,3" in results[0]
    assert results[1].split()[0] == "3"
    assert "'rm' is not among the programs" in results[2]
    assert results[3] == "4" and json.loads(results[4])["result"] == 4
    assert (work / "total.txt").read_text() == "4" and (work / "orders.csv").exists()


def test_knowledge_readers_and_local_chroma(wire, program):
    wire.calls("search_knowledge_base", query="honey cake price opening hours")
    wire.says("The honey cake is 2.50; we open at dawn.")
    scope = program("knowledge_readers_and_chroma")
    assert [d.content for d in scope["rows"]][1:] == ["rye bread, 4.20", "honey cake, 2.50"]
    assert scope["vector_db"].get_count() == 4  # header, two rows, the page
    found = tool_results(wire.bodies[1])[-1]
    assert "honey cake, 2.50" in found and "open at dawn" in found
    assert (scope["folder"] / "chroma").is_dir()


def test_context_team_wiki(wire, program):
    wire.calls("update_wiki", instruction="Add: the office closes at five on Fridays.")
    wire.calls(
        "save_file",
        contents="# Office hours\nFridays: closes at five.\n",
        file_name="office-hours.md",
    )
    wire.says("Added office-hours.md.", "Noted in the wiki.")
    wire.calls("query_wiki", question="When does the office close on Friday?")
    wire.calls("read_file", file_name="office-hours.md")
    wire.says("At five.", "At five on Fridays.")
    scope = program("context_team_wiki")
    assert scope["run"].content == "At five on Fridays."
    page = scope["wiki"].backend.path / "office-hours.md"
    assert page.read_text().startswith("# Office hours")


def test_reasoning_steps(wire, program):
    steps = {
        "reasoning_steps": [
            {"title": "Minutes to 10:00", "result": "20 minutes", "next_action": "continue"},
            {"title": "Add 1:05", "result": "1 hour 25 minutes", "next_action": "final_answer"},
        ]
    }
    wire.says(json.dumps(steps))
    scope = program("reasoning_steps")
    assert [s.result for s in scope["steps"]] == ["20 minutes", "1 hour 25 minutes"]


def test_guardrails_masked_support(wire, program):
    wire.says("I have refunded the second charge.")
    program("guardrails_masked_support")
    sent = json.dumps(wire.bodies[0])
    assert "4111" not in sent and "*******************" in sent


def test_named_tables_and_memory_tools(wire, program):
    wire.calls("add_memory", memory="Takes coffee black", topics=["coffee"])
    wire.says("Noted.")
    scope = program("db_named_tables_and_memory_tools")
    assert [m.memory for m in scope["memories"]] == ["Takes coffee black"]
    import sqlite3

    with sqlite3.connect(scope["db"].db_file) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"assistant_sessions", "assistant_memories"} <= tables
