"""Agno's data types as programs use them: `ferrule.models.message.Message` (and its view of
the engine's messages), `ModelResponse` / `ToolExecution`, the metrics' arithmetic, the
filter expressions, the exceptions' fields and classification, the media's base64."""

from __future__ import annotations

import base64

import pytest
from ferrule.exceptions import (
    AgnoError,
    ContextWindowExceededError,
    ModelProviderError,
    ModelRateLimitError,
    PathSecurityError,
    StopAgentRun,
)
from ferrule.filters import AND, CONTAINS, EQ, GT, IN, NOT, OR, from_dict
from ferrule.media import File, Image
from ferrule.metrics import MessageMetrics, ModelMetrics, RunMetrics, SessionMetrics
from ferrule.models.message import Message
from ferrule.models.response import ModelResponse, ToolExecution
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message as KitMessage
from ferrule_kit.content.messages import ToolCall


def test_message_reads_and_round_trips_as_agnos():
    message = Message(role="user", content="Hello", name="ada")
    assert message.get_content_string() == "Hello" and message.content_is_valid()
    data = message.to_dict()
    assert data["role"] == "user" and data["content"] == "Hello" and "created_at" in data
    back = Message.from_dict({**data, "unknown": 1})
    assert (back.role, back.content, back.id) == ("user", "Hello", message.id)
    blocks = Message(role="user", content=[{"type": "text", "text": "first"}, {"type": "x"}])
    assert blocks.get_content_string() == "first"
    assert Message(role="tool", content="r", compressed_content="c").get_content(True) == "c"


def test_message_is_a_view_of_the_engines_messages():
    kit = KitMessage(
        "assistant", "Let me look.", tool_calls=[ToolCall("c1", "search", {"q": "cats"})]
    )
    view = Message.from_kit(kit)
    assert view.role == "assistant" and view.content == "Let me look."
    assert view.tool_calls == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q": "cats"}'},
        }
    ]
    again = view.to_kit()
    assert again.text == "Let me look." and again.tool_calls == kit.tool_calls


def test_model_response_and_tool_execution_round_trip():
    execution = ToolExecution(tool_name="add", tool_args={"a": 1}, requires_confirmation=True)
    assert execution.is_paused
    assert ToolExecution.from_dict(execution.to_dict()) == execution
    response = ModelResponse(role="assistant", content="hi", tool_executions=[execution])
    response.response_usage = MessageMetrics(input_tokens=3, output_tokens=2, total_tokens=5)
    back = ModelResponse.from_dict(response.to_dict())
    assert back.content == "hi" and back.tool_executions == [execution]
    assert back.response_usage is not None and back.response_usage.total_tokens == 5


def test_metrics_add_up_and_merge_model_details():
    first = RunMetrics(input_tokens=10, output_tokens=5, total_tokens=15, duration=1.0)
    first.details = {"model": [ModelMetrics(id="gpt", provider="openai", input_tokens=10)]}
    second = RunMetrics(input_tokens=1, output_tokens=1, total_tokens=2, duration=0.5, cost=0.01)
    second.details = {"model": [ModelMetrics(id="gpt", provider="openai", input_tokens=1)]}
    total = sum([first, second])
    assert (total.input_tokens, total.total_tokens, total.duration, total.cost) == (
        11,
        17,
        1.5,
        0.01,
    )
    assert [m.input_tokens for m in total.details["model"]] == [11]
    assert "timer" not in total.to_dict() and "audio_input_tokens" not in total.to_dict()
    session = SessionMetrics()
    session.accumulate_from_run(total)
    assert session.total_tokens == 17 and session.details["model"][0].id == "gpt"
    assert RunMetrics.from_dict(total.to_dict()).details["model"][0].input_tokens == 11


def test_filters_read_agnos_dicts_and_become_the_stores_language():
    expression = AND(EQ("kind", "faq"), OR(GT("year", 2020), NOT(IN("tag", ["old"]))))
    assert from_dict(expression.to_dict()) == expression
    assert expression.to_filter() == {
        "$and": [
            {"kind": {"$eq": "faq"}},
            {"$or": [{"year": {"$gt": 2020}}, {"$not": {"tag": {"$in": ["old"]}}}]},
        ]
    }
    assert (EQ("a", 1) & EQ("b", 2)) == AND(EQ("a", 1), EQ("b", 2))
    assert (~EQ("a", 1)).to_dict() == {
        "op": "NOT",
        "condition": {"op": "EQ", "key": "a", "value": 1},
    }
    with pytest.raises(InvalidInputError, match="compares whole values"):
        CONTAINS("title", "guide")
    with pytest.raises(InvalidInputError, match="compares whole values"):
        from_dict({"op": "CONTAINS", "key": "title", "value": "guide"})
    with pytest.raises(InvalidInputError) as caught:
        from_dict({"op": "AND", "conditions": [{"op": "LIKE", "key": "a", "value": 1}]})
    assert caught.value.errors[0]["path"] == "filters.conditions[0].op"
    deep: dict = {"op": "EQ", "key": "a", "value": 1}
    for _ in range(12):
        deep = {"op": "NOT", "condition": deep}
    with pytest.raises(InvalidInputError, match="nested deeper"):
        from_dict(deep)


def test_model_errors_carry_agnos_fields_and_classify():
    error = ModelProviderError("the prompt is too long for this model", 400, "OpenAI", "gpt-4o")
    assert isinstance(error, AgnoError)
    assert (error.status_code, error.model_name, error.model_id) == (400, "OpenAI", "gpt-4o")
    assert isinstance(ModelProviderError.classify(error), ContextWindowExceededError)
    busy = ModelProviderError.classify(ModelProviderError("busy", 529))
    assert isinstance(busy, ModelRateLimitError) and busy.status_code == 529
    assert ModelRateLimitError("slow down").status_code == 429
    assert ModelProviderError("x").status_code == 502 and str(error) == error.message
    assert PathSecurityError().status_code == 400
    stop = StopAgentRun("enough")
    assert stop.stop_execution and stop.error_id == "stop_agent_run_error"


def test_media_round_trip_as_base64_and_refuse_urls_for_bytes(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    image = Image(content=png, format="png")
    assert image.id is not None and image.to_base64() == base64.b64encode(png).decode()
    back = Image.from_base64(image.to_base64(), format="png")
    assert back.get_content_bytes() == png
    assert Image.from_dict(image.to_dict()).content == png
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    assert File(filepath=path).get_content_bytes() == b"hello"
    assert File.from_base64("hello", mime_type="text/plain").content == b"hello"
    with pytest.raises(InvalidInputError, match="does not fetch"):
        Image(url="https://example.com/cat.png").get_content_bytes()
    with pytest.raises(InvalidInputError, match="not a document type"):
        File(content=b"x", mime_type="image/png")
