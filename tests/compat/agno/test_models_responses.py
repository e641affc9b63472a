"""`OpenAIResponses` programs (Agno's most used model class) on a loopback server speaking
OpenAI's Responses wire (`wire` and `program`: conftest; the replies from
`ferrule_openai.testing`), each checked for its outcome: what the model was sent (input
items, tools, text.format, reasoning) and what the program got back."""

from __future__ import annotations

import json

import pytest
from ferrule.models.openai import OpenAIResponses
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ProviderUnavailableError
from ferrule_kit.testing.loopback import Reply, sse
from ferrule_openai.testing import ResponsesCall, ResponsesReasoning, responses_reply


def says(wire, *texts: str) -> None:
    wire.replies(*(responses_reply(text) for text in texts))


def test_responses_basic(wire, program):
    says(wire, "The lights went out. Something breathed in the dark.")
    scope = program("responses_basic")
    assert scope["run"].content == "The lights went out. Something breathed in the dark."
    [request] = wire.requests
    assert request.path == "/v1/responses"
    assert request.json["model"] == "gpt-4o" and request.json["stream"] is True
    assert request.json["input"][-1]["content"] == [
        {"type": "input_text", "text": "Share a 2 sentence horror story"}
    ]


def test_responses_basic_stream(wire, program):
    wire.replies(responses_reply(["The mirror ", "blinked ", "first."]))
    scope = program("responses_basic_stream")
    assert "".join(scope["chunks"]) == "The mirror blinked first."
    assert len(scope["chunks"]) >= 2  # streamed, not one piece


def test_responses_async(wire, program):
    says(wire, "It whispered my name from inside the walls.")
    scope = program("responses_async")
    assert scope["run"].content == "It whispered my name from inside the walls."
    assert wire.requests[0].path == "/v1/responses"


def test_responses_print_response(wire, program, capsys):
    wire.replies(
        responses_reply("The first story, told plainly."),
        responses_reply(["The second ", "story, streamed."]),
    )
    program("responses_print_response")
    out = capsys.readouterr().out
    assert "The first story, told plainly." in out
    assert "story, streamed." in out
    assert len(wire.requests) == 2


def test_responses_tool_use(wire, program):
    """function_call -> the tool runs -> function_call_output in the next request."""
    wire.replies(
        responses_reply(calls=[ResponsesCall("get_weather", {"city": "Paris"}, "call_w1")]),
        responses_reply("It is 21 degrees and sunny in Paris."),
    )
    scope = program("responses_tool_use")
    assert scope["calls"] == ["Paris"]
    assert scope["run"].content == "It is 21 degrees and sunny in Paris."
    first, second = wire.bodies
    [tool] = first["tools"]
    assert tool["type"] == "function" and tool["name"] == "get_weather"
    assert tool["parameters"]["properties"]["city"]["type"] == "string"
    call, output = second["input"][-2:]
    assert call == {
        "type": "function_call",
        "call_id": "call_w1",
        "name": "get_weather",
        "arguments": json.dumps({"city": "Paris"}),
    }
    assert output["type"] == "function_call_output" and output["call_id"] == "call_w1"
    assert "21 degrees and sunny in Paris" in output["output"]


def test_responses_tool_use_stream(wire, program):
    wire.replies(
        responses_reply(calls=[ResponsesCall("add", {"a": 17, "b": 25})]),
        responses_reply(["17 + 25 ", "= 42"]),
    )
    scope = program("responses_tool_use_stream")
    assert scope["started"] == ["add"]
    assert [str(r) for r in scope["completed"]] == ["42"]
    assert "".join(scope["content"]) == "17 + 25 = 42"
    assert wire.bodies[1]["input"][-1]["output"] == "42"


def test_responses_structured_output(wire, program):
    movie = {
        "setting": "Manhattan at night",
        "genre": "thriller",
        "name": "Last Train",
        "characters": ["Ada", "Ben"],
    }
    says(wire, json.dumps(movie))
    scope = program("responses_structured_output")
    content = scope["response"].content
    assert isinstance(content, scope["MovieScript"])
    assert content.model_dump() == movie
    fmt = wire.last["text"]["format"]
    assert fmt["type"] == "json_schema"
    assert set(fmt["schema"]["properties"]) == set(movie)
    assert "You write movie scripts." in wire.last["instructions"]


