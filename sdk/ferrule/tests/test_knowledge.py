"""`ferrule.knowledge.Knowledge` on real parts: a sqlite-vec file, the offline MiniLM
embedder, `split_text`, PDFs read by ferrule-document, a loopback HTTP server for URLs,
and the Postgres server with pgvector that the kit's fixture starts."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import attrs
import pytest
from aiohttp import web
from ferrule import Runtime
from ferrule.knowledge import ContentResult, Document, Knowledge
from ferrule.knowledge.chunking import chunk_id
from ferrule.knowledge.embedder import MiniLMEmbedder, OpenAIEmbedder
from ferrule.knowledge.ingest import Chunking, version
from ferrule.knowledge.readers import read_text
from ferrule.knowledge.search import fuse
from ferrule.knowledge.vectordb import PgVector, SqliteVecDb
from ferrule_kernel import InvalidInputError
from ferrule_kit.embeddings.vectors import DimensionMismatchError, VectorStoreUnavailableError
from ferrule_kit.errors import ProviderConnectionError
from ferrule_kit.network.addresses import ALLOW_VARIABLE
from ferrule_kit.testing.postgres import PostgresServer, postgres_server_fixture
from hypothesis import given
from hypothesis import strategies as st

postgres_server = postgres_server_fixture()

HARBOUR = "The harbour master keeps the lighthouse log. Ships dock at pier four after dusk."
BAKERY = "The bakery on Mill Lane opens at dawn and sells rye bread and honey cakes."
LIBRARY = "The town library lends maps of the coast and closes early on Sundays."


@pytest.fixture(scope="module")
def rt() -> Any:
    with Runtime() as runtime:
        yield runtime


def knowledge_at(rt: Any, path: Path, **options: Any) -> Knowledge:
    return Knowledge(vector_db=SqliteVecDb(db_file=path), runtime=rt, **options)


def field_of(error: InvalidInputError) -> str:
    return error.errors[0]["path"]


def count(rt: Any, knowledge: Knowledge, filter: dict[str, Any] | None = None) -> int:
    store = knowledge._store
    assert store is not None
    return int(rt.call_method(store, "count", {"filter": filter})["count"])


def pdf_with_text(pages: list[list[str]]) -> bytes:
    """A PDF whose pages hold these lines in Helvetica, written by pypdf."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    for lines in pages:
        page = writer.add_blank_page(width=612, height=792)
        font = DictionaryObject(
            {
                NameObject("/Type"): NameObject("/Font"),
                NameObject("/Subtype"): NameObject("/Type1"),
                NameObject("/BaseFont"): NameObject("/Helvetica"),
            }
        )
        fonts = DictionaryObject({NameObject("/F1"): writer._add_object(font)})
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): fonts})
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 720 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


# -- inserting from each source --------------------------------------------------------------


def test_text_is_inserted_and_found_by_meaning(rt: Any, tmp_path: Path) -> None:
    kb = knowledge_at(rt, tmp_path / "kb.db")
    first = kb.add_content(text_content=HARBOUR, name="harbour", metadata={"topic": "sea"})
    kb.add_content(text_content=BAKERY, name="bakery", metadata={"topic": "food"})
    kb.add_content(text_content=LIBRARY, name="library", metadata={"topic": "books"})
    assert first == ContentResult(added=["text:harbour"], chunks=1)
    found = kb.search("where do boats moor at night?", max_results=2)
    assert found[0].name == "harbour"
    top = found[0]
    assert isinstance(top, Document)
    assert top.content == HARBOUR
    assert top.content_id == "text:harbour" and top.id == "text:harbour#0"
    assert top.meta_data == {"name": "harbour", "topic": "sea", "chunk": 0}
    assert top.score is not None and top.score > found[1].score  # type: ignore[operator]
    assert top.to_dict() == {"name": "harbour", "meta_data": top.meta_data, "content": HARBOUR}
    assert len(kb.search("bread", max_results=1)) == 1
    kb.close()


