"""Every module of the agent package has its place in the package's import order (the
``agent-package-order`` contract of ``.importlinter``, which tests/test_layers.py runs):
a new module must be placed there, so that it cannot import back up unchecked."""

from __future__ import annotations

import configparser
from pathlib import Path

import ferrule.agent

CONFIG = Path(__file__).resolve().parents[3] / ".importlinter"


def test_every_agent_module_is_in_the_import_order() -> None:
    config = configparser.ConfigParser()
    config.read(CONFIG)
    contract = config["importlinter:contract:agent-package-order"]
    assert contract["containers"].split() == ["ferrule.agent"]
    placed = {
        name.strip()
        for layer in contract["layers"].split("\n")
        for name in layer.replace(":", "|").split("|")
        if name.strip()
    }
    package = Path(ferrule.agent.__file__).parent
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    assert modules  # the glob found the package
    assert placed == modules


def test_agent_is_composed_not_mixed_in() -> None:
    """`Agent`'s one base with behaviour is the typed run calls (`RunCalls`, abstract: it
    declares the two things it needs), beside `AgentAttributes`, which only declares the
    options as attributes; everything else is a collaborator it holds."""
    from ferrule.agent.agent import Agent
    from ferrule.agent.attributes import AgentAttributes
    from ferrule.agent.run_calls import RunCalls

    assert [base for base in Agent.__mro__ if base.__module__.startswith("ferrule.")] == [
        Agent,
        RunCalls,
        AgentAttributes,
    ]
    assert RunCalls.__abstractmethods__ == frozenset({"_agent_runs", "_run_style"})
    declared = {name for name in vars(AgentAttributes) if not name.startswith("__")}
    assert declared == set(), f"AgentAttributes only annotates: {declared}"
