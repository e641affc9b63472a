"""Agno's memory API: `MemoryManager` on its own over a db (Agno's `UserMemory` in and out),
searching by recency or with the model's judgement, optimizing memories into a summary."""

from __future__ import annotations

import asyncio

import pytest
from ferrule.db.sqlite import SqliteDb
from ferrule.memory import MemoryManager, UserMemory
from ferrule.memory.strategies import MemoryOptimizationStrategyFactory, SummarizeStrategy
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError


def test_a_memory_manager_keeps_agnos_user_memories(tmp_path):
    manager = MemoryManager(db=SqliteDb(db_file=str(tmp_path / "m.db")))
    first = manager.add_user_memory(
        UserMemory(memory="likes tea", topics=["drinks"]), user_id="ada"
    )
    manager.add_user_memory(UserMemory(memory="has a cat", topics=["pets"]), user_id="ada")
    memories = manager.get_user_memories(user_id="ada")
    assert [m.memory for m in memories] == ["likes tea", "has a cat"]
    assert all(isinstance(m, UserMemory) for m in memories)
    assert manager.get_user_memory(first, user_id="ada").topics == ["drinks"]
    assert [m.memory for m in manager.search_user_memories(limit=1, user_id="ada")] == ["has a cat"]
    assert [
        m.memory
        for m in manager.search_user_memories(limit=1, retrieval_method="first_n", user_id="ada")
    ] == ["likes tea"]
    manager.replace_user_memory(first, UserMemory(memory="likes green tea"), user_id="ada")
    assert manager.get_user_memory(first, user_id="ada").memory == "likes green tea"
    manager.clear()
    assert manager.get_user_memories(user_id="ada") == []


def test_an_agentic_search_asks_the_model_which_memories_matter(tmp_path, wire):
    manager = MemoryManager(
        model=OpenAIChat(id="gpt-4o"), db=SqliteDb(db_file=str(tmp_path / "m.db"))
    )
    cat = manager.add_user_memory("has a cat", user_id="ada")
    manager.add_user_memory("likes tea", user_id="ada")
    wire.says(f'{{"memory_ids": ["{cat}"]}}')
    found = manager.search_user_memories(query="pets?", retrieval_method="agentic", user_id="ada")
    assert [m.memory for m in found] == ["has a cat"]
    assert "likes tea" in wire.text_sent()


def test_optimizing_summarizes_the_memories_into_one(tmp_path, wire):
    manager = MemoryManager(
        model=OpenAIChat(id="gpt-4o"), db=SqliteDb(db_file=str(tmp_path / "m.db"))
    )
    manager.add_user_memory(UserMemory(memory="likes tea", topics=["drinks"]), user_id="ada")
    manager.add_user_memory(UserMemory(memory="drinks it green", topics=["drinks"]), user_id="ada")
    wire.says("Ada likes green tea.")
    optimized = manager.optimize_memories(user_id="ada")
    assert [m.memory for m in optimized] == ["Ada likes green tea."]
    assert [m.memory for m in manager.get_user_memories(user_id="ada")] == ["Ada likes green tea."]
    assert isinstance(
        MemoryOptimizationStrategyFactory.create_strategy("summarize"), SummarizeStrategy
    )
    with pytest.raises(InvalidInputError, match="unknown strategy"):
        MemoryOptimizationStrategyFactory.create_strategy("cluster")


def test_a_strategy_of_ones_own_needs_no_system_prompt():
    from ferrule.memory.strategies import MemoryOptimizationStrategy

    class KeepLatest(MemoryOptimizationStrategy):
        def optimize(self, memories, model):
            return sorted(memories, key=lambda m: m.updated_at or m.created_at)[-1:]

    strategy = KeepLatest()
    old, new = UserMemory(memory="a", created_at=1), UserMemory(memory="b", created_at=2)
    assert strategy.optimize([new, old], None) == [new]
    assert asyncio.run(strategy.aoptimize([old, new], None)) == [new]
    with pytest.raises(NotImplementedError, match="asks no model"):
        strategy.get_system_prompt()


def test_optimize_memories_takes_a_strategy_of_ones_own(tmp_path):
    from ferrule.memory.strategies import MemoryOptimizationStrategy

    class KeepLatest(MemoryOptimizationStrategy):
        def optimize(self, memories, model):
            return sorted(memories, key=lambda m: m.created_at)[-1:]

    manager = MemoryManager(
        model=OpenAIChat(id="gpt-4o"), db=SqliteDb(db_file=str(tmp_path / "m.db"))
    )
    manager.add_user_memory(UserMemory(memory="old", created_at=1), user_id="ada")
    manager.add_user_memory(UserMemory(memory="new", created_at=2), user_id="ada")
    kept = manager.optimize_memories(user_id="ada", strategy=KeepLatest())
    assert [m.memory for m in kept] == ["new"]
    assert [m.memory for m in manager.get_user_memories(user_id="ada")] == ["new"]
