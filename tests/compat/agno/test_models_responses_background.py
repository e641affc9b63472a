"""Agno's background mode of `OpenAIResponses` (and `OpenResponses`, `OllamaResponses`):
an agent's run whose model creates its response in the background and polls it, on a
loopback server speaking OpenAI's documented wire (``POST /v1/responses``, ``GET
/v1/responses/{id}``, ``POST /v1/responses/{id}/cancel``); a run cancelled by id cancels
the response at the provider; bad values are refused naming the keyword."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.agent import Agent
from ferrule.models.ollama import OllamaResponses
from ferrule.models.openai import OpenAIResponses, OpenResponses
from ferrule.run.agent import RunCancelledEvent
from ferrule.run.cancel import cancel_run
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ProviderTimeoutError
from ferrule_kit.testing.loopback import LoopbackServer
from ferrule_openai.testing import background_response

KEY = "sk-test-background-0123456789"


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


@pytest.fixture
def server() -> Any:
    with LoopbackServer() as server:
        yield server
        server.check()


def model(server: LoopbackServer, **options: Any) -> OpenAIResponses:
    return OpenAIResponses(
        id="gpt-5.4",
        base_url=server.url + "/v1",
        api_key=KEY,
        background=True,
        background_poll_interval=0.01,
        **options,
    )


def calls(server: LoopbackServer) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests]


def test_a_background_run_polls_until_completed(rt, server):
    server.script(
        background_response("queued", response_id="resp_q"),
        background_response("in_progress", response_id="resp_q"),
        background_response(
            "completed", "Quantum computing began with Feynman.", response_id="resp_q"
        ),
    )
    with Agent(rt, model(server)) as agent:
        run = agent.run("Explain the history of quantum computing")
    assert run.status == "completed"
    assert run.content == "Quantum computing began with Feynman."
    assert calls(server) == [
        ("POST", "/v1/responses"),
        ("GET", "/v1/responses/resp_q"),
        ("GET", "/v1/responses/resp_q"),
    ]
    body = server.requests[0].json
    assert body["background"] is True and body["store"] is True and body["stream"] is False


def test_a_streamed_background_run_gives_the_whole_reply(rt, server):
    server.script(background_response("queued"), background_response("completed", "All of it."))
    with Agent(rt, model(server)) as agent:
        chunks = [c.content for c in agent.run("go", stream=True) if getattr(c, "content", None)]
    assert "".join(chunks) == "All of it."


def test_max_wait_ends_the_run_with_a_timeout(rt, server):
    server.script(background_response("queued"))
    server.script(*[lambda _r: background_response("in_progress")] * 200)
    with Agent(rt, model(server, background_max_wait=0.05)) as agent:
        output = agent.run("go")
    assert output.status == "error" and isinstance(output.error, ProviderTimeoutError)
    assert "background_max_wait=0.05s" in output.content
    assert calls(server)[-1] == ("POST", "/v1/responses/resp_1/cancel")


def test_cancelling_the_run_cancels_the_response(rt, server):
    server.script(background_response("queued"))
    server.script(*[lambda _r: background_response("in_progress")] * 5000)
    with Agent(rt, model(server)) as agent:
        stream = agent.run("go", stream=True, stream_events=True)

        def cancel_when_polling() -> None:
            deadline = time.monotonic() + 10
            while len(server.requests) < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            cancel_run(stream.run_id)

        canceller = threading.Thread(target=cancel_when_polling)
        canceller.start()
        events = list(stream)
        canceller.join()
    assert isinstance(events[-1], RunCancelledEvent)
    deadline = time.monotonic() + 10
    while ("POST", "/v1/responses/resp_1/cancel") not in calls(server):
        assert time.monotonic() < deadline, "the response was never cancelled at the provider"
        time.sleep(0.01)


@pytest.mark.parametrize("cls", [OpenAIResponses, OpenResponses, OllamaResponses])
@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("background_poll_interval", -1.0),
        ("background_poll_interval", 0),
        ("background_max_wait", -600.0),
        ("background_max_wait", "600"),
        ("background", "yes"),
    ],
)
def test_bad_values_name_the_keyword(cls, keyword, value):
    with pytest.raises(InvalidInputError) as info:
        cls(**{keyword: value})
    assert info.value.details["errors"][0]["path"] == keyword


@pytest.mark.parametrize("cls", [OpenAIResponses, OpenResponses, OllamaResponses])
def test_the_settings_reach_the_component(cls):
    made = cls(background=True, background_poll_interval=0.5, background_max_wait=30)
    assert made.options["background"] is True
    assert made.options["background_poll_interval"] == 0.5
    assert made.options["background_max_wait"] == 30.0
    assert made.get_request_params()["background"] is True
    assert "background" not in cls().options  # off by default, as in Agno
