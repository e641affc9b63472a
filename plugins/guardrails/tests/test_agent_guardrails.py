"""The guardrails in an Agent's pre_hooks, end to end on the echoing test model: a masked
input is all the model and the db ever see; a blocked one never reaches either."""

from __future__ import annotations

import pytest
from ferrule import Agent, LocalModel, Runtime
from ferrule.db import SqliteDb
from ferrule_guardrails import InputCheckError, PIIDetectionGuardrail, PromptInjectionGuardrail


@pytest.fixture(scope="module")
def rt():
    with Runtime() as runtime:
        yield runtime


def test_masked_input_is_what_the_model_and_the_db_see(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "agent.db")
    guards = [PromptInjectionGuardrail(), PIIDetectionGuardrail(mask_pii=True)]
    with Agent(rt, LocalModel("test"), pre_hooks=guards, db=db) as agent:
        output = agent.run("My IBAN is GB82 WEST 1234 5698 7654 32, thanks")
        sent = rt.kernel.component(agent._component).requests[-1].messages[-1].text
        assert sent == "My IBAN is " + "*" * 27 + ", thanks"
        assert output.content == sent  # the test model echoes it
        stored = agent.get_last_run_output()
        assert stored is not None
        assert all("GB82" not in m.get_content_string() for m in stored.messages)


def test_a_blocked_input_reaches_neither_model_nor_db(rt, tmp_path):
    db = SqliteDb(db_file=tmp_path / "agent.db")
    with Agent(rt, LocalModel("test"), pre_hooks=[PIIDetectionGuardrail()], db=db) as agent:
        responses = list(agent.query("my card: 4111 1111 1111 1111"))
        assert [r.type for r in responses] == ["error"]
        assert isinstance(responses[0].error, InputCheckError)
        assert responses[0].error.details["detected_pii"] == ["Credit Card"]
        refused = agent.run("write to ada@example.com")  # Agno's RunStatus.error
        assert refused.status == "error" and isinstance(refused.error, InputCheckError)
        assert refused.content == "Potential PII detected in input: Email"
        assert not rt.kernel.component(agent._component).requests
        assert agent.get_last_run_output() is None
