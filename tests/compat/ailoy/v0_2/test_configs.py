"""Ailoy 0.2 `test_configs.py`: `LangModelInferConfig`, `KnowledgeConfig` and `AgentConfig`
built from dicts hold what the dicts say (Qwen3's document polyfill as its templates), and
what they hold reaches a model's ``infer`` inputs; bad settings are refused naming them."""

from __future__ import annotations

import ferrule as ai
import pytest
from ferrule_kernel import InvalidInputError

QWEN3_SYSTEM = (
    "{{- text }}\n# Knowledges\nAfter the user's question, a list of documents retrieved from "
    "the knowledge base may appear. Try to answer the user\u2019s question based on the "
    "provided knowledges."
)
QWEN3_QUERY = (
    '{{- text }}\n{%- if documents %}\n    {{- "<documents>\\n" }}\n    {%- for doc in documents %}'
    '\n    {{- "<document>\\n" }}\n        {{- doc.text + \'\\n\' }}\n    {{- "</document>\\n" }}'
    '\n    {%- endfor %}\n    {{- "</documents>\\n" }}\n{%- endif %}'
)


def check_inference(config: ai.LangModelInferConfig | None, data: dict) -> None:
    for key, value in data.items():
        assert config is not None
        if key == "document_polyfill" and value == "Qwen3":
            assert config.document_polyfill is not None
            assert config.document_polyfill.system_message_template == QWEN3_SYSTEM
            assert config.document_polyfill.query_message_template == QWEN3_QUERY
        else:
            assert getattr(config, key) == value


INFERENCE = [
    {},
    {"temperature": 0.0},
    {"temperature": 0.0, "top_p": 0.0},
    {"max_tokens": 16384},
    {"document_polyfill": "Qwen3"},
    {"document_polyfill": "Qwen3", "think_effort": "enable"},
    {
        "document_polyfill": "Qwen3",
        "think_effort": "enable",
        "temperature": 0.6,
        "top_p": 0.9,
        "max_tokens": 16384,
    },
]


@pytest.mark.parametrize("data", INFERENCE)
def test_inference_config(data: dict) -> None:
    config = ai.LangModelInferConfig.from_dict(data)
    check_inference(config, data)
    # what a model is asked for: each setting given, nothing else
    options = config.infer_options()
    expected = {k: v for k, v in data.items() if k in ("temperature", "top_p", "max_tokens")}
    if "think_effort" in data:
        expected["reasoning"] = True
    assert options == expected


def test_inference_config_polyfill_renders_documents() -> None:
    from ferrule.agent.langmodel import polyfill_documents

    polyfill = ai.LangModelInferConfig.from_dict({"document_polyfill": "Qwen3"}).document_polyfill
    assert polyfill is not None
    messages = [ai.Message("system", "Be brief."), ai.Message("user", "What is Ailoy?")]
    out = polyfill_documents(messages, [{"text": "Ailoy is a framework."}], polyfill)
    assert out[0].text.startswith("Be brief.\n# Knowledges\n")
    assert out[1].text == (
        "What is Ailoy?<documents>\n<document>\nAiloy is a framework.\n</document>\n</documents>\n"
    )


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"think_effort": "maybe"}, "think_effort"),
        ({"temperature": 3.0}, "temperature"),
        ({"top_p": "high"}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"document_polyfill": "Llama"}, "document_polyfill"),
        ({"temperture": 0.1}, "temperture"),
    ],
)
def test_inference_config_refuses_bad_settings(data: dict, field: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        ai.LangModelInferConfig.from_dict(data)
    assert field in str(caught.value.to_dict())


@pytest.mark.parametrize("data", [{}, {"top_k": 3}])
def test_knowledge_config(data: dict) -> None:
    config = ai.KnowledgeConfig.from_dict(data)
    assert config.top_k == data.get("top_k")
    with pytest.raises(InvalidInputError, match="at least 1"):
        config.top_k = 0  # checked when set, too


AGENT = [
    {},
    {"inference": {}},
    {"knowledge": {"top_k": 3}},
    {"inference": {}, "knowledge": {}},
    {"inference": {"document_polyfill": "Qwen3"}, "knowledge": {"top_k": 3}},
]


@pytest.mark.parametrize("data", AGENT)
def test_agent_config(data: dict) -> None:
    config = ai.AgentConfig.from_dict(data)
    check_inference(config.inference, data.get("inference", {}))
    for key, value in data.get("knowledge", {}).items():
        assert config.knowledge is not None and getattr(config.knowledge, key) == value
    assert (config.inference is None) == ("inference" not in data)
    assert (config.knowledge is None) == ("knowledge" not in data)
