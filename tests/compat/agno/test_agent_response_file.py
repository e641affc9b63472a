"""Agno's ``save_response_to_file`` and ``Agent.save_run_response_to_file`` with the test
model: each completed run's content written to the file the template names (text as is,
structured content as JSON), the values filled in unable to leave the directory, and a
file that cannot be written only logged."""

from __future__ import annotations

import json

import attrs
import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def test_each_completed_run_is_written_where_the_template_says(rt, tmp_path):
    template = str(tmp_path / "out" / "{name}-{session_id}-{user_id}-{message}.md")
    with Agent(
        rt,
        TestModel(["The ferry leaves at nine."]),
        name="guide",
        session_id="s1",
        user_id="ann",
        save_response_to_file=template,
    ) as agent:
        agent.run("When")
    written = tmp_path / "out" / "guide-s1-ann-When.md"
    assert written.read_text(encoding="utf-8") == "The ferry leaves at nine."


def test_an_input_cannot_name_another_directory(rt, tmp_path):
    template = str(tmp_path / "{message}.txt")
    with Agent(rt, TestModel(["ok"]), save_response_to_file=template) as agent:
        agent.run("../../etc/x")
    (written,) = tmp_path.iterdir()
    assert written.parent == tmp_path and "/" not in written.name
    assert written.read_text(encoding="utf-8") == "ok"


@attrs.define
class Sailing:
    port: str
    hour: int


def test_structured_content_is_written_as_json_and_the_method_by_hand(rt, tmp_path):
    template = str(tmp_path / "{run_id}.json")
    with Agent(
        rt,
        TestModel(['{"port": "Esk", "hour": 9}']),
        output_schema=Sailing,
        save_response_to_file=template,
    ) as agent:
        output = agent.run("Next sailing")
        assert json.loads((tmp_path / f"{output.run_id}.json").read_text()) == {
            "port": "Esk",
            "hour": 9,
        }
        (tmp_path / f"{output.run_id}.json").unlink()
        agent.save_run_response_to_file(output, input="again")
    assert (tmp_path / f"{output.run_id}.json").exists()


def test_a_file_that_cannot_be_written_leaves_the_run_alone(rt, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a directory")
    template = str(blocker / "{run_id}.txt")
    with Agent(rt, TestModel(["still fine"]), save_response_to_file=template) as agent:
        assert agent.run("Hi").content == "still fine"


def test_the_template_must_be_text(rt):
    with pytest.raises(InvalidInputError) as caught:
        Agent(rt, TestModel(["x"]), save_response_to_file=42)
    assert caught.value.errors[0]["path"] == "save_response_to_file"
