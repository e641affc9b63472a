"""Code written for Agno, with ``agno`` replaced by ``ferrule``, as a user types it."""

from __future__ import annotations

import attrs
from ferrule import APIModel, RunOutput
from ferrule.agent import Agent
from ferrule.db.in_memory import InMemoryDb
from ferrule.db.sqlite import SqliteDb
from ferrule.exceptions import RetryAgentRun, StopAgentRun
from ferrule.knowledge import Knowledge
from ferrule.knowledge.embedder.openai import OpenAIEmbedder
from ferrule.knowledge.embedder.sentence_transformer import SentenceTransformerEmbedder
from ferrule.memory import MemoryManager
from ferrule.models.anthropic import Claude
from ferrule.models.anthropic.claude import Claude as ClaudeAtHome
from ferrule.models.google import Gemini
from ferrule.models.llama_cpp import LlamaCpp
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.models.openai.chat import OpenAIChat as OpenAIChatAtHome
from ferrule.models.xai import xAI
from ferrule.run.agent import RunContentEvent, RunEvent
from ferrule.tools import Toolkit
from ferrule.tools.duckduckgo import DuckDuckGoTools
from ferrule.tools.reasoning import ReasoningTools
from ferrule.utils.pprint import pprint_run_response
from ferrule.vectordb.pgvector import PgVector
from typing_extensions import assert_type


@attrs.define
class MovieReview:
    title: str
    rating: int


def models() -> None:
    assert_type(OpenAIChat(id="gpt-4"), OpenAIChat)
    model: APIModel = OpenAIChat(id="gpt-4o", api_key="sk-...", organization="org")
    model = OpenAILike(id="local", base_url="http://127.0.0.1:8000/v1")
    model = Claude(max_tokens=1024)
    model = Gemini(id="gemini-2.5-pro")
    model = xAI()
    local: APIModel = LlamaCpp("Qwen/Qwen3-0.6B", options={"n_ctx": 4096})
    OpenAIChat(id=4)  # error
    assert_type(OpenAIChatAtHome(temperature=0.2, max_tokens=256, seed=1), OpenAIChat)
    assert_type(ClaudeAtHome(max_tokens=512, temperature=0.3, top_p=0.9), Claude)
    Gemini(temperature=0.2, max_output_tokens=128, thinking_level="low")
    OpenAIChat(temperature="hot")  # error
    OpenAIChat(reasoning_effort="maximal")  # error
    print(model, local)


def agents() -> None:
    agent = Agent(name="Assistant", model=OpenAIChat(id="gpt-4"), description="Helpful.")
    assert_type(agent, Agent[str])
    response = agent.run("What is machine learning?")
    assert_type(response, RunOutput[str])
    print(response.content)
    reviewer = Agent(model=OpenAIChat(id="gpt-4"), output_schema=MovieReview)
    review: MovieReview = reviewer.run("Review Inception").content
    print(review.title)
    researcher = Agent(model=Claude(), tools=[DuckDuckGoTools(fixed_max_results=3)])
    print(researcher.run("News?").content)
    thinker = Agent(
        model=OpenAIChat(), tools=[ReasoningTools(add_instructions=True)], db=InMemoryDb()
    )
    run = thinker.run("Why?")
    pprint_run_response(run, markdown=True)
    for event in thinker.run("Why?", stream=True):
        if event.event == RunEvent.run_content and isinstance(event, RunContentEvent):
            print(event.content)


class Shop(Toolkit):
    def __init__(self) -> None:
        super().__init__(name="shop", tools=[self.price])

    def price(self, item: str) -> float:
        if not item:
            raise RetryAgentRun("name an item")
        if item == "stop":
            raise StopAgentRun("done", agent_message="Stopped.")
        return 1.0


def memories() -> None:
    manager = MemoryManager()
    Agent(model=OpenAIChat(), tools=[Shop()], memory_manager=manager, db=InMemoryDb())


def knowledge() -> None:
    agent = Agent(
        model=OpenAIChat(id="gpt-4"),
        db=SqliteDb(db_file="agent.db"),
        knowledge=Knowledge(
            vector_db=PgVector(table_name="documents", db_url="postgresql://u:p@localhost/db"),
            embedder=OpenAIEmbedder(),
        ),
        add_history_to_context=True,
        add_knowledge_to_context=True,
        enable_user_memories=True,
    )
    agent.run("My favorite color is blue", session_id="user-123")
    Knowledge(embedder=SentenceTransformerEmbedder())
