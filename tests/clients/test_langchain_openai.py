"""langchain-openai (``ChatOpenAI``, ``OpenAIEmbeddings``) against `ferrule serve`, as
LangChain's docs use them."""

from __future__ import annotations

import pytest
from client_server import EMBEDDER, Served
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from shapes import City

pytestmark = pytest.mark.timeout(120)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"3 degrees in {city}"


def chat(served: Served, model: str = "test", **options) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=served.openai_base,
        api_key=served.api_key,
        max_retries=0,
        **options,
    )


def test_chat(served):
    assert chat(served).invoke("Hello there").content == "Hello there"


def test_streaming(served):
    pieces = [chunk.content for chunk in chat(served).stream("Hello there")]
    assert len(pieces) > 1 and "".join(pieces) == "Hello there"


def test_multi_turn_with_reasoning(served):
    llm = chat(served, reasoning_effort="low")
    history = [HumanMessage("first question")]
    first = llm.invoke(history)
    history += [first, HumanMessage("second question")]
    assert llm.invoke(history).content == "second question"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_tools_round_trip(served, stream):
    llm = chat(served, "tool-bot").bind_tools([get_weather])
    history = [HumanMessage("Oslo")]

    def ask():
        if not stream:
            return llm.invoke(history)
        message = None
        for chunk in llm.stream(history):
            message = chunk if message is None else message + chunk
        return message

    first = ask()
    [call] = first.tool_calls
    history += [first, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
    assert ask().content == "The tool said: 3 degrees in Oslo"


# json_schema is the default; function_calling forces the call with tool_choice
@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_structured_output(served, method):
    city = chat(served).with_structured_output(City, method=method).invoke("Oslo")
    assert city == City(name="Oslo", population=0)


def test_embeddings(served):
    # check_embedding_ctx_length=False: by default the client tokenizes with tiktoken,
    # which downloads its encoding from the internet (see the module of issue 24's table)
    embeddings = OpenAIEmbeddings(
        model=EMBEDDER,
        base_url=served.openai_base,
        api_key=served.api_key,
        check_embedding_ctx_length=False,
    )
    vectors = embeddings.embed_documents(["a cat", "a dog"])
    assert [len(v) for v in vectors] == [384, 384]
    assert len(embeddings.embed_query("a bird")) == 384


def test_responses_api(served):
    llm = chat(served, use_responses_api=True)
    assert llm.invoke("Hello there").text == "Hello there"
    bound = chat(served, "tool-bot", use_responses_api=True).bind_tools([get_weather])
    history = [HumanMessage("Oslo")]
    first = bound.invoke(history)
    [call] = first.tool_calls
    history += [first, ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"])]
    assert bound.invoke(history).text == "The tool said: 3 degrees in Oslo"
