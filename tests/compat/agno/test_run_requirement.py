"""Agno's ``agno.run.requirement`` on ferrule's paused runs (the scripted test model calls
tools that wait): each requirement's pause type and Agno's methods, and a `RunRequirement`
stored with ``to_dict``, read back with ``from_dict`` and handed to ``continue_run``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.models.response import ToolExecution
from ferrule.run.requirement import RunRequirement
from ferrule.tools import tool
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@tool(requires_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool(external_execution=True)
def send_email(to: str) -> str:
    """Send an email."""
    return "never run here"


@tool(requires_user_input=True, user_input_fields=["city"])
def book(city: str, nights: int) -> str:
    """Book a hotel."""
    return f"booked {nights} nights in {city}"


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def test_each_requirement_says_what_it_waits_for_and_resolves(rt):
    model = TestModel(
        [
            calls(
                ("delete_file", {"path": "a"}),
                ("send_email", {"to": "bo@example.com"}),
                ("book", {"city": "?", "nights": 2}),
            ),
            "All done.",
        ]
    )
    with Agent(rt, model, tools=[delete_file, send_email, book]) as agent:
        paused = agent.run("Do it all")
        confirm, external, user_input = paused.requirements
        assert [r.pause_type for r in paused.requirements] == [
            "confirmation",
            "external_execution",
            "user_input",
        ]
        assert not any(r.is_resolved() or r.needs_user_feedback for r in paused.requirements)
        assert not external.external_execution_silent
        with pytest.raises(InvalidInputError, match="not for user feedback"):
            confirm.provide_user_feedback({"Which?": ["a"]})
        confirm.reject(note="keep it")
        external.set_external_execution_result("sent")
        user_input.provide_user_input({"city": "Oslo"})
        user_input.settle_user_input()
        assert all(r.is_resolved() for r in paused.requirements)
        assert confirm.reason == "keep it"
        done = agent.continue_run(paused.run_id, paused.requirements)
    assert done.content == "All done."


def test_a_stored_requirement_is_read_back_and_continues_the_run(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "r.db")
    model = TestModel([calls(("delete_file", {"path": "b"})), "Deleted."])
    with Agent(rt, model, db=db, tools=[delete_file]) as agent:
        paused = agent.run("Delete b")
        (waiting,) = paused.requirements
        execution = ToolExecution(
            tool_call_id=waiting.tool_call.id,
            tool_name="delete_file",
            tool_args={"path": "b"},
            requires_confirmation=True,
        )
        requirement = RunRequirement(tool_execution=execution, id="req-1")
        assert (requirement.pause_type, requirement.needs_confirmation) == ("confirmation", True)
        requirement.confirm()
        stored = json.loads(json.dumps(requirement.to_dict()))
        assert stored["id"] == "req-1" and stored["confirmation"] is True
        assert stored["tool_execution"]["tool_name"] == "delete_file"
        again = RunRequirement.from_dict(stored)
        assert (again.id, again.confirmation, again.is_resolved()) == ("req-1", True, True)
        assert again.created_at == requirement.created_at
        done = agent.continue_run(paused.run_id, [again])
    assert done.content == "Deleted."


def test_a_requirement_without_its_call_is_refused():
    with pytest.raises(InvalidInputError) as raised:
        RunRequirement.from_dict({"id": "x", "confirmation": True})
    assert raised.value.details["errors"][0]["path"] == "tool_execution"
