"""Agno's Agent arguments and run control, run as the cookbook runs them (`wire`, `program`:
conftest): agentic state, instructions / system message / tool factories taking the run's
context by name, tool flags, human-in-the-loop pauses, RetryAgentRun / StopAgentRun,
markdown and update_memory_on_run."""

from __future__ import annotations

import json
import sys


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def system_of(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def tool_names(body: dict) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_agentic_state(wire, program):
    wire.calls(
        "update_session_state", session_state_updates={"shopping_list": ["milk", "eggs", "bread"]}
    )
    wire.says("Added milk, eggs and bread.")
    scope = program("run_agentic_state")
    assert scope["agent"].get_session_state()["shopping_list"] == ["milk", "eggs", "bread"]
    assert "update_session_state" in tool_names(wire.bodies[0])
    assert "Updated session state" in tool_results(wire.bodies[1])[0]
    assert scope["run"].session_state["shopping_list"] == ["milk", "eggs", "bread"]


def test_instructions_function_takes_run_context(wire, program):
    wire.says("John found a door.")
    program("run_instructions_function")
    system = system_of(wire.last)
    assert "Make the story about john." in system
    assert "The session is story-session." in system


def test_instructions_function_takes_agent_and_state(wire, program):
    wire.says("See the tower.")
    program("run_instructions_agent_state")
    system = system_of(wire.last)
    assert "You are Tour Guide." in system
    assert "The user's city is Lisbon." in system


def test_system_message_function(wire, program):
    wire.says("I am an assistant.")
    program("run_system_message_function")
    assert system_of(wire.last) == "You answer ada in one sentence."


def test_tool_factory_resolved_per_run(wire, program):
    wire.calls("search_internal", query="holiday policy")
    wire.says("25 days.")
    scope = program("tools_factory")
    assert tool_names(wire.bodies[0]) == ["search_internal"]
    assert scope["calls"] == ["internal:holiday policy"]
    assert scope["run"].content == "25 days."


def test_tool_changes_state_through_run_context(wire, program):
    wire.calls("add_item", item="milk")
    wire.says("Milk added.")
    scope = program("tools_session_state")
    assert scope["agent"].get_session_state() == {"shopping_list": ["milk"]}
    # the injected parameter is not shown to the model
    parameters = wire.bodies[0]["tools"][0]["function"]["parameters"]
    assert set(parameters["properties"]) == {"item"}


def test_stop_after_tool_call(wire, program):
    wire.calls("get_answer", question="life")
    scope = program("tools_stop_after_tool_call")
    assert len(wire.requests) == 1  # the model is not asked again
    assert scope["run"].status == "completed"
    assert scope["run"].content == "The answer to 'life' is 42."


def test_retry_agent_run(wire, program):
    wire.calls("add_item", item="milk")
    wire.calls("add_item", item="bread")
    wire.says("Added milk and bread.")
    scope = program("tools_retry_agent_run")
    assert "Minimum 2 items" in tool_results(wire.bodies[1])[0]
    assert scope["agent"].get_session_state()["shopping_list"] == ["milk", "bread"]
    assert scope["run"].content == "Added milk and bread."


def test_stop_agent_run(wire, program):
    wire.calls("transfer_money", amount=5000)
    scope = program("tools_stop_agent_run")
    assert len(wire.requests) == 1
    assert scope["run"].status == "completed"
    assert scope["run"].content == "Transfers over 1000 need a human: the run stops here."


def test_retry_agent_run_adds_its_messages(wire, program):
    wire.calls("book_table", people=10)
    wire.calls_many(("book_table", {"people": 5}), ("book_table", {"people": 5}))
    wire.says("Booked two tables by the window.")
    scope = program("tools_retry_agent_run_messages")
    # the model's next turn sees the tool's result, then what the exception adds, in order
    retried = [(m["role"], m["content"]) for m in wire.bodies[1]["messages"]][-4:]
    assert retried == [
        ("tool", "Tables seat at most 8."),
        ("user", "Then split us over two tables."),
        ("assistant", "I will book two tables instead."),
        ("user", "Both near the window, please."),
    ]
    assert scope["run"].content == "Booked two tables by the window."
    # they stay in the run's conversation, after the tool message, once
    texts = [m.content for m in scope["run"].messages]
    assert texts.count("Then split us over two tables.") == 1
    assert (
        texts.index("Then split us over two tables.") == texts.index("Tables seat at most 8.") + 1
    )


def test_stop_agent_run_ends_with_its_messages(wire, program):
    wire.calls("transfer_money", amount=5000)
    scope = program("tools_stop_agent_run_messages")
    assert len(wire.requests) == 1  # the model is not asked again
    run = scope["run"]
    assert run.status == "completed"
    assert run.content == "Transfers over 1000 need a human."
    assert [(m.role, m.content) for m in run.messages[-2:]] == [
        ("tool", "Transfers over 1000 need a human."),
        ("assistant", "A colleague will call you to confirm the transfer."),
    ]


def test_confirmation_pauses_and_resumes(wire, program):
    wire.calls("delete_file", path="old.log")
    wire.says("old.log is deleted.")
    scope = program("hitl_confirmation")
    assert scope["paused"] is True
    assert scope["waiting"] == ["delete_file"]
    assert scope["deleted"] == ["old.log"]
    assert tool_results(wire.bodies[1]) == ["deleted old.log"]
    assert scope["run_response"].content == "old.log is deleted."


def test_external_execution_pauses_and_resumes(wire, program):
    wire.calls("execute_shell_command", command="python --version")
    wire.says("This is Python 3.")
    scope = program("hitl_external_execution")
    assert scope["paused"] is True
    assert tool_results(wire.bodies[1]) == [str(sys.version_info[0])]
    assert scope["run_response"].content == "This is Python 3."


def test_markdown_instruction(wire, program):
    wire.says("- apple\n- pear\n- fig")
    program("agent_markdown")
    assert "Use markdown to format your answers." in system_of(wire.last)


def test_update_memory_on_run(wire, program):
    wire.says("Nice to meet you, Ana.")
    wire.calls("add_memory", memory="The user's name is Ana and she likes hiking.")
    wire.says("Stored.")
    scope = program("memory_update_on_run")
    memories = [m.memory for m in scope["memories"]]
    assert memories == ["The user's name is Ana and she likes hiking."]
    assert json.dumps(wire.bodies[1]).count("add_memory") >= 1


def test_yield_run_output(wire, program):
    wire.says("Why did the chicken cross the road?")
    scope = program("run_yield_run_output")
    assert "".join(scope["pieces"]) == "Why did the chicken cross the road?"
    assert scope["run_output"].status == "completed"
    assert scope["run_output"].content == "Why did the chicken cross the road?"


def test_knowledge_retriever(wire, program):
    wire.calls("search_knowledge_base", query="pad thai")
    wire.says("Soak the rice noodles, then fry with tamarind.")
    scope = program("knowledge_custom_retriever")
    assert scope["asked"] == [("pad thai", 5, "recipes")]
    assert "tamarind, fish sauce" in tool_results(wire.bodies[1])[0]
    references = scope["run"].references
    assert references[0].query == "pad thai"
    assert references[0].references == [
        {"content": "Pad Thai: rice noodles, tamarind, fish sauce, peanuts."}
    ]


def test_memory_manager_on_its_own(wire, program):
    wire.calls_many(
        ("add_memory", {"memory": "The user's name is John Doe.", "topics": ["name"]}),
        ("add_memory", {"memory": "He hikes in the mountains on weekends.", "topics": ["hobbies"]}),
    )
    wire.says("done")
    scope = program("memory_standalone")
    assert scope["after_adding"] == ["The user's name is Jane Doe", "She likes to play tennis"]
    assert scope["after_deleting"] == ["The user's name is Jane Doe"]
    assert scope["after_replacing"] == ["The user's name is Jane Mary Doe"]
    assert scope["johns"] == [
        "The user's name is John Doe.",
        "He hikes in the mountains on weekends.",
    ]
    # the model saw what John said, and only John's (no) memories
    assert "I enjoy hiking in the mountains" in wire.text_sent(0)
    assert "Jane" not in wire.text_sent(0)


def test_json_mode(wire, program):
    wire.says(
        '{"setting": "Manhattan at night", "genre": "thriller", "characters": ["Ava", "Leo"]}'
    )
    scope = program("structured_json_mode")
    script = scope["json_mode_response"].content
    assert isinstance(script, scope["MovieScript"])
    assert script.characters == ["Ava", "Leo"]
    assert wire.last["response_format"] == {"type": "json_object"}
    system = system_of(wire.last)
    assert "<json_schema>" in system and '"characters"' in system