def test_markdown_file_is_split_at_headings(rt: Any, tmp_path: Path) -> None:
    sections = [
        f"## {title}\n\n" + " ".join([sentence] * 8)
        for title, sentence in (
            ("Tides", "The tide turns twice a day at the harbour mouth."),
            ("Bread", "Rye loaves come out of the oven before the fishing boats leave."),
            ("Maps", "Charts of the reef are kept in the library's map room."),
        )
    ]
    doc = tmp_path / "guide.md"
    doc.write_text("# Town guide\n\n" + "\n\n".join(sections) + "\n")
    kb = knowledge_at(rt, tmp_path / "kb.db", chunk_size=700, chunk_overlap=0)
    result = kb.add_content(path=doc, metadata={"kind": "guide"})
    assert result.added == [f"file:{doc.resolve()}"]
    assert result.chunks == 3
    texts = [d.content for d in kb.search("oven", max_results=3)]
    # each section is a chunk of its own, its heading first: that is where it was cut
    assert sorted(t.splitlines()[0] for t in texts) == ["# Town guide", "## Bread", "## Maps"]
    assert kb.search("oven", max_results=1)[0].content.startswith("## Bread")
    kb.close()


def test_pdf_is_read_page_by_page(rt: Any, tmp_path: Path) -> None:
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(
        pdf_with_text(
            [
                ["The ferry to the island leaves at nine.", "Tickets are sold on board."],
                ["The lighthouse lamp was converted to electricity in 1931."],
            ]
        )
    )
    kb = knowledge_at(rt, tmp_path / "kb.db")
    result = kb.add_content(path=pdf, name="Ferry manual")
    assert result.added == [f"file:{pdf.resolve()}"] and result.chunks == 1
    top = kb.search("when did the lamp become electric?", max_results=1)[0]
    assert "1931" in top.content and "ferry" in top.content
    assert top.name == "Ferry manual"
    kb.close()


