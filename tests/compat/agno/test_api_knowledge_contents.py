"""Agno's knowledge-contents API on ferrule: a `Knowledge` with a ``contents_db`` keeps a
row per content it was given in the db's knowledge table (a real table of the SQLite file,
under the name given as ``knowledge_table``), with how its ingestion went; the rows are
listed (`get_content`, sorted and paged, with a total), read (`get_content_by_id`,
`get_content_status`), changed (`patch_content`, its metadata reaching the chunks' so
that searches filter on it) and removed with their chunks; their metadata keys are the
filters an agent may use (`get_valid_filters`, `validate_filters`). Embedded by the
offline MiniLM into sqlite-vec files."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from ferrule.db.sqlite import AsyncSqliteDb, SqliteDb
from ferrule.filters import EQ
from ferrule.knowledge.content import Content, ContentStatus
from ferrule.knowledge.knowledge import Knowledge
from ferrule.vectordb.sqlite_vec import SqliteVecDb
from ferrule_kernel import InvalidInputError


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tides\n\nThe tide turns twice a day at the harbour.\n")
    (folder / "bakery.txt").write_text("The bakery on Mill Lane sells rye bread from dawn.\n")
    (folder / "broken.txt").write_bytes(b"\xff\xfe\x00 not text")
    return folder


def knowledge(tmp_path: Path, name: str, contents_db: object) -> Knowledge:
    return Knowledge(
        name=name,
        vector_db=SqliteVecDb(db_file=str(tmp_path / f"{name}-vectors.db")),
        contents_db=contents_db,
    )


def test_each_content_is_a_row_of_the_named_table_with_its_status(
    tmp_path: Path, notes: Path
) -> None:
    db = SqliteDb(db_file=str(tmp_path / "contents.db"), knowledge_table="kb_contents")
    with knowledge(tmp_path, "docs", db) as kb:
        kb.add_content(path=notes, metadata={"town": "Esk"})
        kb.add_content(text_content="The ferry leaves at nine.", name="ferry")

        contents, total = kb.get_content()
        assert total == 4
        by_name = {c.name: c for c in contents}
        assert set(by_name) == {"tides.md", "bakery.txt", "broken.txt", "ferry"}
        tides = by_name["tides.md"]
        assert tides.id == f"file:{notes / 'tides.md'}"
        assert (tides.status, tides.metadata, tides.file_type) == (
            ContentStatus.COMPLETED,
            {"town": "Esk"},
            ".md",
        )
        assert tides.size == len((notes / "tides.md").read_bytes())
        broken = by_name["broken.txt"]
        assert broken.status is ContentStatus.FAILED
        assert "neither a PDF nor UTF-8 text" in (broken.status_message or "")

        page, total = kb.get_content(limit=3, page=2, sort_by="name", sort_order="asc")
        assert ([c.name for c in page], total) == (["tides.md"], 4)
        assert kb.get_content_by_id("text:ferry").name == "ferry"  # type: ignore[union-attr]
        assert kb.get_content_status("text:ferry") == (ContentStatus.COMPLETED, "")
        assert kb.get_content_status("text:nowhere") == (None, "Content not found")
        assert kb.get_content_by_id("text:nowhere") is None

    # a real table, under the name given
    with sqlite3.connect(tmp_path / "contents.db") as con:
        rows = con.execute("SELECT id, status, linked_to FROM kb_contents ORDER BY id").fetchall()
    assert ("text:ferry", "completed", "docs") in rows and len(rows) == 4
    # the Agno db reads the same rows
    stored, count = db.get_knowledge_contents(sort_by="name", sort_order="asc", linked_to="docs")
    assert count == 4 and [r.name for r in stored] == [
        "bakery.txt",
        "broken.txt",
        "ferry",
        "tides.md",
    ]


def test_patch_content_changes_the_row_and_what_searches_filter_on(tmp_path: Path) -> None:
    db = SqliteDb(db_file=str(tmp_path / "contents.db"))
    with knowledge(tmp_path, "docs", db) as kb:
        kb.add_content(text_content="The ferry leaves at nine.", name="ferry", metadata={"y": 1})
        assert kb.search("ferry", filters={"pier": "north"}) == []
        patched = kb.patch_content(
            Content(id="text:ferry", name="Ferry", metadata={"pier": "north"})
        )
        assert patched is not None
        assert (patched["name"], patched["metadata"]) == ("Ferry", {"y": 1, "pier": "north"})
        assert [d.content for d in kb.search("ferry", filters={"pier": "north"})] == [
            "The ferry leaves at nine."
        ]
        assert kb.get_content_by_id("text:ferry").metadata == {"y": 1, "pier": "north"}  # type: ignore[union-attr]
        assert kb.patch_content(Content(id="text:nowhere", name="x")) is None
        with pytest.raises(InvalidInputError) as raised:
            kb.patch_content({"id": "text:ferry"})  # type: ignore[arg-type]
        assert raised.value.errors[0]["path"] == "content"
        with pytest.raises(InvalidInputError) as raised:
            kb.patch_content(Content(name="no id"))
        assert raised.value.errors[0]["path"] == "content.id"


def test_removing_takes_the_rows_of_this_knowledge_base_only(tmp_path: Path) -> None:
    db = SqliteDb(db_file=str(tmp_path / "shared.db"))
    with knowledge(tmp_path, "mine", db) as mine, knowledge(tmp_path, "theirs", db) as theirs:
        mine.add_content(text_content="Rye bread from dawn.", name="bread")
        mine.add_content(text_content="The ferry leaves at nine.", name="ferry")
        theirs.add_content(text_content="Tides turn twice a day.", name="tides")
        assert [c.name for c in theirs.get_content()[0]] == ["tides"]

        assert mine.remove_content_by_id("text:bread") == 1
        assert mine.get_content_by_id("text:bread") is None
        assert [d.name for d in mine.search("bread", max_results=5)] == ["ferry"]
        mine.remove_all_content()
        assert mine.get_content() == ([], 0)
        assert [c.name for c in theirs.get_content()[0]] == ["tides"]


def test_filters_are_the_metadata_keys_of_the_contents(tmp_path: Path) -> None:
    db = SqliteDb(db_file=str(tmp_path / "contents.db"))
    with knowledge(tmp_path, "docs", db) as kb:
        kb.add_content(text_content="Ferry at nine.", name="ferry", metadata={"town": "Holm"})
        kb.add_content(text_content="Bread at dawn.", name="bread", metadata={"year": 1890})
        assert kb.get_valid_filters() == {"town", "year"}
        assert kb.validate_filters({"town": "Holm", "colour": "red"}) == (
            {"town": "Holm"},
            ["colour"],
        )
        kept, invalid = kb.validate_filters([EQ("year", 1890), EQ("colour", "red")])
        assert (kept, invalid) == ([EQ("year", 1890)], ["colour"])


def test_an_async_db_serves_the_async_methods(tmp_path: Path) -> None:
    async def main() -> None:
        db = AsyncSqliteDb(db_file=str(tmp_path / "contents.db"), knowledge_table="contents")
        kb = knowledge(tmp_path, "docs", db)
        try:
            await kb.aadd_content(text_content="Bread at dawn.", name="bread")
            contents, total = await kb.aget_content()
            assert ([c.name for c in contents], total) == (["bread"], 1)
            status = await kb.aget_content_status("text:bread")
            assert status == (ContentStatus.COMPLETED, "")
            assert (await db.get_knowledge_content("text:bread")).linked_to == "docs"  # type: ignore[union-attr]
        finally:
            await kb.aclose()

    asyncio.run(main())


def test_without_a_contents_db_listing_is_refused_naming_it(tmp_path: Path) -> None:
    with knowledge(tmp_path, "docs", None) as kb:
        kb.add_content(text_content="Bread at dawn.", name="bread")  # nothing recorded
        for call in (kb.get_content, lambda: kb.get_content_by_id("text:bread")):
            with pytest.raises(InvalidInputError) as raised:
                call()
            assert raised.value.errors[0]["path"] == "contents_db"
        assert kb.get_valid_filters() == set()
    with pytest.raises(InvalidInputError) as raised:
        Knowledge(contents_db="sqlite:///x.db")
    assert raised.value.errors[0]["path"] == "contents_db"
