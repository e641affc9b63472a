"""Agno's guardrails on ferrule: ferrule-guardrails' classes under Agno's modules (and the
install line without the plugin, never loaded by ``import ferrule``), and
`OpenAIModerationGuardrail` asking OpenAI's moderation endpoint (the loopback `wire`)
before the model is asked."""

from __future__ import annotations

import importlib
import subprocess
import sys

import ferrule_guardrails
import pytest
from ferrule.agent import Agent, RunStatus
from ferrule.guardrails import (
    BaseGuardrail,
    OpenAIModerationGuardrail,
    PIIDetectionGuardrail,
    PromptInjectionGuardrail,
)
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError
from ferrule_kit.guardrails import CheckTrigger, InputCheckError
from ferrule_kit.testing.loopback import Reply


def moderation(flagged: bool, **categories: bool) -> Reply:
    return Reply.json(
        {
            "id": "modr-1",
            "model": "omni-moderation-latest",
            "results": [
                {
                    "flagged": flagged,
                    "categories": {"violence": False, "harassment": False, **categories},
                    "category_scores": {"violence": 0.9 if categories.get("violence") else 0.01},
                }
            ],
        }
    )


def test_the_plugins_guardrails_under_agnos_names():
    assert PIIDetectionGuardrail is ferrule_guardrails.PIIDetectionGuardrail
    assert PromptInjectionGuardrail is ferrule_guardrails.PromptInjectionGuardrail
    assert issubclass(PIIDetectionGuardrail, BaseGuardrail)
    guard = PIIDetectionGuardrail(enable_phone_check=False, custom_patterns={"Badge": r"B-\d{4}"})
    assert set(guard.pii_patterns) == {"Credit Card", "IBAN", "SSN", "Email", "Badge"}
    assert guard.pii_patterns["Badge"].search("badge B-1234")


def test_without_the_plugin_the_modules_name_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ferrule_guardrails", None)  # as if not installed
    for name in ("ferrule.guardrails.pii", "ferrule.guardrails.prompt_injection"):
        monkeypatch.delitem(sys.modules, name, raising=False)
        with pytest.raises(ImportError, match="pip install ferrule-guardrails"):
            importlib.import_module(name)
    monkeypatch.delitem(sys.modules, "ferrule.guardrails.pii", raising=False)


def test_import_ferrule_loads_no_guardrail():
    code = "import ferrule, sys; print(sorted(m for m in sys.modules if 'guardrail' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_flagged_input_stops_the_run_before_the_model(wire):
    wire.replies(moderation(True, violence=True))
    agent = Agent(model=OpenAIChat(id="gpt-4o"), pre_hooks=[OpenAIModerationGuardrail()])
    output = agent.run("a violent request")  # rejected with RunStatus.error, as Agno's
    assert output.status == RunStatus.error and isinstance(output.error, InputCheckError)
    assert output.content == output.error.message
    assert output.error.check_trigger is CheckTrigger.INPUT_NOT_ALLOWED
    assert output.error.additional_data["categories"]["violence"] is True
    (request,) = wire.requests
    assert request.path == "/v1/moderations"
    assert request.json == {"model": "omni-moderation-latest", "input": "a violent request"}
    assert request.headers["authorization"].startswith("Bearer sk-agno-compat")


def test_only_the_categories_asked_for_stop_the_run(wire):
    wire.replies(moderation(True, harassment=True))
    wire.says("Fine.")
    guard = OpenAIModerationGuardrail(raise_for_categories=["violence"])
    run = Agent(model=OpenAIChat(id="gpt-4o"), pre_hooks=[guard]).run("rude words")
    assert run.content == "Fine."
    with pytest.raises(InvalidInputError, match="no category colour"):
        OpenAIModerationGuardrail(raise_for_categories=["colour"])
