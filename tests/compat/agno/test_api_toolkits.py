"""Agno's toolkits on ferrule: FileTools, ShellTools and PythonTools keep to the folder, the
programs and the packages the host set, whatever the model asks (their refusals are tool
results the model reads, and nothing ran); CalculatorTools, MemoryTools (the run's user
only), UserControlFlowTools (the run pauses for the user's form), KnowledgeTools and
ReasoningTools run through an agent against the loopback `wire`, as a program would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ferrule.agent import Agent
from ferrule.db.schemas import UserMemory
from ferrule.db.sqlite import SqliteDb
from ferrule.models.openai import OpenAIChat
from ferrule.tools.calculator import CalculatorTools
from ferrule.tools.file import FileTools
from ferrule.tools.memory import MemoryTools
from ferrule.tools.python import PythonTools
from ferrule.tools.shell import ShellTools
from ferrule.tools.user_control_flow import UserControlFlowTools
from ferrule_kernel import InvalidInputError
from ferrule_kit.network.hostpolicy import HostPolicyError


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    base = tmp_path / "work"
    base.mkdir()
    (tmp_path / "secret.txt").write_text("the host's secret")
    return base


# -- FileTools --------------------------------------------------------------------------


def test_file_tools_read_write_list_and_search_inside_the_folder(folder):
    files = FileTools(base_dir=folder)
    assert sorted(files.functions) == [
        "list_files",
        "read_file",
        "read_file_chunk",
        "replace_file_chunk",
        "save_file",
        "search_content",
        "search_files",
    ]  # delete_file is off unless the host turns it on
    assert files.save_file("one\ntwo\nthree", "notes/a.md") == "notes/a.md"
    assert files.save_file("x", "notes/a.md", overwrite=False) == "File notes/a.md already exists"
    assert files.read_file("notes/a.md") == "one\ntwo\nthree"
    assert files.read_file_chunk("notes/a.md", 1, 2) == "two\nthree"
    files.replace_file_chunk("notes/a.md", 1, 1, "TWO")
    assert (folder / "notes" / "a.md").read_text() == "one\nTWO\nthree"
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("TWO")
    assert json.loads(files.list_files()) == ["notes/a.md"]  # .git left out
    assert json.loads(files.search_files("**/*.md"))["files"] == ["notes/a.md"]
    found = json.loads(files.search_content("two"))
    assert [f["file"] for f in found["files"]] == ["notes/a.md"]
    assert "TWO" in found["files"][0]["snippet"]
    small = FileTools(base_dir=folder, max_file_lines=2)
    assert small.read_file("notes/a.md").startswith("Error reading file: file too long")


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.read_file("../secret.txt"),
        lambda f: f.read_file("/etc/hostname"),
        lambda f: f.save_file("x", "../planted.txt"),
        lambda f: f.list_files(".."),
        lambda f: f.search_files("../*.txt"),
        lambda f: f.search_content("secret", directory=".."),
        lambda f: f.read_file("link/secret.txt"),
    ],
)
def test_file_tools_refuse_a_path_outside_the_folder(folder, call):
    (folder / "link").symlink_to(folder.parent)
    with pytest.raises(HostPolicyError, match="outside its base directory"):
        call(FileTools(base_dir=folder, all=True))
    assert not (folder.parent / "planted.txt").exists()


def test_the_model_reads_the_refusal_and_the_file_stays_unread(folder, wire):
    wire.calls("read_file", file_name="../secret.txt")
    wire.calls("read_file", file_name="notes.txt", base_dir=str(folder.parent))
    wire.says("I cannot read it.")
    (folder / "notes.txt").write_text("public")
    Agent(model=OpenAIChat(id="gpt-4o"), tools=[FileTools(base_dir=folder)]).run("Read it")
    first, second = tool_results(wire.bodies[1])[-1], tool_results(wire.bodies[2])[-1]
    assert "outside its base directory" in first and "secret" not in first.split("'")[-1]
    assert "base_dir" in second and "public" not in second  # no parameter widens the folder
    assert "the host's secret" not in json.dumps(wire.bodies)


# -- ShellTools ---------------------------------------------------------------------------


def test_shell_tools_run_in_the_folder_and_return_the_last_lines(folder):
    (folder / "a.txt").write_text("1\n2\n3\n")
    shell = ShellTools(base_dir=folder)
    assert shell.run_shell_command(["cat", "a.txt"], tail=2) == "3\n"
    assert shell.run_shell_command(["pwd"]).strip() == str(folder.resolve())
    assert shell.run_shell_command(["cat", "missing.txt"]).startswith("Error: ")


def test_shell_tools_run_only_the_programs_the_host_allows(folder, wire):
    shell = ShellTools(base_dir=folder, allowed_commands=["echo"])
    assert shell.run_shell_command(["echo", "hi"]).strip() == "hi"
    with pytest.raises(HostPolicyError, match="'cat' is not among the programs"):
        shell.run_shell_command(["cat", "../secret.txt"])
    # no way around the list: a shell is a program too, and the model cannot pass a list
    with pytest.raises(HostPolicyError):
        shell.run_shell_command(["sh", "-c", "cat ../secret.txt"])
    wire.calls("run_shell_command", args=["cat", "../secret.txt"], allowed_commands=["cat"])
    wire.calls("run_shell_command", args=["echo", "$(cat ../secret.txt)"])
    wire.says("Done.")
    Agent(model=OpenAIChat(id="gpt-4o"), tools=[shell]).run("Show the secret")
    first, second = tool_results(wire.bodies[1])[-1], tool_results(wire.bodies[2])[-1]
    assert "allowed_commands" in first
    assert second.strip() == "$(cat ../secret.txt)"  # words, not a shell line
    assert "the host's secret" not in json.dumps(wire.bodies)


def test_shell_tools_stop_a_command_at_the_hosts_timeout(folder):
    shell = ShellTools(base_dir=folder, timeout=0.5)
    assert "ran past 0.5 seconds" in shell.run_shell_command(["sleep", "5"])


# -- PythonTools ---------------------------------------------------------------------------


def test_python_tools_run_code_in_a_process_of_its_own_and_return_a_variable(folder):
    python = PythonTools(base_dir=folder)
    assert python.run_python_code("x = 6 * 7", variable_to_return="x") == "42"
    assert python.run_python_code("y = 1") == "successfully ran python code"
    assert python.run_python_code("z = 1", variable_to_return="w") == "Variable w not found"
    failed = python.run_python_code("raise ValueError('no')")
    assert failed == "Error running python code: ValueError: no"
    assert python.save_to_file_and_run("calc.py", "total = sum([1, 2, 3])", "total") == "6"
    assert (folder / "calc.py").is_file()
    assert python.run_python_file_return_variable("calc.py", "total") == "6"
    assert python.read_file("calc.py") == "total = sum([1, 2, 3])"
    assert python.list_files() == "calc.py"
    # nothing is shared with this process
    assert python.run_python_code("import sys\nm = 'pytest' in sys.modules", "m") == "False"
    assert python.safe_globals == {}


def test_python_tools_keep_files_in_the_folder_and_packages_to_the_hosts_list(folder):
    python = PythonTools(base_dir=folder, allowed_packages=["attrs"])
    with pytest.raises(HostPolicyError, match="outside its base directory"):
        python.save_to_file_and_run("../planted.py", "x = 1")
    with pytest.raises(HostPolicyError, match="outside its base directory"):
        python.read_file("../secret.txt")
    assert not (folder.parent / "planted.py").exists()
    with pytest.raises(HostPolicyError, match="'requests' is not among the packages"):
        python.pip_install_package("requests")
    slow = PythonTools(base_dir=folder, timeout=0.5)
    assert "ran past 0.5 seconds" in slow.run_python_code("import time\ntime.sleep(5)")


def test_python_tools_refuse_shared_globals_naming_why():
    with pytest.raises(InvalidInputError, match="its own Python process"):
        PythonTools(safe_globals={"x": 1})
    with pytest.raises(InvalidInputError, match="its own Python process"):
        PythonTools(safe_locals={})


def test_python_tools_through_an_agent(folder, wire):
    wire.calls(
        "run_python_code",
        code="fib = [0, 1]\nfor _ in range(8): fib.append(fib[-1] + fib[-2])",
        variable_to_return="fib",
    )
    wire.says("The first ten: 0 1 1 2 3 5 8 13 21 34.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[PythonTools(base_dir=folder)])
    run = agent.run("The first ten Fibonacci numbers?")
    assert tool_results(wire.bodies[1]) == ["[0, 1, 1, 2, 3, 5, 8, 13, 21, 34]"]
    assert run.content.startswith("The first ten")
    assert sys.executable  # the runs used this interpreter


# -- CalculatorTools -------------------------------------------------------------------------


def test_calculator_tools_answer_json_and_say_what_has_no_answer(wire):
    calc = CalculatorTools()
    assert json.loads(calc.add(2, 3)) == {"operation": "addition", "result": 5}
    assert json.loads(calc.divide(1, 0))["error"]
    assert json.loads(calc.factorial(5))["result"] == 120
    assert json.loads(calc.factorial(-1))["error"]
    assert json.loads(calc.is_prime(221))["result"] is False
    assert json.loads(calc.square_root(-4))["error"]
    wire.calls("exponentiate", a=2, b=10)
    wire.says("1024")
    Agent(model=OpenAIChat(id="gpt-4o"), tools=[CalculatorTools()]).run("2^10?")
    assert json.loads(tool_results(wire.bodies[1])[0])["result"] == 1024


# -- MemoryTools -----------------------------------------------------------------------------


def test_memory_tools_edit_the_runs_users_memories_only(tmp_path, wire):
    db = SqliteDb(db_file=str(tmp_path / "memory.db"))
    other = db.upsert_user_memory(UserMemory(memory="Bob's secret", user_id="bob"))
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[MemoryTools(db=db)], user_id="ada")
    wire.calls("add_memory", memory="Ada likes tea", topics=["drinks"])
    wire.calls("get_memories")
    wire.calls("delete_memory", memory_id=other.memory_id)
    wire.says("Noted.")
    run = agent.run("I like tea.")
    added, listed, deleted = (tool_results(b)[-1] for b in wire.bodies[1:4])
    assert json.loads(added)["memory"]["memory"] == "Ada likes tea"
    assert [m["memory"] for m in json.loads(listed)] == ["Ada likes tea"]
    assert json.loads(deleted) == {
        "success": False,
        "operation": "delete_memory",
        "error": f"Memory with ID {other.memory_id} not found",
    }
    assert db.get_user_memory(other.memory_id, user_id="bob").memory == "Bob's secret"
    assert [m.user_id for m in db.get_user_memories(user_id="ada")] == ["ada"]
    operations = [o["operation"] for o in run.session_state["memory_operations"]]
    assert operations == ["add_memory", "get_memories"]
    system = wire.bodies[0]["messages"][0]["content"]
    assert "get_memories" in system and "<examples>" in system  # add_few_shot on by default


def test_memory_tools_update_keeps_what_is_not_given(tmp_path, wire):
    db = SqliteDb(db_file=str(tmp_path / "memory.db"))
    mine = db.upsert_user_memory(UserMemory(memory="Lives in Lyon", topics=["city"], user_id="ada"))
    wire.calls("update_memory", memory_id=mine.memory_id, memory="Lives in Porto")
    wire.calls("think", thought="check it")
    wire.says("Updated.")
    Agent(model=OpenAIChat(id="gpt-4o"), tools=[MemoryTools(db=db)], user_id="ada").run("Moved")
    memory = db.get_user_memory(mine.memory_id, user_id="ada")
    assert (memory.memory, memory.topics) == ("Lives in Porto", ["city"])
    assert tool_results(wire.bodies[2])[-1] == "Memory Thoughts:\n- check it"


# -- UserControlFlowTools -------------------------------------------------------------------


def test_get_user_input_pauses_the_run_for_the_users_form(wire):
    fields = [
        {"field_name": "city", "field_type": "str", "field_description": "Where to"},
        {"field_name": "nights", "field_type": "int", "field_description": "How long"},
    ]
    wire.calls("get_user_input", user_input_fields=fields)
    wire.says("Booked 3 nights in Porto.")
    agent = Agent(model=OpenAIChat(id="gpt-4o"), tools=[UserControlFlowTools()])
    run = agent.run("Book me a hotel")
    assert run.is_paused
    (requirement,) = run.active_requirements
    assert requirement.needs_user_input
    schema = requirement.user_input_schema
    assert [(f.name, f.field_type, f.description) for f in schema] == [
        ("city", str, "Where to"),
        ("nights", int, "How long"),
    ]
    requirement.provide_user_input({"city": "Porto", "nights": 3})
    run = agent.continue_run(run_id=run.run_id, requirements=run.requirements)
    assert run.content == "Booked 3 nights in Porto."
    (answer,) = tool_results(wire.bodies[1])
    assert answer.startswith("User inputs retrieved: ")
    assert json.loads(answer.split(": ", 1)[1]) == [
        {"name": "city", "value": "Porto"},
        {"name": "nights", "value": 3},
    ]
    assert "get_user_input" in wire.bodies[0]["messages"][0]["content"]  # its instructions


# -- KnowledgeTools ---------------------------------------------------------------------------


def test_knowledge_tools_think_search_and_analyze(tmp_path, wire):
    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb
    from ferrule.tools.knowledge import KnowledgeTools

    kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"))
    kb.add_content(text_content="The bakery on Mill Lane opens at dawn.", name="bakery")
    kb.add_content(text_content="Ships dock at pier four after dusk.", name="harbour")
    wire.calls("think", thought="Find the opening hours.")
    wire.calls("search_knowledge", query="When does the bakery open?")
    wire.calls("analyze", analysis="It opens at dawn.")
    wire.says("At dawn.")
    tools = KnowledgeTools(knowledge=kb, add_few_shot=True)
    run = Agent(model=OpenAIChat(id="gpt-4o"), tools=[tools]).run("Bakery hours?")
    thought, found, analysis = (tool_results(b)[-1] for b in wire.bodies[1:4])
    assert thought == "Thoughts:\n- Find the opening hours."
    documents = json.loads(found)
    assert documents[0]["content"] == "The bakery on Mill Lane opens at dawn."
    assert analysis == "Analysis:\n- It opens at dawn."
    assert run.session_state["thoughts"] == ["Find the opening hours."]
    assert "<examples>" in wire.bodies[0]["messages"][0]["content"]
