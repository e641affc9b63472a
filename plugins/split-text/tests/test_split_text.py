"""split_text and split_text_by_separator: LangChain as the oracle, examples, errors."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from ferrule import Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.strategies import plugin_profile
from ferrule_split_text.plugin import SplitTextBySeparatorInput, SplitTextInput
from ferrule_split_text.splitter import split_text_by_separator_operator, split_text_operator
from hypothesis import given
from hypothesis import strategies as st
from langchain_text_splitters import (
    CharacterTextSplitter,
    RecursiveCharacterTextSplitter,
    TextSplitter,
)

PROFILE = plugin_profile("split-text", ci=200, dev=60)


@pytest.fixture(autouse=True, scope="module")
def _quiet_langchain():
    # LangChain logs a warning for every chunk longer than chunk_size.
    logger = logging.getLogger("langchain_text_splitters")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8"))


def langchain(splitter: type[TextSplitter], text: str, **options) -> list[str]:
    """LangChain's chunks of ``text`` as ferrule's splitters make them: separators dropped,
    whitespace kept, lengths in UTF-8 bytes, chunks of only whitespace left out."""
    chunks = splitter(
        **options, keep_separator=False, strip_whitespace=False, length_function=utf8_length
    ).split_text(text)
    return [chunk for chunk in chunks if chunk.strip()]


def langchain_chunks(
    text: str, chunk_size: int, chunk_overlap: int, separators: list[str]
) -> list[str]:
    return langchain(
        RecursiveCharacterTextSplitter,
        text,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        separators=separators,
    )


def langchain_chunks_by_separator(
    text: str, separator: str, chunk_size: int, chunk_overlap: int
) -> list[str]:
    return langchain(
        CharacterTextSplitter,
        text,
        separator=separator,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )


def split(text: str, **options) -> list[str]:
    return split_text_operator(SplitTextInput(text=text, **options))["chunks"]


def split_by(text: str, **options) -> list[str]:
    return split_text_by_separator_operator(SplitTextBySeparatorInput(text=text, **options))[
        "chunks"
    ]


# Texts made of the things the splitter reacts to: every default separator, runs of them,
# other whitespace, multi-byte characters of 2, 3 and 4 bytes, a combining mark, words,
# and arbitrary characters.
FRAGMENTS = st.sampled_from(
    [
        "\n\n",
        "\n",
        " ",
        "  ",
        "\t",
        "\r\n",
        "word",
        "ab",
        "x",
        "é",
        "ß",
        "日本",
        "語",
        "😀",
        "e\u0301",
        "\u3000",
        ".",
    ]
)
TEXTS = st.lists(FRAGMENTS | st.characters(exclude_categories=["Cs"]), max_size=80).map("".join)
SEPARATOR = st.sampled_from(["\n\n", "\n", " ", "", "\t", "ab", "é", "日本", "😀", "."]) | st.text(
    max_size=3
)
SEPARATORS = st.lists(SEPARATOR, min_size=1, max_size=5)


@st.composite
def sizes(draw) -> tuple[int, int]:
    chunk_size = draw(st.integers(1, 64))
    return chunk_size, draw(st.integers(0, chunk_size))


@pytest.mark.parametrize(
    ("ours", "splitter", "options"),
    [
        (split, RecursiveCharacterTextSplitter, st.fixed_dictionaries({"separators": SEPARATORS})),
        (split_by, CharacterTextSplitter, st.fixed_dictionaries({"separator": SEPARATOR})),
    ],
    ids=["split_text", "split_text_by_separator"],
)
@PROFILE
@given(text=TEXTS, size=sizes(), data=st.data())
def test_chunks_equal_langchains(
    ours: Callable[..., list[str]],
    splitter: type[TextSplitter],
    options: st.SearchStrategy[dict[str, Any]],
    text: str,
    size: tuple[int, int],
    data: st.DataObject,
) -> None:
    # Each splitter cuts as its LangChain counterpart does, given the same separators.
    drawn = data.draw(options)
    chunk_size, chunk_overlap = size
    expected = langchain(
        splitter, text, chunk_size=chunk_size, chunk_overlap=chunk_overlap, **drawn
    )
    assert ours(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap, **drawn) == expected


@PROFILE
@given(text=TEXTS, size=sizes())
def test_split_text_default_separators_equal_langchain(text: str, size: tuple[int, int]) -> None:
    chunk_size, chunk_overlap = size
    expected = langchain_chunks(text, chunk_size, chunk_overlap, ["\n\n", "\n", " ", ""])
    assert split(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap) == expected


@PROFILE
@given(
    paragraphs=st.lists(TEXTS, min_size=1, max_size=30),
    chunk_size=st.integers(40, 400),
    overlap_share=st.floats(0, 1),
)
def test_split_text_of_longer_texts_equals_langchain(
    paragraphs: list[str], chunk_size: int, overlap_share: float
) -> None:
    # Longer texts and chunk sizes: many chunks, overlaps of many pieces.
    text = "\n\n".join(paragraphs)
    chunk_overlap = int(chunk_size * overlap_share)
    expected = langchain_chunks(text, chunk_size, chunk_overlap, ["\n\n", "\n", " ", ""])
    assert split(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap) == expected


@PROFILE
@given(text=TEXTS, size=sizes())
def test_chunks_fit_and_never_cut_a_character(text: str, size: tuple[int, int]) -> None:
    # With "" as the last resort every piece can be made to fit, except a single
    # character wider than chunk_size, which stays whole (never cut into bytes).
    chunk_size, chunk_overlap = size
    for chunk in split(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap):
        assert chunk.strip()
        assert utf8_length(chunk) <= chunk_size or len(chunk) == 1
        assert chunk.encode("utf-8").decode("utf-8") == chunk


@pytest.mark.parametrize("alphabet", ["abcdefghij", "abcdé日😀"])
def test_unbroken_text_splits_by_character(alphabet: str) -> None:
    # No separator but "" applies: the character-level path, ASCII and not.
    text = "".join(alphabet[i * 7 % len(alphabet)] for i in range(3000))
    for chunk_size, chunk_overlap in ((50, 10), (4, 0), (4, 4), (7, 3)):
        assert split(text, chunk_size=chunk_size, chunk_overlap=chunk_overlap) == langchain_chunks(
            text, chunk_size, chunk_overlap, ["\n\n", "\n", " ", ""]
        )


def test_words_with_overlap() -> None:
    assert split("abc def ghi", chunk_size=7, chunk_overlap=3) == ["abc def", "def ghi"]
    assert split("abc def ghi", chunk_size=7, chunk_overlap=0) == ["abc def", "ghi"]


def test_length_is_utf8_bytes() -> None:
    # Each of these characters is 3 bytes: two fit in 6 bytes, not in 5.
    assert split("日本語", chunk_size=6, chunk_overlap=0) == ["日本", "語"]
    assert split("日本語", chunk_size=5, chunk_overlap=0) == ["日", "本", "語"]
    assert split("日本語", chunk_size=6, chunk_overlap=3) == ["日本", "本語"]


def test_separators_are_dropped_chunks_not_stripped_blank_chunks_dropped() -> None:
    # " \t " is a piece of its own that cannot be split further: a whitespace-only chunk,
    # dropped; the other chunks keep their spaces.
    text = "a x \t x b"
    assert split(text, chunk_size=3, chunk_overlap=0, separators=["x"]) == ["a ", " b"]
    assert langchain_chunks(text, 3, 0, ["x"]) == ["a ", " b"]


def test_paragraphs_merge_up_to_chunk_size() -> None:
    text = "one two\n\nthree\n\nfour five six"
    assert split(text, chunk_size=16, chunk_overlap=0) == ["one two\n\nthree", "four five six"]
    assert split(text) == [text]


def test_empty_and_blank_text() -> None:
    assert split("") == []
    assert split(" \n\n \t\n ") == []


def test_split_text_by_separator_keeps_long_pieces_whole() -> None:
    text = "short\n\nthis piece is longer than the chunk size\n\ntail"
    assert split_by(text, chunk_size=12, chunk_overlap=0) == [
        "short",
        "this piece is longer than the chunk size",
        "tail",
    ]
    assert split_by("a-b-c-d", separator="-", chunk_size=3, chunk_overlap=1) == [
        "a-b",
        "b-c",
        "c-d",
    ]


def test_through_runtime() -> None:
    paragraph = "Simon the shoemaker had neither house nor land of his own. " * 12
    text = "\n\n".join(f"{i}. {paragraph}\nЗима. 冬天。😀" for i in range(200))
    with Runtime() as rt:
        chunks = rt.call("split_text", {"text": text})["chunks"]
        assert chunks == langchain_chunks(text, 4000, 200, ["\n\n", "\n", " ", ""])
        assert len(chunks) > 30
        assert all(utf8_length(chunk) <= 4000 for chunk in chunks)
        by_line = rt.call(
            "split_text_by_separator",
            {"text": text, "separator": "\n", "chunk_size": 1000, "chunk_overlap": 100},
        )["chunks"]
        assert by_line == langchain_chunks_by_separator(text, "\n", 1000, 100)


def error_paths(rt: Runtime, operator: str, inputs: dict) -> list[str]:
    with pytest.raises(InvalidInputError) as caught:
        rt.call(operator, inputs)
    return [e["path"] for e in caught.value.errors]


@pytest.mark.parametrize("operator", ["split_text", "split_text_by_separator"])
@pytest.mark.parametrize(
    ("inputs", "path"),
    [
        ({"text": "x", "chunk_size": 10, "chunk_overlap": 11}, "$.chunk_overlap"),
        ({"text": "x", "chunk_size": 100}, "$.chunk_overlap"),  # the default overlap is 200
        ({"text": "x", "chunk_overlap": -1}, "$.chunk_overlap"),
        ({"text": "x", "chunk_size": 0, "chunk_overlap": 0}, "$.chunk_size"),
        ({"text": "x", "chunk_size": "100"}, "$.chunk_size"),
        ({"text": "x", "chunk_size": True}, "$.chunk_size"),
        ({"text": 5}, "$.text"),
        ({}, "$.text"),
        ({"text": "a\ud800b"}, "$.text"),
    ],
)
def test_bad_input_names_the_field(operator: str, inputs: dict, path: str) -> None:
    with Runtime() as rt:
        assert error_paths(rt, operator, inputs) == [path]


@pytest.mark.parametrize(
    ("operator", "inputs", "path"),
    [
        ("split_text", {"text": "x", "separators": []}, "$.separators"),
        ("split_text", {"text": "x", "separators": "\n"}, "$.separators"),
        ("split_text", {"text": "x", "separators": ["\n", 3]}, "$.separators[1]"),
        ("split_text", {"text": "x", "separators": ["\n", "\udc80"]}, "$.separators[1]"),
        ("split_text_by_separator", {"text": "x", "separator": ["\n"]}, "$.separator"),
        ("split_text_by_separator", {"text": "x", "separator": "\ud800"}, "$.separator"),
    ],
)
def test_bad_separators_name_the_field(operator: str, inputs: dict, path: str) -> None:
    with Runtime() as rt:
        assert error_paths(rt, operator, inputs) == [path]


def test_unknown_field_is_named() -> None:
    # split_text takes "separators" (a list); "separator" belongs to split_text_by_separator.
    with Runtime() as rt, pytest.raises(InvalidInputError, match=r"\$\.separator: unknown field"):
        rt.call("split_text", {"text": "x", "separator": "\n"})


def test_overlap_error_message_says_what_is_wrong() -> None:
    with (
        Runtime() as rt,
        pytest.raises(
            InvalidInputError, match=r"chunk_overlap \(11\) must not exceed chunk_size \(10\)"
        ),
    ):
        rt.call("split_text", {"text": "x", "chunk_size": 10, "chunk_overlap": 11})
