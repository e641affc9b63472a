"""Code written for Agno, with ``agno`` replaced by ``ferrule``, as a user types it."""

from __future__ import annotations

import attrs
from ferrule import APIModel, LocalModel, RunOutput
from ferrule.agent import Agent
from ferrule.db.sqlite import SqliteDb
from ferrule.knowledge import Knowledge
from ferrule.knowledge.embedder.openai import OpenAIEmbedder
from ferrule.knowledge.embedder.sentence_transformer import SentenceTransformerEmbedder
from ferrule.models.anthropic import Claude
from ferrule.models.google import Gemini
from ferrule.models.llama_cpp import LlamaCpp
from ferrule.models.openai import OpenAIChat, OpenAILike
from ferrule.models.xai import xAI
from ferrule.tools.duckduckgo import DuckDuckGoTools
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
    local: LocalModel = LlamaCpp("Qwen/Qwen3-0.6B", n_ctx=4096)
    OpenAIChat(id=4)  # error
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
