"""`ferrule serve`'s agent-step API (execute-agent-step-api), what the Node client's agent
loop speaks: ``define_model`` routes a model id as `LocalModel` / `APIModel` do, and
``agent_step`` runs one stateless step, streaming deltas and then the assistant message
with the tool calls the client is to run. Against a real server on the test model."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from ferrule.agent import DEFAULT_STEP_INSTRUCTIONS
from ferrule.runtime import new_kernel
from ferrule.server import ServerThread
from ferrule_kernel import Kernel

pytestmark = pytest.mark.timeout(60)

TOKEN = "agent-step-token-0123456789abcdef"
ADD = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Kernel]]:
    kernel = new_kernel()
    with ServerThread(kernel, token=TOKEN) as url:
        yield url, kernel


def post(url: str, route: str, body: Any, token: str | None = TOKEN) -> tuple[int, str]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        f"{url}/ferrule/v1/{route}", data=json.dumps(body).encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def define_test_model(url: str, name: str, turns: list[dict[str, Any]] | None = None) -> None:
    options = {"turns": turns} if turns is not None else {}
    status, text = post(
        url, "define_model", {"name": name, "model": "test", "local": True, "options": options}
    )
    assert (status, json.loads(text)) == (
        200,
        {"output": {"component_type": "test_language_model"}},
    )


def test_a_step_returns_the_tool_calls_for_the_client_and_then_the_answer(server):
    url, kernel = server
    define_test_model(
        url,
        "step-tools",
        [
            {
                "tool_calls": [
                    {"name": "add", "arguments": {"a": 1, "b": 2}},
                    {"name": "add", "arguments": {"a": 3, "b": 4}},
                ]
            },
            {"text": "The sums are 3 and 7.", "reasoning": "adding up"},
        ],
    )
    question = {"role": "user", "content": "What are 1 + 2 and 3 + 4?"}
    status, text = post(
        url, "agent_step", {"name": "step-tools", "messages": [question], "tools": [ADD]}
    )
    assert status == 200
    *items, end = lines(text)
    assert end == {"end": True}
    step = items[-1]["item"]
    assert step["type"] == "step"
    assert step["finish_reason"] == "tool_calls"
    requests = step["tool_requests"]
    assert [(r["function"]["name"], r["function"]["arguments"]) for r in requests] == [
        ("add", {"a": 1, "b": 2}),
        ("add", {"a": 3, "b": 4}),
    ]
    assert step["message"]["tool_calls"] == requests
    # What the model saw: the step's default instructions first, then the question.
    seen = kernel.component("step-tools").requests[0]
    assert seen.messages[0].role == "system"
    assert seen.messages[0].text == DEFAULT_STEP_INSTRUCTIONS
    assert [t.function.name for t in seen.tools] == ["add"]

    # The client ran the tools; it sends the whole conversation back, stateless.
    results = [
        {"role": "tool", "content": str(value), "tool_call_id": call["id"]}
        for call, value in zip(requests, (3, 7), strict=True)
    ]
    messages = [question, step["message"], *results]
    status, text = post(
        url,
        "agent_step",
        {"name": "step-tools", "messages": messages, "tools": [ADD], "reasoning": True},
    )
    assert status == 200
    items = [line["item"] for line in lines(text)[:-1]]
    deltas = [(i["type"], i["content"]) for i in items[:-1]]
    assert "".join(c for t, c in deltas if t == "reasoning") == "adding up"
    assert deltas[0][0] == "reasoning"
    assert "".join(c for t, c in deltas if t == "output_text") == "The sums are 3 and 7."
    final = items[-1]
    assert final["tool_requests"] == []
    assert final["message"]["content"] == [{"type": "text", "text": "The sums are 3 and 7."}]
    assert final["message"]["reasoning"] == [{"type": "text", "text": "adding up"}]
    second = kernel.component("step-tools").requests[1]
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool", "tool"]


def test_a_system_message_replaces_the_default_instructions(server):
    url, kernel = server
    define_test_model(url, "step-system")
    messages = [
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": "Who are you?"},
    ]
    status, text = post(url, "agent_step", {"name": "step-system", "messages": messages})
    assert status == 200
    assert lines(text)[-2]["item"]["message"]["content"][0]["text"] == "Who are you?"
    seen = kernel.component("step-system").requests[0]
    assert [m.text for m in seen.messages] == ["Answer like a pirate.", "Who are you?"]


def test_a_model_failing_mid_step_ends_the_stream_with_its_typed_error(server):
    url, _ = server
    define_test_model(url, "step-fails", [{"text": "partial answer", "error": "the model broke"}])
    status, text = post(
        url, "agent_step", {"name": "step-fails", "messages": [{"role": "user", "content": "hi"}]}
    )
    assert status == 200
    *items, last = lines(text)
    assert "".join(i["item"]["content"] for i in items) == "partial answer"
    assert last["error"]["kind"] == "model_error"
    assert "the model broke" in last["error"]["message"]


@pytest.mark.parametrize(
    ("body", "status", "path"),
    [
        ({"name": "step-bad", "messages": []}, 422, "messages"),
        ({"name": "step-bad", "messages": "hi"}, 422, "messages"),
        (
            {"name": "step-bad", "messages": [{"role": "robot", "content": "hi"}]},
            422,
            "messages[0]",
        ),
        (
            {"name": "step-bad", "messages": [{"role": "user", "content": "a"}], "tools": {}},
            422,
            "$.tools",
        ),
        (
            {"name": "step-bad", "messages": [{"role": "user", "content": "a"}], "tools": [{}]},
            422,
            "$.tools[0].name",
        ),
        (
            {"name": "step-bad", "messages": [{"role": "user", "content": "a"}], "options": 3},
            422,
            "options",
        ),
        ({"name": "", "messages": [{"role": "user", "content": "a"}]}, 422, "name"),
        (
            {"name": "step-bad", "messages": [{"role": "user", "content": "a"}], "extra": 1},
            422,
            "$.extra",
        ),
        (
            {
                "name": "step-bad",
                "messages": [{"role": "user", "content": "a"}],
                "options": {"temperature": "hot"},
            },
            422,
            "$.temperature",
        ),
    ],
)
def test_bad_steps_get_a_typed_error_naming_the_field(server, body, status, path):
    url, _ = server
    if "step-bad" not in server[1].components():
        define_test_model(url, "step-bad")
    got, text = post(url, "agent_step", body)
    error = json.loads(text)["error"]
    assert got == status, error
    assert error["kind"] == "invalid_input"
    assert error["details"]["errors"][0]["path"] == path


def test_a_step_on_an_unknown_component_is_404(server):
    url, _ = server
    status, text = post(
        url, "agent_step", {"name": "nobody", "messages": [{"role": "user", "content": "hi"}]}
    )
    assert (status, json.loads(text)["error"]["kind"]) == (404, "unknown_component")


def test_the_token_is_required(server):
    url, _ = server
    body = {"name": "step-system", "messages": [{"role": "user", "content": "hi"}]}
    for route in ("agent_step", "define_model"):
        status, text = post(url, route, body, token=None)
        assert (status, json.loads(text)["error"]["kind"]) == (401, "unauthorized")


@pytest.mark.parametrize(
    ("body", "status", "kind", "field"),
    [
        ({"name": "m", "model": "no-such-model"}, 404, "unknown_model", None),
        ({"name": "m", "model": "x", "provider": "nobody"}, 404, "unknown_model", None),
        ({"name": "m", "local": "yes"}, 422, "invalid_input", "local"),
        ({"name": "m", "local": True, "options": []}, 422, "invalid_input", "options"),
        ({"model": "test", "local": True}, 422, "invalid_input", "name"),
        ({"name": "m", "model": 3}, 422, "invalid_input", "model"),
        (
            {"name": "m", "local": True, "model": "test", "options": {"turns": 3}},
            422,
            "invalid_input",
            None,
        ),
    ],
)
def test_bad_model_definitions_get_a_typed_error(server, body, status, kind, field):
    url, _ = server
    got, text = post(url, "define_model", body)
    error = json.loads(text)["error"]
    assert (got, error["kind"]) == (status, kind), error
    if field is not None:
        assert error["details"]["errors"][0]["path"] == field


def test_an_api_key_never_comes_back(server):
    url, _ = server
    key = "sk-node-client-secret-0123456789"
    status, text = post(
        url,
        "define_model",
        {"name": "api-model", "model": "gpt-4o", "api_key": key},
    )
    assert status == 200 and key not in text
    status, text = post(
        url, "define_model", {"name": "api-model", "model": "gpt-4o", "api_key": key}
    )
    assert status == 409 and key not in text
    # The provider is unreachable: the step fails with a typed error, scrubbed of the key.
    status, text = post(
        url, "agent_step", {"name": "api-model", "messages": [{"role": "user", "content": key}]}
    )
    assert key not in text
    error = lines(text)[-1]["error"] if status == 200 else json.loads(text)["error"]
    assert error["kind"].startswith("provider_") or error["kind"] == "model_error", error
