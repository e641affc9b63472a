"""Markdown chunking keeps headings with their text (`ferrule.knowledge.chunking`), through
the real ``split_text`` operator: properties over generated documents, and the cases by
name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.knowledge.chunking import heading_only, split, utf8_size
from ferrule.knowledge.readers import Source
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def rt() -> Iterator[Runtime]:
    with Runtime() as runtime:
        yield runtime


def chunks_of(rt: Runtime, text: str, size: int = 1000, overlap: int = 100) -> list[str]:
    source = Source("text:doc", "doc.md", text, {}, "markdown")
    result: list[str] = rt.sync_bridge.run(split(rt, source, size, overlap))
    return result


def kept(text: str, chunks: list[str]) -> bool:
    """Whether every non-blank character of ``text`` is in the chunks, in order (chunks
    may repeat some: a heading on each piece, the overlap)."""
    have = iter("".join("".join(chunk.split()) for chunk in chunks))
    return all(character in have for character in "".join(text.split()))


def ends_with_heading(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and heading_only(lines[-1])


# -- generated documents ----------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé", min_size=1, max_size=8)
TITLE = st.builds(
    lambda level, words: "#" * level + " " + " ".join(words),
    st.integers(1, 6),
    st.lists(WORD, min_size=1, max_size=3),
)
PARAGRAPH = st.lists(WORD, min_size=1, max_size=80).map(" ".join)
LINES = st.lists(PARAGRAPH.map(lambda p: p[:60]), min_size=1, max_size=8).map("\n".join)
CODE = st.lists(st.one_of(PARAGRAPH.map(lambda p: p[:40]), TITLE), max_size=5).map(
    lambda lines: "```\n" + "\n".join(lines) + "\n```"  # a "# line" in code is no heading
)
SECTION = st.builds(
    lambda titles, blocks: "\n\n".join([*titles, *blocks]),
    st.lists(TITLE, min_size=0, max_size=3),  # several: bare headings straight after each other
    st.lists(st.one_of(PARAGRAPH, LINES, CODE), min_size=0, max_size=6),
)
DOCUMENT = st.lists(SECTION, min_size=1, max_size=8).map("\n\n".join)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=DOCUMENT, size=st.integers(200, 1500), share=st.floats(0.0, 0.2))
# bare headings joined to a section's own, too long to repeat on each of its pieces
@example(
    text="### aaa aaaaaaaa\n\n# aa aa aaa\n\n###### a aaaaaaaa aaaaaaéé\n\n" * 2
    + "# a\n\n# aaaaaaa aaaaaaaa\n\n#### a\n\na a aaaa aaaé aaaaa aaaaaa aaaaaaé aaaaaaaé",
    size=200,
    share=0.0,
)
def test_headings_stay_with_their_text_and_nothing_is_lost(
    rt: Runtime, text: str, size: int, share: float
) -> None:
    chunks = chunks_of(rt, text, size, int(size * share))
    assert all(utf8_size(chunk) <= size for chunk in chunks)
    assert all(chunk == chunk.strip() and chunk for chunk in chunks)
    assert kept(text, chunks)
    # A chunk of headings alone only where the document ends with headings no text
    # follows, and only as its last chunk.
    alone = [i for i, chunk in enumerate(chunks) if heading_only(chunk)]
    assert not alone or (alone == [len(chunks) - 1] and ends_with_heading(text)), alone


# -- cases by name --------------------------------------------------------------------------


def test_a_bare_heading_joins_the_section_it_names(rt: Runtime) -> None:
    text = "# Guide\n\n## Sessions\n\n### Resuming\n\nOpen the session by its id.\n"
    assert chunks_of(rt, text) == [
        "# Guide\n\n## Sessions\n\n### Resuming\n\nOpen the session by its id."
    ]


def test_each_section_is_its_own_chunk(rt: Runtime) -> None:
    text = "## Tides\n\nTwice a day.\n\n## Bread\n\nRye at dawn.\n"
    assert chunks_of(rt, text) == ["## Tides\n\nTwice a day.", "## Bread\n\nRye at dawn."]


def test_a_long_section_repeats_its_heading_on_every_piece(rt: Runtime) -> None:
    paragraphs = [f"Paragraph {i}: " + "the ferry leaves at nine " * 8 for i in range(12)]
    text = "## Sessions under concurrency\n\n" + "\n\n".join(paragraphs)
    chunks = chunks_of(rt, text, size=600, overlap=0)
    assert len(chunks) > 3
    assert all(c.startswith("## Sessions under concurrency\n\nParagraph ") for c in chunks)
    assert all(utf8_size(c) <= 600 for c in chunks)
    assert kept(text, chunks)


def test_text_before_the_first_heading_and_code_are_kept(rt: Runtime) -> None:
    text = "Intro line.\n\n```python\n# not a heading\nx = 1\n```\n\n## Next\n\nBody.\n"
    assert chunks_of(rt, text) == [
        "Intro line.\n\n```python\n# not a heading\nx = 1\n```",
        "## Next\n\nBody.",
    ]


def test_trailing_headings_join_the_section_before(rt: Runtime) -> None:
    text = "## One\n\nSome text.\n\n## Appendix\n"
    assert chunks_of(rt, text) == ["## One\n\nSome text.\n\n## Appendix"]


def test_plain_text_is_split_text_s_chunks(rt: Runtime) -> None:
    source = Source("text:doc", "doc.txt", "# not markdown\n\n" + "word " * 300, {}, "text")
    chunks: list[Any] = rt.sync_bridge.run(split(rt, source, 500, 50))
    expected = rt.call("split_text", {"text": source.text, "chunk_size": 500, "chunk_overlap": 50})[
        "chunks"
    ]
    assert chunks == [c.strip() for c in expected]
