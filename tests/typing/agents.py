"""Agents as a user types them: models, queries, runs, streams, sessions."""

from __future__ import annotations

import asyncio
from typing import Any

from ferrule import (
    Agent,
    AgentConfig,
    AgentResponse,
    AgentStream,
    APIModel,
    LangModel,
    LangModelInferConfig,
    LocalModel,
    Message,
    MessageOutput,
    RunOutput,
    Runtime,
    ToolConfirmation,
)
from ferrule.agent import AgnoRun, AiloyRun, RunContentEvent, RunOutputEvent, StepResult
from ferrule_testmodel import TestModel
from typing_extensions import assert_type

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


def models(rt: Runtime) -> None:
    assert_type(Agent(rt, LocalModel()), Agent[str])
    assert_type(Agent(rt, APIModel("gpt-4o")), Agent[str])
    assert_type(Agent(rt, APIModel("m", provider="openai", base_url="http://h/v1")), Agent[str])
    assert_type(Agent(TestModel(["Hi"]), name="Assistant"), Agent[str])
    assert_type(Agent(model=TestModel(), instructions=["Be brief."]), Agent[str])
    # Agent[str] is Agent[str, AgnoRun]: Agno's run, returning the RunOutput
    assert_type(Agent(TestModel()), Agent[str, AgnoRun])


def query(rt: Runtime) -> None:
    with Agent(rt, TestModel(["Hello."])) as agent:
        assert_type(agent, Agent[str])
        stream = agent.query("Please give me a short poem about AI")
        assert_type(stream, AgentStream[AgentResponse, str])
        for resp in stream:
            assert_type(resp, AgentResponse)
            agent.print(resp)
        assert_type(stream.result(), RunOutput[str])
        assert_type(agent.get_messages(), list[Message])


def run(agent: Agent[str]) -> None:
    output = agent.run("Hi", session_id="user-123", metadata={"from": "typing"})
    assert_type(output, RunOutput[str])
    assert_type(output.content, str)
    assert_type(output.run_id, str)
    assert_type(output.metrics.input_tokens, int)
    # Agno's run takes a list of messages as its input too, and returns the RunOutput
    history = [Message(role="user", contents="What's John's favorite color?")]
    assert_type(agent.run(history), RunOutput[str])
    # typed events
    for event in agent.run("Hi", stream=True, stream_events=True):
        assert_type(event, RunOutputEvent)
        if isinstance(event, RunContentEvent):
            # Agno's: a text delta, or the structured output of a run with an output schema
            assert_type(event.content, Any)
    assert_type(agent.run("Hi", stream=False), RunOutput[str])
    assert_type(agent.step([Message(role="user", contents="Hi")]), StepResult)


async def ailoy_run(lm: LangModel) -> None:
    """Ailoy 0.2's form, a LangModel given first: its run streams MessageOutputs."""
    agent = Agent(lm)
    assert_type(agent, Agent[str, AiloyRun])
    assert_type(Agent(lm, [], tools=None, instructions="Be brief."), Agent[str, AiloyRun])
    assert_type(Agent(lm, output_schema=dict(SCHEMA)), Agent[dict[str, Any], AiloyRun])
    async for resp in agent.run("What is your name?"):
        assert_type(resp, MessageOutput)
    config = AgentConfig(inference=LangModelInferConfig(temperature=0.0))
    history = [Message(role="user", contents="What's John's favorite color?")]
    assert_type(agent.run(history, config), AgentStream[MessageOutput, str])
    for message in agent.run(history, config=config):
        assert_type(message, MessageOutput)
    assert_type(await agent.arun("Hi"), RunOutput[str])  # arun is Agno's on every agent
    assert_type(agent.deep_copy(), Agent[Any, AiloyRun])
    # the model by keyword is Agno's form, whatever the model
    assert_type(Agent(model=lm), Agent[str, AgnoRun])
    assert_type(Agent(model=lm).run("Hi"), RunOutput[str])


def human_in_the_loop(agent: Agent[str]) -> None:
    paused = agent.run("Invoice ACME")
    if paused.is_paused:
        for requirement in paused.requirements:
            assert_type(requirement, ToolConfirmation)
            requirement.confirm()
        resumed = agent.continue_run(paused.run_id, paused.requirements)
        if isinstance(resumed, RunOutput):
            assert_type(resumed.content, str)
        events = agent.continue_run(paused.run_id, confirm=True, stream=True)
        assert_type(events, AgentStream[RunOutputEvent, str])


def sessions(agent: Agent[str]) -> None:
    # stored runs come back with their content as JSON
    last = agent.get_last_run_output(session_id="user-123")
    assert_type(last, RunOutput[Any] | None)
    session = agent.get_session()
    if session is not None and session.runs:
        assert_type(session.runs[0].content, Any)
    assert_type(agent.get_session_state(), dict[str, Any])


async def asynchronous(agent: Agent[str]) -> None:
    assert_type(await agent.arun("Hi"), RunOutput[str])
    async for message in agent.arun("Hi"):
        assert_type(message, MessageOutput)
    async for event in agent.arun("Hi", stream=True):
        assert_type(event, RunOutputEvent)
    async for resp in agent.aquery("Hi"):
        assert_type(resp, AgentResponse)
    assert_type(await agent.aquery("Hi").aresult(), RunOutput[str])


with Runtime() as runtime:
    query(runtime)
    run(Agent(runtime, TestModel()))
    asyncio.run(asynchronous(Agent(TestModel())))
