"""Sequences' KV state moved between slots and kept in memory (llama-server's ``--cache-ram``).

A sequence's state (``llama_state_seq_get_data``: the KV cells it holds, with their
positions) is read and written in time proportional to its tokens, and a state loaded into
another sequence gives the very logits the original would (tested). On SmolLM2 Q4_1 on 2
cores an 80-token state reads in ~1.7 ms and loads in ~0.5 ms, while reading those 80
prompt tokens again takes ~600 ms. So when a request's slot would drop tokens another
request may want again (a slot is taken by a prompt that shares only its start), the
decoder keeps them here, within a byte budget, least recently used out first; and a
request whose start another slot or this cache holds has that state loaded rather than
read again.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any


def read_state(context: Any, seq_id: int) -> Any | None:
    """Sequence ``seq_id``'s state (a ctypes byte array), or None if llama.cpp gave none."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(context, seq_id)
    if not size:
        return None
    state = (ctypes.c_uint8 * size)()
    if llama_cpp.llama_state_seq_get_data(context, state, size, seq_id) != size:
        return None
    return state


def write_state(context: Any, memory: Any, state: Any, seq_id: int) -> bool:
    """Replace what sequence ``seq_id`` holds with ``state``; False if llama.cpp refused it
    (the sequence then holds nothing)."""
    import llama_cpp

    llama_cpp.llama_memory_seq_rm(memory, seq_id, -1, -1)
    if llama_cpp.llama_state_seq_set_data(context, state, len(state), seq_id) == len(state):
        return True
    llama_cpp.llama_memory_seq_rm(memory, seq_id, -1, -1)
    return False


class SavedPrompt:
    """Tokens a slot held and their KV state."""

    __slots__ = ("state", "tokens")

    def __init__(self, tokens: list[int], state: Any) -> None:
        self.tokens = tokens
        self.state = state


def common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PromptCache:
    """Saved prompts within ``capacity`` bytes of state, least recently used dropped first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.size = 0
        self._entries: list[SavedPrompt] = []  # least recently used first
        #: Prompts saved, and starts loaded from here into a slot.
        self.saves = 0
        self.hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[SavedPrompt]:
        """The entries, least recently used first."""
        return iter(list(self._entries))

    def best(self, prompt: list[int]) -> tuple[SavedPrompt | None, int]:
        """The entry holding the longest start of ``prompt`` (the most recent of equals)
        and how many tokens of it."""
        found, longest = None, 0
        for entry in self._entries:
            shared = common_prefix(entry.tokens, prompt)
            if shared >= longest and shared:
                found, longest = entry, shared
        return found, longest

    def used(self, entry: SavedPrompt) -> None:
        """``entry`` was loaded: the most recently used now."""
        self.touch(entry)
        self.hits += 1

    def touch(self, entry: SavedPrompt) -> None:
        """``entry`` is the most recently used now (a slot held its tokens again)."""
        self._entries.remove(entry)
        self._entries.append(entry)

    def holding(self, tokens: list[int]) -> SavedPrompt | None:
        """An entry that holds all of ``tokens`` (they start it), if any."""
        for entry in self._entries:
            if common_prefix(entry.tokens, tokens) == len(tokens):
                return entry
        return None

    def save(self, tokens: list[int], state: Any) -> None:
        """Keep ``tokens``' state; entries whose tokens start it are dropped (it holds all
        they do), and if an entry already holds all of it, that one is kept instead."""
        if len(state) > self.capacity:
            return
        held = self.holding(tokens)
        if held is not None:
            self.touch(held)
            return
        for entry in [e for e in self._entries if common_prefix(e.tokens, tokens) == len(e.tokens)]:
            self._drop(entry)
        self._entries.append(SavedPrompt(tokens, state))
        self.size += len(state)
        self.saves += 1
        while self.size > self.capacity:
            self._drop(self._entries[0])

    def clear(self) -> None:
        self._entries.clear()
        self.size = 0

    def _drop(self, entry: SavedPrompt) -> None:
        self._entries.remove(entry)
        self.size -= len(entry.state)
