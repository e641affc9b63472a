"""Agno's tools, toolkits and ReasoningTools, run as the cookbook runs them."""

from __future__ import annotations

import json


def test_custom_toolkit_runs_its_methods_and_leaves_out_the_excluded(wire, program):
    wire.calls("check_stock", item="lamp")
    wire.calls("reserve", item="lamp", quantity=2)
    wire.says("Reserved two lamps.")
    scope = program("tools_custom_toolkit")
    inventory = scope["inventory"]
    assert inventory.log == ["check lamp", "reserve 2 lamp"]
    assert inventory.stock == {"lamp": 3}  # the state changed
    offered = [t["function"]["name"] for t in wire.bodies[0]["tools"]]
    assert offered == ["check_stock", "reserve"]  # wipe_inventory excluded
    assert scope["run"].content == "Reserved two lamps."


def test_reasoning_tools_keep_the_steps_and_show_them_to_the_model(wire, program):
    wire.calls("think", title="Compare", thought="9.9 is 9.90, and 9.90 > 9.11", action="check")
    wire.calls(
        "analyze",
        title="Check",
        result="9.90 > 9.11",
        analysis="the comparison holds",
        next_action="final_answer",
        confidence=0.95,
    )
    wire.says("| number | bigger |\n|---|---|\n| 9.9 | yes |")
    scope = program("tools_reasoning_tools")
    run = scope["run"]
    offered = [t["function"]["name"] for t in wire.bodies[0]["tools"]]
    assert offered == ["think", "analyze"]
    system = wire.bodies[0]["messages"][0]
    assert system["role"] == "system"
    assert "<reasoning_instructions>" in system["content"]  # add_instructions=True
    assert "Use tables where possible" in system["content"]
    steps = run.session_state["reasoning_steps"][run.run_id]
    assert [s["title"] for s in steps] == ["Compare", "Check"]
    assert steps[1]["next_action"] == "final_answer"
    # the analyze call's result shows the whole chain, numbered
    shown = wire.bodies[2]["messages"][-1]["content"]
    assert "Step 1:" in shown and "Step 2:" in shown and "9.90 > 9.11" in shown


def test_tool_decorator_names_and_describes_the_tool(wire, program):
    wire.calls("roll_dice", count=2)
    wire.says("You rolled two dice.")
    scope = program("tools_decorator")
    assert len(scope["rolled"]) == 2
    (function,) = [t["function"] for t in wire.bodies[0]["tools"]]
    assert function["name"] == "roll_dice"
    assert function["description"].startswith("Roll a number of six-sided dice")
    assert json.loads(wire.bodies[1]["messages"][-1]["content"]) == scope["rolled"]
