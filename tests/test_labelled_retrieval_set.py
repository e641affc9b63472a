"""The labelled retrieval set of bench/bench_knowledge.py cannot rot: it loads, every answer
span occurs in the text exactly once, and the span labels survive any chunking.

Cheap: no embedding, only ``split_text``."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from ferrule import Runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _load_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_labelled", ROOT / "bench" / "_labelled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_labelled", module)
    spec.loader.exec_module(module)
    return module


labelled = _load_module()
TEXT, QUESTIONS = labelled.load()
SPANS = [span for q in QUESTIONS for span in q["answers"]]


def test_the_set_is_large_enough_and_well_formed() -> None:
    assert len(QUESTIONS) >= 40
    assert len(TEXT.encode()) < 1_000_000
    ids = [q["id"] for q in QUESTIONS]
    assert len(set(ids)) == len(ids)
    assert len({q["question"] for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert q["question"].strip().endswith("?"), q["id"]
        assert q["answers"] and all(a.strip() for a in q["answers"]), q["id"]


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: q["id"])
def test_every_answer_span_occurs_once_in_the_text(question: dict[str, object]) -> None:
    text = labelled.normalize(TEXT)
    for span in question["answers"]:  # type: ignore[attr-defined]
        assert text.count(labelled.normalize(span)) == 1, span


def test_provenance_is_documented() -> None:
    readme = (labelled.DATA / "README.md").read_text()
    assert "public domain" in readme and "extract.py" in readme


def test_a_span_cut_by_a_chunk_boundary_counts_where_half_of_it_is() -> None:
    span = "alpha beta gamma delta"
    assert labelled.covers(["intro alpha beta gamma delta outro"], span)
    assert labelled.covers(["intro alpha beta gamma"], span)  # more than half, at the end
    assert labelled.covers(["gamma delta outro"], span)  # half, at the start
    assert not labelled.covers(["intro alpha beta"], span)  # less than half
    assert not labelled.covers(["beta gamma"], span)  # inside, at neither end
    wrapped = "intro alpha\n   beta\ngamma delta"  # answered() normalizes the chunks
    assert labelled.answered([wrapped], {"answers": [span]}) == 1.0
    question = {"answers": [span, "omega"]}
    assert labelled.answered(["alpha beta gamma delta"], question) == 0.5
    found = [["nothing here", "omega and alpha beta gamma delta"]]
    assert labelled.recall(found, [question], 1) == 0.0
    assert labelled.recall(found, [question], 2) == 1.0
    assert labelled.mrr(found, [question]) == 0.5


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    with Runtime() as rt:
        yield rt


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    chunk_size=st.integers(min_value=300, max_value=4000),
    overlap_share=st.floats(min_value=0.0, max_value=0.2),
)
def test_every_span_is_found_in_some_chunk_whatever_the_chunking(
    runtime: Runtime, chunk_size: int, overlap_share: float
) -> None:
    inputs = {
        "text": TEXT,
        "chunk_size": chunk_size,
        "chunk_overlap": int(chunk_size * overlap_share),
    }
    chunks = runtime.call("split_text", inputs)["chunks"]
    normalized = [labelled.normalize(c) for c in chunks]
    missing = [span for span in SPANS if not labelled.covers(normalized, span)]
    assert not missing


# -- the docs set: questions about docs/, labelled by section ---------------------------

DOCS = ROOT / "docs"
DOCS_QUESTIONS = labelled.docs_questions()


def test_the_docs_set_is_large_enough_and_well_formed() -> None:
    assert len(DOCS_QUESTIONS) >= 40
    assert len({q["id"] for q in DOCS_QUESTIONS}) == len(DOCS_QUESTIONS)
    assert len({q["question"].lower() for q in DOCS_QUESTIONS}) == len(DOCS_QUESTIONS)
    for q in DOCS_QUESTIONS:
        assert q["question"].strip().endswith("?"), q["id"]
        assert q["sections"] and len(set(q["sections"])) == len(q["sections"]), q["id"]
    # the query docs/memory.md shows for `ferrule knowledge search` is asked as written
    assert "how do I resume a session?" in {q["question"] for q in DOCS_QUESTIONS}
    provenance = labelled.DOCS_QUESTIONS.with_name("README.md").read_text()
    assert "written for this set before the chunking" in " ".join(provenance.split())


@pytest.mark.parametrize("question", DOCS_QUESTIONS, ids=lambda q: q["id"])
def test_every_labelled_section_is_in_the_docs_once_with_text(question: dict[str, Any]) -> None:
    """A heading renamed or a section emptied in docs/ fails here, naming the label."""
    for label in question["sections"]:
        file, _, heading = label.partition("#")
        assert file != "benchmarks.md", "benchmarks.md is rewritten by the benchmarks"
        assert (DOCS / file).is_file(), label
        sections = labelled.docs_sections((DOCS / file).read_text(encoding="utf-8"))
        assert len(sections.get(heading, [])) == 1, label
        assert sum(map(len, sections[heading][0])) >= 200, label


def test_a_chunk_answers_when_it_holds_its_section_not_its_heading() -> None:
    text = (
        "# Guide\n\n## Sessions\n\n"
        "A session outlives the process: open it again by its id, with the same db.\n"
        "Its runs come back as history, the last three by default, in order.\n"
        "```python\nagent.run('hi', session_id='user-123')\n```\n\n"
        "## Other\n\n```python\nagent.run('hi', session_id='user-123')\n```\n"
    )
    section = labelled.docs_sections(text)["Sessions"][0]
    assert "```python" not in section  # lines that occur twice say nothing of where
    assert not labelled.answers("## Sessions", section)  # the heading alone
    assert labelled.answers(text, section)
    first = "A session outlives the process: open it again by its id, with the same db."
    second = "Its runs come back as history, the last three by default, in order."
    assert labelled.answers(f"## Sessions\n\n{first}\n{second}", section)
    assert not labelled.answers(f"## Sessions\n\n{first[:40]}", section)  # a line cut short
    wide = labelled.docs_sections("## S\n\n" + "\n".join(f"line {i} " * 9 for i in range(20)))
    assert not labelled.answers("line 0 " * 9, wide["S"][0])  # 63 of about 1,300 characters
