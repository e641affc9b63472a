"""The labelled retrieval set of bench/bench_knowledge.py cannot rot: it loads, every answer
span occurs in the text exactly once, and the span labels survive any chunking.

Cheap: no embedding, only ``split_text``."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

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