def test_responses_structured_output_guided(wire, program):
    says(wire, '{"name": "Tokyo", "country": "Japan"}')
    scope = program("responses_structured_output_guided")
    assert scope["response"].content.name == "Tokyo"
    fmt = wire.last["text"]["format"]
    assert fmt["type"] == "json_schema" and "strict" not in fmt


def test_responses_structured_output_with_tools(wire, program):
    wire.replies(
        responses_reply(calls=[ResponsesCall("get_stock_price", {"symbol": "NVDA"})]),
        responses_reply('{"symbol": "NVDA", "price": 181.5, "verdict": "hold"}'),
    )
    scope = program("responses_structured_output_with_tools")
    report = scope["report"]
    assert (report.symbol, report.price, report.verdict) == ("NVDA", 181.5, "hold")
    assert wire.bodies[1]["input"][-1]["output"] == "181.5"
    assert wire.bodies[1]["text"]["format"]["type"] == "json_schema"


def test_responses_reasoning(wire, program):
    wire.replies(
        responses_reply(
            "No: 9.9 is bigger.",
            reasoning=[ResponsesReasoning("Compare 0.11 with 0.90.", "gAAAA-enc-1")],
        )
    )
    scope = program("responses_reasoning")
    assert "".join(scope["reasoning"]) == "Compare 0.11 with 0.90."
    assert "".join(scope["content"]) == "No: 9.9 is bigger."
    body = wire.last
    assert body["model"] == "o4-mini"
    assert body["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False


def test_responses_tool_use_o3(wire, program):
    """The reasoning item of the turn that called the tool goes back, encrypted content and
    id unchanged, before the call and its output."""
    wire.replies(
        responses_reply(
            calls=[ResponsesCall("get_population", {"country": "Germany"}, "call_p")],
            reasoning=[ResponsesReasoning("Look it up.", "gAAAA-enc-o3", "rs_o3")],
        ),
        responses_reply("About 83 million people."),
    )
    scope = program("responses_tool_use_o3")
    assert scope["looked_up"] == ["Germany"]
    assert scope["run"].content == "About 83 million people."
    first, second = wire.bodies
    assert "temperature" not in first and first["include"] == ["reasoning.encrypted_content"]
    assert second["input"][-3:-1] == [
        {
            "type": "reasoning",
            "id": "rs_o3",
            "summary": [{"type": "summary_text", "text": "Look it up."}],
            "encrypted_content": "gAAAA-enc-o3",
        },
        {
            "type": "function_call",
            "call_id": "call_p",
            "name": "get_population",
            "arguments": json.dumps({"country": "Germany"}),
        },
    ]


def test_responses_zdr_reasoning_agent(wire, program):
    wire.replies(
        responses_reply("Russia.", reasoning=[ResponsesReasoning("Area.", "enc-1", "rs_1")]),
        responses_reply(
            "About 144 million.", reasoning=[ResponsesReasoning("Pop.", "enc-2", "rs_2")]
        ),
        responses_reply("About 8.4 per km2."),
    )
    scope = program("responses_zdr_reasoning_agent")
    assert scope["answers"] == ["Russia.", "About 144 million.", "About 8.4 per km2."]
    bodies = wire.bodies
    assert all(b["store"] is False for b in bodies)
    assert bodies[0]["reasoning"] == {"summary": "auto"}
    assert "Zero Data Retention" in bodies[0]["instructions"]
    third = bodies[2]["input"]
    reasoning = [item for item in third if item["type"] == "reasoning"]
    assert [(r["id"], r["encrypted_content"]) for r in reasoning] == [
        ("rs_1", "enc-1"),
        ("rs_2", "enc-2"),
    ]
    texts = json.dumps(third)
    assert "largest country in Europe" in texts and "Russia." in texts


def test_responses_db_history(wire, program):
    says(wire, "About 40 million.", "O Canada.")
    scope = program("responses_db_history")
    assert scope["second"].content == "O Canada."
    second = wire.bodies[1]["input"]
    assert second[0]["content"][0]["text"] == "How many people live in Canada?"
    assert second[1] == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "About 40 million."}],
    }
    assert second[-1]["content"][0]["text"] == "What is their national anthem called?"


