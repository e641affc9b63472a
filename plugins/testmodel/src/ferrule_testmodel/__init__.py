"""ferrule-testmodel: a deterministic language model for testing agents offline.

from ferrule import Agent, Runtime
from ferrule_testmodel import TestModel

with Runtime() as rt, Agent(rt, TestModel(["Hello!"])) as agent:
    for resp in agent.query("Hi"):
        agent.print(resp)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what `_LAZY` imports on first access, typed for checkers
    from .script import ScriptedToolCall, ScriptedTurn, TestModelAttributes
    from .testmodel import TestModel

__all__ = ["ScriptedToolCall", "ScriptedTurn", "TestModel", "TestModelAttributes"]

# Imported on first access: the plugin module (loaded at discovery) imports this package.
_LAZY = {
    "ScriptedToolCall": "ferrule_testmodel.script",
    "ScriptedTurn": "ferrule_testmodel.script",
    "TestModelAttributes": "ferrule_testmodel.script",
    "TestModel": "ferrule_testmodel.testmodel",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ferrule_testmodel' has no attribute {name!r}")
