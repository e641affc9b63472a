"""Agno's storage, memories, events, pretty-printing, structured output and exceptions, run
as the cookbook runs them."""

from __future__ import annotations

import json

from ferrule_kit.testing.loopback import Reply


def test_in_memory_db_keeps_the_session_and_its_history(wire, program):
    wire.says("Lemon chicken with rice.", "Chicken.")
    scope = program("db_in_memory_agent")
    assert scope["second"].content == "Chicken."
    # the second run was sent the first exchange from the stored session
    second_request = wire.text_sent(1)
    assert "healthy dinner recipe" in second_request and "Lemon chicken" in second_request
    assert [m.content for m in scope["history"] if m.role == "assistant"] == [
        "Lemon chicken with rice.",
        "Chicken.",
    ]
    assert scope["session"].session_id == "dinner-planning"
    assert len(scope["session"].runs) == 2


def test_user_memories_are_stored_by_the_memory_manager(wire, program, capsys):
    wire.says("Nice to meet you, John! Mountains sound great.")
    wire.calls_many(
        ("add_memory", {"memory": "John Doe likes to hike in the mountains on weekends."}),
    )
    wire.says("done")
    scope = program("memory_user_memories")
    memories = scope["memories"]
    assert [m.memory for m in memories] == ["John Doe likes to hike in the mountains on weekends."]
    assert memories[0].user_id == "john_doe@example.com"
    assert "Mountains sound great" in capsys.readouterr().out
    # the memory manager's model call was shown what the user said
    assert "hike in the mountains" in wire.text_sent(1)


def test_stream_events_are_told_apart_by_run_event(wire, program):
    wire.calls("get_top_story")
    wire.says("Today: Ferrule runs Agno programs.")
    scope = program("run_stream_events")
    seen = scope["seen"]
    assert seen[0] == "RunStarted" and seen[-1] == "RunCompleted"
    assert seen.index("ToolCallStarted") < seen.index("ToolCallCompleted")
    assert "".join(scope["content"]) == "Today: Ferrule runs Agno programs."


def test_pprint_run_response_prints_a_run_and_a_stream(wire, program, capsys):
    wire.says("Ships sailed. Stars fell. Home.", "A cat found the moon.")
    program("utils_pprint")
    out = capsys.readouterr().out
    assert "Ships sailed. Stars fell. Home." in out
    assert "A cat found the moon." in out


def test_structured_output_is_parsed_into_the_schema(wire, program):
    script = {
        "setting": "New York, 1920s",
        "ending": "The detective finds the ledger.",
        "genre": "noir",
        "name": "Ledger",
        "characters": ["Vera", "Sam"],
    }
    wire.says(json.dumps(script))
    scope = program("structured_output_openai")
    assert scope["script"] == scope["MovieScript"](**script)
    sent = wire.last
    assert sent["response_format"]["type"] == "json_schema"
    assert set(sent["response_format"]["json_schema"]["schema"]["properties"]) == set(script)
    assert sent["temperature"] == 0.4


def test_a_providers_error_is_a_model_provider_error(wire, program):
    wire.replies(
        Reply.json(
            {"error": {"message": "the server is on fire", "type": "server_error"}}, status=500
        )
    )
    scope = program("exceptions_model_provider_error")
    assert scope["caught"] is not None
    assert "on fire" in str(scope["caught"])