def test_responses_instructions(wire, program):
    says(wire, "He kept the light on for ships that never came.")
    program("responses_instructions")
    instructions = wire.last["instructions"]
    assert "famous short story writer" in instructions
    assert "exactly one sentence" in instructions and "'very'" in instructions
    assert [item["role"] for item in wire.last["input"]] == ["user"]


def test_responses_model_params(wire, program):
    wire.replies(responses_reply("Nile, Amazon, Danube.", usage=(20, 9, 0)))
    scope = program("responses_model_params")
    body = wire.last
    assert (body["temperature"], body["top_p"], body["max_output_tokens"]) == (0.3, 0.8, 256)
    assert body["parallel_tool_calls"] is False
    assert body["metadata"] == {"team": "docs"} and body["user"] == "user-42"
    metrics = scope["run"].metrics
    assert (metrics.input_tokens, metrics.output_tokens) == (20, 9)


def test_responses_verbosity_control(wire, program):
    says(wire, "Waves upon waves.")
    scope = program("responses_verbosity_control")
    assert scope["run"].content == "Waves upon waves."
    assert wire.last["text"] == {"verbosity": "high"}
    assert wire.last["model"] == "gpt-5" and "temperature" not in wire.last


def test_responses_agent_flex_tier(wire, program):
    says(wire, "The house was quiet. Too quiet.")
    scope = program("responses_agent_flex_tier")
    assert scope["run"].content == "The house was quiet. Too quiet."
    assert wire.last["service_tier"] == "flex"


def test_responses_failed_run(wire, program):
    failed = {
        "type": "response.failed",
        "response": {
            "id": "resp_f",
            "status": "failed",
            "error": {"code": "server_error", "message": "The model crashed."},
        },
    }
    wire.replies(
        Reply.sse([sse({"type": "response.created", "response": {}}), sse(failed)]),
        responses_reply("Why did the function return? It had no arguments left."),
    )
    scope = program("responses_failed_run")
    error = scope["error"]
    assert isinstance(error, ProviderUnavailableError)
    assert "The model crashed." in str(error)
    assert scope["recovered"].content.startswith("Why did the function return?")


def test_openai_responses_checks_its_keywords():
    with pytest.raises(TypeError, match="stop"):
        OpenAIResponses(id="gpt-4o", stop=["\n"])  # the Responses API has no stop sequences
    with pytest.raises(InvalidInputError) as info:
        OpenAIResponses(id="o3", reasoning={"effort": "high", "budget": 3})
    assert info.value.errors[0]["path"] == "reasoning.budget"
    with pytest.raises(InvalidInputError) as info:
        OpenAIResponses(id="o3", reasoning_summary="long")
    assert info.value.errors[0]["path"] == "reasoning_summary"
    with pytest.raises(InvalidInputError):
        OpenAIResponses(id="gpt-4o", temperature=3.0)
    model = OpenAIResponses(
        id="o3", reasoning={"effort": "low", "summary": "concise"}, api_key="sk-hidden-1"
    )
    assert model.route_provider == "openai-responses"
    assert model.infer_options == {"reasoning": "low"}
    assert model.options == {"reasoning_summary": "concise", "strict_output": True}
    assert "sk-hidden-1" not in repr(model)


def test_responses_image_agent(wire, program):
    says(wire, "The Golden Gate Bridge in fog.")
    scope = program("responses_image_agent")
    assert scope["run"].content == "The Golden Gate Bridge in fog."
    assert wire.last["input"][-1]["content"] == [
        {"type": "input_text", "text": "Tell me about this image."},
        {"type": "input_image", "image_url": "https://example.com/GoldenGateBridge-001.jpg"},
    ]
