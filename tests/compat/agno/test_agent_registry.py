"""Agno's component registry on `Agent` (``save``, ``Agent.load(id, db=...)``,
``delete(db=..., hard_delete=...)``) is refused with the ferrule way (`to_dict` /
`from_dict`), while ferrule's own ``agent.load()`` / ``agent.delete()`` keep working: which
``load`` is meant follows from how it is reached (the class or an agent), never from its
arguments."""

from __future__ import annotations

import pytest
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule_kernel import InvalidInputError
from ferrule_testmodel import TestModel


def test_the_class_load_is_agnos_registry_load_and_is_refused_naming_from_dict(tmp_path):
    db = SqliteDb(db_file=str(tmp_path / "agents.db"))
    with pytest.raises(InvalidInputError, match=r"Agent\.from_dict") as refused:
        Agent.load("weather-desk", db=db, version=2)
    assert refused.value.errors[0]["path"] == "id"


def test_an_agents_load_defines_its_model_and_its_runs_still_answer():
    with Agent(model=TestModel(["ready"])) as agent:
        assert agent.load() is None
        assert agent.run("hi").content == "ready"


@pytest.mark.parametrize(
    ("arguments", "field"), [({"db": "a db"}, "db"), ({"hard_delete": True}, "hard_delete")]
)
def test_delete_asking_for_the_registry_is_refused_and_frees_nothing(arguments, field):
    agent = Agent(model=TestModel(["still here"]))
    with pytest.raises(InvalidInputError, match="to_dict") as refused:
        agent.delete(**arguments)
    assert refused.value.errors[0]["path"] == field
    assert agent.run("hi").content == "still here"  # the refusal left the agent whole
    agent.delete()


def test_save_is_refused_and_the_configuration_round_trips_through_to_dict(tmp_path):
    agent = Agent(model=TestModel(["x"]), name="Weather Desk", markdown=True)
    with pytest.raises(InvalidInputError, match="no component registry") as refused:
        agent.save(db=SqliteDb(db_file=str(tmp_path / "agents.db")), label="v1")
    assert refused.value.errors[0]["path"] == "db"
    rebuilt = Agent.from_dict(agent.to_dict())
    assert (rebuilt.name, rebuilt.markdown) == ("Weather Desk", True)