def test_a_pdf_that_is_not_one_names_the_path(rt: Any, tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nthis is no pdf at all")
    kb = knowledge_at(rt, tmp_path / "kb.db")
    with pytest.raises(InvalidInputError) as caught:
        kb.add_content(path=broken)
    assert field_of(caught.value) == "path" and "broken.pdf" in str(caught.value)
    kb.close()


def test_folder_recursive_with_include_and_exclude(rt: Any, tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    (root / "notes" / "deep").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "a.md").write_text("# Harbour\n\n" + HARBOUR)
    (root / "notes" / "b.txt").write_text(BAKERY)
    (root / "notes" / "deep" / "c.md").write_text(LIBRARY)
    (root / "notes" / "draft.md").write_text("an unfinished draft about nothing")
    (root / "notes" / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    (root / ".git" / "config").write_text("[core]")
    kb = knowledge_at(rt, tmp_path / "kb.db")
    result = kb.add_content(path=root, include=["*.md", "*.txt", "*.bin"], exclude=["draft*"])
    added = sorted(Path(d.removeprefix("file:")).name for d in result.added)
    assert added == ["a.md", "b.txt", "c.md"]
    assert result.skipped == [str((root / "notes" / "image.bin").resolve())]  # not text
    names = {d.name for d in kb.search("library maps", max_results=3)}
    assert names == {"a.md", "notes/b.txt", "notes/deep/c.md"}
    kb.close()


def test_add_contents_embeds_many_sources_together(rt: Any, tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_text(HARBOUR)
    kb = knowledge_at(rt, tmp_path / "kb.db", batch_size=2)
    seen: list[tuple[int, int]] = []
    result = kb.add_contents(
        [{"text_content": BAKERY, "name": "bakery", "metadata": {"n": 1}}],
        paths=[tmp_path / "one.txt"],
        text_contents=[LIBRARY],
        metadata={"n": 2},
        progress=lambda done, total: seen.append((done, total)),
    )
    assert len(result.added) == 3 and result.chunks == 3
    # told once the chunks are counted, then after each call of 2 (the two calls run at
    # once: either may finish first)
    assert seen in ([(0, 3), (2, 3), (3, 3)], [(0, 3), (1, 3), (3, 3)])
    assert count(rt, kb, {"n": 2}) == 2
    kb.close()


def test_url_is_fetched_and_inserted(
    rt: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1")  # loopback is refused unless allowed
    pdf = pdf_with_text([["The ferry timetable changes in October."]])

    async def handler(request: web.Request) -> web.Response:
        if request.path == "/guide.md":
            return web.Response(text="# Guide\n\n" + HARBOUR, content_type="text/markdown")
        if request.path == "/timetable":
            return web.Response(body=pdf, content_type="application/pdf")
        return web.Response(status=404)

    async def serve() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/{tail:.*}", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    loop = rt._loop
    runner, port = loop.run(serve())
    try:
        kb = knowledge_at(rt, tmp_path / "kb.db")
        base = f"http://127.0.0.1:{port}"
        assert kb.add_content(url=f"{base}/guide.md").added == [f"url:{base}/guide.md"]
        assert kb.add_content(url=f"{base}/timetable", name="timetable").chunks == 1
        assert kb.search("ferry schedule", max_results=1)[0].name == "timetable"
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(url=f"{base}/missing")
        assert field_of(caught.value) == "url" and "404" in str(caught.value)
        secret = f"http://reader:s3cret@127.0.0.1:{port}"
        # the same document (its id has no password), now named: replaced
        assert kb.add_content(url=f"{secret}/guide.md", name="g").replaced == [
            f"url:{base}/guide.md"
        ]
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(url=f"{secret}/missing")
        assert "s3cret" not in str(caught.value) and "404" in str(caught.value)
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(url=f"http://reader:s3cret@127.0.0.1:{_closed_port()}/x")
        assert "s3cret" not in str(caught.value)
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(url="file:///etc/passwd")
        assert field_of(caught.value) == "url"
        kb.close()
    finally:
        loop.run(runner.cleanup())


# -- replacing, skipping, removing -----------------------------------------------------------


def test_changed_document_replaces_its_chunks_and_unchanged_is_skipped(
    rt: Any, tmp_path: Path
) -> None:
    doc = tmp_path / "log.txt"
    doc.write_text("\n\n".join(f"Entry {i}: " + HARBOUR for i in range(6)))
    kb = knowledge_at(rt, tmp_path / "kb.db", chunk_size=100, chunk_overlap=0)
    first = kb.add_content(path=doc)
    assert first.added and first.chunks == 6
    assert count(rt, kb) == 6
    again = kb.add_content(path=doc)
    assert again == ContentResult(skipped=[f"file:{doc.resolve()}"])
    doc.write_text("Entry 0: the log was rewritten.")
    changed = kb.add_content(path=doc)
    assert changed.replaced == [f"file:{doc.resolve()}"] and changed.chunks == 1
    assert count(rt, kb) == 1  # the five old chunks are gone, none duplicated
    assert "rewritten" in kb.search("log", max_results=5)[0].content
    # metadata is part of the version: new metadata re-inserts
    assert kb.add_content(path=doc, metadata={"v": 2}).replaced
    # reembed=True re-embeds an unchanged document
    assert kb.add_content(path=doc, metadata={"v": 2}, reembed=True).replaced
    assert count(rt, kb) == 1
    kb.close()


def test_a_new_markdown_cut_re_embeds_markdown_documents(
    rt: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How Markdown is cut is part of its version: a knowledge base stored by an older cut
    (heading-only chunks) is re-chunked on the next add, without --force; text is not."""
    from ferrule.knowledge import ingest

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\n## Tides\n\nTwice a day.\n")
    (folder / "notes.txt").write_text(HARBOUR)
    kb = knowledge_at(rt, tmp_path / "kb.db")
    assert len(kb.add_content(path=folder).added) == 2
    monkeypatch.setattr(ingest, "MARKDOWN_CUT", "a later cut")
    again = kb.add_content(path=folder)
    assert again.replaced == [f"file:{(folder / 'guide.md').resolve()}"]
    assert again.skipped == [f"file:{(folder / 'notes.txt').resolve()}"]
    kb.close()


def test_text_by_name_is_replaced_and_removed(rt: Any, tmp_path: Path) -> None:
    kb = knowledge_at(rt, tmp_path / "kb.db")
    kb.add_content(text_content=HARBOUR, name="notes")
    kb.add_content(text_content=BAKERY, name="notes")
    assert [d.content for d in kb.search("anything", max_results=10)] == [BAKERY]
    kb.add_content(text_content=LIBRARY, name="other", metadata={"shelf": "maps"})
    assert kb.remove_vectors_by_metadata({"shelf": "maps"}) == 1
    assert kb.remove_content_by_id("text:notes") == 1
    assert kb.search("anything") == []
    kb.add_content(text_content=LIBRARY, name="other")
    assert kb.remove_vectors_by_name("other") == 1
    kb.add_contents(text_contents=[HARBOUR, BAKERY])
    assert kb.remove_all_content() == 2
    kb.close()


# -- filters ------------------------------------------------------------------------------------


def test_metadata_filters(rt: Any, tmp_path: Path) -> None:
    kb = knowledge_at(rt, tmp_path / "kb.db")
    for name, text, year in (("h", HARBOUR, 1890), ("b", BAKERY, 1950), ("l", LIBRARY, 2001)):
        kb.add_content(text_content=text, name=name, metadata={"year": year, "town": "Esk"})
    names = lambda docs: sorted(d.name for d in docs)  # noqa: E731
    assert names(kb.search("ships", filters={"year": {"$lt": 1960}})) == ["b", "h"]
    assert names(kb.search("ships", filters={"$or": [{"name": "l"}, {"year": 1890}]})) == [
        "h",
        "l",
    ]
    assert kb.search("ships", filters={"town": "Elsewhere"}) == []
    with pytest.raises(InvalidInputError) as caught:
        kb.search("ships", filters={"year": {"$between": [1, 2]}})
    assert "filter.year.$between" in field_of(caught.value)
    kb.close()


def test_keyword_and_hybrid_search_types(rt: Any, tmp_path: Path) -> None:
    rare = "Spare part QX-7734 fits the harbour crane."
    texts = [HARBOUR, BAKERY, LIBRARY, rare]
    by: dict[str, Knowledge] = {}
    for search_type in ("vector", "keyword", "hybrid"):
        vector_db = SqliteVecDb(db_file=tmp_path / "kb.db", search_type=search_type)  # type: ignore[arg-type]
        by[search_type] = Knowledge(vector_db=vector_db, runtime=rt)
    by["vector"].add_contents(text_contents=texts)
    assert by["keyword"].search("rye", max_results=3)[0].content == BAKERY
    assert [d.content for d in by["keyword"].search("QX-7734")] == [rare]
    # the words alone find the part number; fused, it comes first over the nearest meaning
    fused = by["hybrid"].search("QX-7734", max_results=4)
    assert fused[0].content == rare
    assert {d.content for d in fused} == set(texts)
    assert fused[0].score == pytest.approx(1 / 61 + 1 / (61 + _rank(by["vector"], rare)))
    assert [d.name for d in by["hybrid"].search("bread", filters={"name": {"$ne": "x"}})]
    # per search, as Agno's search_type=
    assert by["vector"].search("QX-7734", search_type="hybrid")[0].content == rare
    with pytest.raises(InvalidInputError) as caught:
        by["vector"].search("x", search_type="fuzzy")  # type: ignore[arg-type]
    assert field_of(caught.value) == "search_type"
    for kb in by.values():
        kb.close()
    with pytest.raises(InvalidInputError) as caught:
        SqliteVecDb(search_type="fuzzy")  # type: ignore[arg-type]
    assert field_of(caught.value) == "search_type"


def _rank(kb: Knowledge, text: str) -> int:
    """Where the vector search of "QX-7734" puts ``text`` (0 first)."""
    return [d.content for d in kb.search("QX-7734", max_results=10)].index(text)


@given(
    st.lists(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8), min_size=1, max_size=3)
)
def test_rank_fusion_orders_by_summed_reciprocal_rank(rankings: list[list[str]]) -> None:
    fused = fuse([[{"id": i, "text": i} for i in ranking] for ranking in rankings])
    ids = [m["id"] for m in fused]
    assert sorted(ids) == sorted({i for ranking in rankings for i in ranking})
    expected = {i: sum(1 / (60 + r.index(i) + 1) for r in rankings if i in r) for i in ids}
    assert [m["score"] for m in fused] == sorted(expected.values(), reverse=True)
    assert all(m["score"] == pytest.approx(expected[m["id"]]) for m in fused)


# -- bad input and faults ---------------------------------------------------------------------


def test_bad_input_names_the_field(rt: Any, tmp_path: Path) -> None:
    kb = knowledge_at(rt, tmp_path / "kb.db")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"path": tmp_path / "nope"}, "path"),
        ({}, "path"),
        ({"path": tmp_path, "text_content": "x"}, "text_content"),
        ({"text_content": HARBOUR, "metadata": ["x"]}, "metadata"),
        ({"url": "ftp://example.org/a"}, "url"),
    ]
    for kwargs, field in cases:
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(**kwargs)
        assert field_of(caught.value) == field, kwargs
    with pytest.raises(InvalidInputError) as caught:
        kb.search("   ")
    assert field_of(caught.value) == "query"
    for contents, field in (
        ([{"text_content": "x", "bogus": 1}], "contents[0]"),
        ([{}], "contents[0].path"),
        ([{"path": tmp_path, "url": "http://127.0.0.1/"}], "contents[0].url"),
        (["just a string"], "contents[0]"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            kb.add_contents(contents)  # type: ignore[arg-type]
        assert field_of(caught.value) == field
    for bad in (0, 1001, 2.5):
        with pytest.raises(InvalidInputError) as caught:
            kb.search("ships", max_results=bad)  # type: ignore[arg-type]
        assert field_of(caught.value) == "max_results"
    for options, field in (
        ({"chunk_size": 0}, "chunk_size"),
        ({"chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap"),
        ({"vector_db": 3}, "vector_db"),
        ({"embedder": object()}, "embedder"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            Knowledge(runtime=rt, **options)
        assert field_of(caught.value) == field
    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"\x00\x01\x02")
    with pytest.raises(InvalidInputError) as caught:
        kb.add_content(path=binary)
    assert field_of(caught.value) == "path" and "blob.bin" in str(caught.value)
    kb.close()


def test_dimension_mismatch_is_refused_before_anything_is_written(rt: Any, tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    # the collection exists with 8 dimensions (another embedder's)
    rt.define("sqlite_vec_store", "small", {"path": str(path), "collection": "knowledge"})
    rt.call_method(
        "small",
        "upsert",
        {"chunks": [{"id": "x", "document_id": "x", "text": "old", "vector": [0.5] * 8}]},
    )
    kb = knowledge_at(rt, path)
    with pytest.raises(DimensionMismatchError) as caught:
        kb.add_content(text_content=HARBOUR, name="harbour")
    assert caught.value.details["expected"] == 8 and caught.value.details["got"] == [384]
    assert rt.call_method("small", "count", {})["count"] == 1  # nothing written
    with pytest.raises(DimensionMismatchError):  # again: no component is left behind
        kb.search("ships")
    assert len(kb._owned) == 1  # the embedder, defined once; the refused store is deleted
    rt.delete("small")
    kb.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_store_down_is_one_typed_error_naming_it(rt: Any) -> None:
    secret = "s3cret-pass"
    kb = Knowledge(
        vector_db=PgVector(db_url=f"postgresql://ferrule:{secret}@127.0.0.1:{_closed_port()}/x"),
        runtime=rt,
    )
    with pytest.raises(VectorStoreUnavailableError) as caught:
        kb.add_content(text_content=HARBOUR)
    assert caught.value.details["store"] == "pgvector_store"
    assert secret not in str(caught.value) and secret not in repr(kb)
    kb.close()


def test_embedder_down_is_one_typed_error_naming_it(rt: Any, tmp_path: Path) -> None:
    key = "sk-test-never-shown"
    embedder = OpenAIEmbedder(api_key=key, base_url=f"http://127.0.0.1:{_closed_port()}/v1")
    kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"), embedder=embedder, runtime=rt)
    with pytest.raises(ProviderConnectionError) as caught:
        kb.add_content(text_content=HARBOUR)
    assert "openai" in str(caught.value).lower()
    assert key not in str(caught.value) and key not in repr(embedder)
    kb.close()


KILLED_INSERT = textwrap.dedent(
    """
    import sys
    from ferrule import Runtime
    from ferrule.knowledge import Knowledge
    from ferrule.knowledge.vectordb import SqliteVecDb

    texts = [f"Record {i}: the ship number {i} left the harbour at dawn." for i in range(400)]
    with Runtime() as rt:
        kb = Knowledge(vector_db=SqliteVecDb(db_file=sys.argv[1]), runtime=rt, batch_size=8)
        def progress(done, total):
            print(done, flush=True)
        kb.add_contents(
            [{"text_content": t, "name": f"r{i}"} for i, t in enumerate(texts)],
            progress=progress,
        )
    print("finished", flush=True)
    """
)


def test_sigkill_mid_insert_loses_no_committed_chunk(rt: Any, tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_INSERT, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    deadline = time.monotonic() + 120
    for line in child.stdout:  # wait until some batches are written
        if (line.strip().isdigit() and int(line) >= 40) or time.monotonic() > deadline:
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    kb = knowledge_at(rt, path, batch_size=64)
    kb.sync_bridge.run(kb._ready())
    written = count(rt, kb)
    assert 0 < written < 400, written
    # every stored document is whole and right; adding all again skips exactly those
    texts = [f"Record {i}: the ship number {i} left the harbour at dawn." for i in range(400)]
    result = kb.add_contents([{"text_content": t, "name": f"r{i}"} for i, t in enumerate(texts)])
    assert len(result.skipped) == written and len(result.added) == 400 - written
    assert count(rt, kb) == 400
    top = kb.search("ship number 123", max_results=1)[0]
    assert top.name == "r123"
    kb.close()


# -- pgvector -------------------------------------------------------------------------------------


def test_pgvector_insert_replace_filter(rt: Any, postgres_server: PostgresServer) -> None:
    dsn = postgres_server.create_database()
    url = (
        dsn.replace("postgresql://", "postgresql+psycopg://", 1)
        if dsn.startswith("postgresql://")
        else dsn
    )
    kb = Knowledge(
        vector_db=PgVector(table_name="documents", db_url=url),
        embedder=MiniLMEmbedder(),
        runtime=rt,
    )
    kb.add_content(text_content=HARBOUR, name="harbour", metadata={"year": 1890})
    kb.add_content(text_content=BAKERY, name="bakery", metadata={"year": 1950})
    assert kb.add_content(text_content=BAKERY, name="bakery", metadata={"year": 1950}).skipped
    assert kb.search("where do ships moor?", max_results=1)[0].name == "harbour"
    assert [d.name for d in kb.search("ships", filters={"year": {"$gt": 1900}})] == ["bakery"]
    assert kb.add_content(text_content=LIBRARY, name="bakery").replaced == ["text:bakery"]
    assert count(rt, kb) == 2
    assert kb.search("library maps", search_type="keyword")[0].name == "bakery"
    assert kb.search("pier four", search_type="hybrid")[0].name == "harbour"
    kb.close()


# -- properties -----------------------------------------------------------------------------------


@given(st.text(min_size=1, max_size=600), st.integers(min_value=0, max_value=10**6))
def test_chunk_ids_are_stable_unique_and_fit_the_store(document_id: str, index: int) -> None:
    ident = chunk_id(document_id, index)
    assert ident == chunk_id(document_id, index)
    assert ident != chunk_id(document_id, index + 1)
    assert 1 <= len(ident) <= 512


@given(
    st.text(max_size=300),
    st.text(max_size=300),
    st.dictionaries(st.text(max_size=5), st.integers()),
)
def test_document_versions_change_with_what_they_say(a: str, b: str, meta: dict[str, int]) -> None:
    chunking = Chunking(chunk_size=1000, chunk_overlap=100, batch_size=256)
    first = version(read_text(a, "doc", meta), chunking)
    assert first == version(read_text(a, "doc", dict(meta)), chunking)
    assert (first == version(read_text(b, "doc", meta), chunking)) == (a == b)
    assert version(read_text(a, "doc", {**meta, "extra": 1}), chunking) != first or "extra" in meta
    assert version(read_text(a, "doc", meta), attrs.evolve(chunking, chunk_size=999)) != first


def test_async_api_on_an_async_runtime(tmp_path: Path) -> None:
    from ferrule import AsyncRuntime

    async def main() -> list[str]:
        async with AsyncRuntime() as art:
            kb = Knowledge(vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"), runtime=art)
            await kb.aadd_content(text_content=HARBOUR, name="harbour")
            await kb.add_content_async(text_content=BAKERY, name="bakery")
            found = await kb.asearch("bread", max_results=1)
            with pytest.raises(TypeError, match=r"await Knowledge\.asearch"):
                kb.search("bread")
            await kb.aclose()
            return [d.name or "" for d in found]

    assert asyncio.run(main()) == ["bakery"]


def test_json_metadata_round_trips(rt: Any, tmp_path: Path) -> None:
    kb = knowledge_at(rt, tmp_path / "kb.db")
    meta = {"tags": ["a", "b"], "nested": {"k": 1}, "ok": True}
    kb.add_content(text_content=HARBOUR, name="h", metadata=meta)
    assert json.loads(json.dumps(kb.search("ships")[0].meta_data)) == {
        "name": "h",
        **meta,
        "chunk": 0,
    }
    kb.close()


def test_over_ferrule_serve_the_components_live_on_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ferrule.server import ServerThread
    from ferrule_kit.stores.storage import STORAGE_DIR_ENV

    monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path / "server"))
    with ServerThread() as url, Runtime(url=url) as remote:
        kb = Knowledge(vector_db=SqliteVecDb(store="kb.db"), runtime=remote)
        assert kb.add_content(text_content=HARBOUR, name="harbour").added == ["text:harbour"]
        assert kb.add_content(text_content=HARBOUR, name="harbour").skipped == ["text:harbour"]
        assert kb.search("ships", max_results=1)[0].name == "harbour"
        kb.close()
    assert (tmp_path / "server" / "kb.db").exists()


def test_an_embedder_failing_midway_keeps_what_was_stored(rt: Any, tmp_path: Path) -> None:
    """A loopback OpenAI-compatible embeddings server answers two requests, then refuses:
    the documents of the batches embedded before are stored, whole, and adding again
    finishes the job."""
    from ferrule_kernel import FerruleError

    answered: list[int] = []
    healed = [False]

    async def embeddings(request: web.Request) -> web.Response:
        body = await request.json()
        if len(answered) == 2 and not healed[0]:
            return web.json_response({"error": {"message": "overloaded", "type": "x"}}, status=400)
        answered.append(len(body["input"]))
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(t) % 7 + 1), 1.0] * 4}
            for i, t in enumerate(body["input"])
        ]
        usage = {"prompt_tokens": 1, "total_tokens": 1}
        return web.json_response({"object": "list", "data": data, "model": "m", "usage": usage})

    async def serve() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_post("/v1/embeddings", embeddings)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    runner, port = rt._loop.run(serve())
    try:
        embedder = OpenAIEmbedder(
            enable_batch=True,
            id="text-embedding-3-small",
            dimensions=8,
            api_key="k",
            base_url=f"http://127.0.0.1:{port}/v1",
        )
        kb = Knowledge(
            vector_db=SqliteVecDb(db_file=tmp_path / "kb.db"),
            embedder=embedder,
            runtime=rt,
            batch_size=2,
        )
        texts = [f"Document number {i} about the harbour." for i in range(6)]
        with pytest.raises(FerruleError):
            kb.add_contents(text_contents=texts)
        assert answered == [2, 2] and count(rt, kb) == 4
        healed[0] = True
        result = kb.add_contents(text_contents=texts)
        assert len(result.skipped) == 4 and len(result.added) == 2 and count(rt, kb) == 6
        kb.close()
    finally:
        rt._loop.run(runner.cleanup())


def test_descriptions_map_agnos_names_onto_the_components() -> None:
    """The faces: Agno's arguments become the components' attributes (nothing defined)."""
    openai = OpenAIEmbedder(id="text-embedding-3-large", dimensions=256, api_key="sk-x")
    assert openai.attributes(None) == {
        "model": "text-embedding-3-large",
        "dimensions": 256,
        "api_key": "sk-x",
        "max_batch": 1,  # a text per request, unless enable_batch (Agno's default)
    }
    assert "sk-x" not in repr(openai)
    pg = PgVector(
        table_name="documents", db_url="postgresql+psycopg://u:pw@h:5432/db", embedder=openai
    )
    assert pg.attributes(None) == {"collection": "documents", "dsn": "postgresql://u:pw@h:5432/db"}
    assert "pw" not in repr(pg)
    kb = Knowledge(vector_db=pg, runtime=object())
    assert kb.embedder is openai  # Agno puts the embedder on the vector db
    assert Knowledge(vector_db=pg, embedder=MiniLMEmbedder(), runtime=object()).embedder == (
        MiniLMEmbedder()
    )
    assert SqliteVecDb(store="kb.db").attributes(None) == {
        "collection": "knowledge",
        "db_file": "kb.db",
    }
    with pytest.raises(InvalidInputError) as caught:
        SqliteVecDb(db_file="a.db", store="b.db")
    assert field_of(caught.value) == "db_file"
