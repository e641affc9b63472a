"""Agno's knowledge API on ferrule: `Document` (embedded by the offline MiniLM), the
chunking strategies (cutting with the engine's ``split_text``, a model, or embeddings), the
readers (text, Markdown, PDF page by page and encrypted, CSV, JSON, Word), `ReaderFactory`
and `FileSystemKnowledge` (its tools through an agent, never out of its folder)."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile

import pytest
from ferrule.agent import Agent
from ferrule.knowledge.chunking.agentic import AgenticChunking
from ferrule.knowledge.chunking.code import CodeChunking
from ferrule.knowledge.chunking.document import DocumentChunking
from ferrule.knowledge.chunking.fixed import FixedSizeChunking
from ferrule.knowledge.chunking.markdown import MarkdownChunking
from ferrule.knowledge.chunking.recursive import RecursiveChunking
from ferrule.knowledge.chunking.row import RowChunking
from ferrule.knowledge.chunking.semantic import SemanticChunking, savgol
from ferrule.knowledge.chunking.strategy import ChunkingStrategyFactory, ChunkingStrategyType
from ferrule.knowledge.document import Document
from ferrule.knowledge.embedder import MiniLMEmbedder
from ferrule.knowledge.filesystem import FileSystemKnowledge
from ferrule.knowledge.reader import ReaderFactory
from ferrule.knowledge.reader.csv_reader import CSVReader
from ferrule.knowledge.reader.docx_reader import DocxReader
from ferrule.knowledge.reader.json_reader import JSONReader
from ferrule.knowledge.reader.markdown_reader import MarkdownReader
from ferrule.knowledge.reader.pdf_reader import PDFImageReader, PDFReader
from ferrule.knowledge.reader.text_reader import TextReader
from ferrule.models.openai import OpenAIChat
from ferrule_kernel import InvalidInputError

from .pdfs import pdf_bytes

TEXT = ("The harbour master keeps the lighthouse log. " * 6).strip()


def test_document_is_agnos_and_embeds_with_an_embedder():
    doc = Document("hello there", name="greeting", meta_data={"lang": "en"})
    assert doc.to_dict() == {
        "name": "greeting",
        "meta_data": {"lang": "en"},
        "content": "hello there",
    }
    assert Document.from_json(json.dumps({"content": "x", "id": "1"})).id == "1"
    with pytest.raises(InvalidInputError, match="no field colour"):
        Document.from_dict({"content": "x", "colour": "red"})
    with pytest.raises(InvalidInputError, match="no embedder"):
        doc.embed()
    doc.embed(MiniLMEmbedder())
    assert len(doc.embedding) == 384 and doc.usage["input_tokens"] > 0
    other = Document("hello there", embedder=MiniLMEmbedder())
    asyncio.run(other.async_embed())
    assert other.embedding == pytest.approx(doc.embedding, abs=1e-5)


# -- chunking -----------------------------------------------------------------------------


def test_size_strategies_cut_within_their_size_and_number_the_chunks():
    doc = Document(TEXT + "\n\n" + TEXT, id="d1", name="log", meta_data={"src": "a"})
    for strategy in (FixedSizeChunking(100, 20), RecursiveChunking(100, 10), DocumentChunking(120)):
        chunks = strategy.chunk(doc)
        assert len(chunks) > 2
        assert all(len(c.content) <= strategy.chunk_size for c in chunks)
        assert [c.meta_data["chunk"] for c in chunks] == list(range(1, len(chunks) + 1))
        assert (
            chunks[0].id == "d1_1" and chunks[0].name == "log" and chunks[0].meta_data["src"] == "a"
        )
        assert chunks[0].meta_data["chunk_size"] == len(chunks[0].content)
    fixed = FixedSizeChunking(100, 20).chunk(doc)
    assert fixed[1].content.split()[0] in fixed[0].content  # the overlap
    assert DocumentChunking(5000).chunk(doc) == [doc]  # fits: its own chunk
    with pytest.raises(InvalidInputError, match="overlap"):
        FixedSizeChunking(chunk_size=10, overlap=10)
    assert asyncio.run(RecursiveChunking(100).achunk(doc)) == RecursiveChunking(100).chunk(doc)


def test_markdown_chunking_cuts_at_headings_as_asked():
    md = "# A\nintro\n## B\nbee\n### C\nsee\n# D\ndee\n"
    doc = Document(md)

    def cut(**options):
        return [c.content for c in MarkdownChunking(chunk_size=200, **options).chunk(doc)]

    assert cut() == ["# A\nintro\n\n## B\nbee\n\n### C\nsee\n\n# D\ndee"]
    assert cut(split_on_headings=True) == ["# A\nintro", "## B\nbee", "### C\nsee", "# D\ndee"]
    assert cut(split_on_headings=2) == ["# A\nintro", "## B\nbee\n### C\nsee", "# D\ndee"]
    long = Document("# Title\n" + " ".join(["word"] * 60))
    pieces = MarkdownChunking(chunk_size=80, split_on_headings=True).chunk(long)
    assert len(pieces) > 2 and all(p.content.startswith("# Title\n\n") for p in pieces)
    with pytest.raises(InvalidInputError):
        MarkdownChunking(split_on_headings=7)


def test_row_and_code_chunking():
    rows = RowChunking(skip_header=True).chunk(Document("a,b\n1,   2\n\n3,4", name="t"))
    assert [(r.content, r.meta_data["row_number"], r.id) for r in rows] == [
        ("1, 2", 2, "t_row_2"),
        ("3,4", 4, "t_row_4"),
    ]
    code = (
        "import os\n\n\n# helper\ndef f():\n    return 1\n\n\n"
        "class K:\n    def a(self):\n        pass\n\n    def b(self):\n        pass\n"
    )
    chunks = CodeChunking(chunk_size=40, include_nodes=True).chunk(Document(code))
    assert "".join(c.content for c in chunks) == code  # nothing lost, nothing added
    assert chunks[1].content.startswith("# helper\ndef f():")  # the comment with its function
    assert chunks[1].meta_data["nodes"][0]["name"] == "f"
    assert all("def a" not in c.content or "def b" not in c.content for c in chunks)
    with pytest.raises(InvalidInputError, match="counts characters"):
        CodeChunking(tokenizer="gpt2")
    with pytest.raises(InvalidInputError, match="no setting 'colour'"):
        CodeChunking(chunker_params={"colour": 1})


def test_semantic_chunking_cuts_where_the_subject_turns():
    assert savgol([1.0, 2.0, 3.0, 4.0, 5.0], 5, 2) == pytest.approx([1, 2, 3, 4, 5])
    text = (
        "The cat sat on the mat and purred loudly. Cats love warm places to sleep in. "
        "The stock market fell sharply today on inflation news. Investors sold bank "
        "shares in a hurry. "
    )
    chunks = SemanticChunking(similarity_threshold=0.3, min_characters_per_sentence=10).chunk(
        Document(text)
    )
    contents = [c.content for c in chunks]
    assert len(contents) >= 2
    assert "cat" in contents[0] and "stock" not in contents[0]
    assert "".join(contents).replace(" ", "") == text.replace(" ", "")
    whole = SemanticChunking(similarity_threshold=-1.0).chunk(Document(text))
    assert len(whole) == 1  # nothing below the threshold: one chunk


def test_agentic_chunking_cuts_where_the_model_says(wire):
    wire.says("30", "not a number")
    doc = Document("a" * 25 + " " + "b" * 40)
    chunks = AgenticChunking(model=OpenAIChat(id="gpt-4o"), max_chunk_size=50).chunk(doc)
    assert [c.content for c in chunks] == ["a" * 25 + " bbbb", "b" * 36]
    assert "at most 50 characters" in wire.text_sent(0)


def test_the_factory_makes_a_strategy_by_agnos_name():
    made = ChunkingStrategyFactory.create_strategy(
        ChunkingStrategyType.from_string("FixedSizeChunker"), chunk_size=50, overlap=5
    )
    assert (type(made), made.chunk_size, made.overlap) == (FixedSizeChunking, 50, 5)
    row = ChunkingStrategyFactory.create_strategy(ChunkingStrategyType.ROW_CHUNKER, chunk_size=9)
    assert type(row) is RowChunking
    with pytest.raises(InvalidInputError, match="no chunking strategy"):
        ChunkingStrategyType.from_string("Nope")


# -- readers ------------------------------------------------------------------------------


def test_pdf_reader_reads_page_by_page_and_opens_an_encrypted_one(tmp_path):
    from pypdf import PdfReader, PdfWriter

    path = tmp_path / "report.pdf"
    path.write_bytes(pdf_bytes(["Harbour report", "ships dock", "1"], ["Second page", "2"]))
    pages = PDFReader(chunk=False).read(path)
    assert [(d.name, d.meta_data) for d in pages] == [
        ("report", {"page": 1}),
        ("report", {"page": 2}),
    ]
    assert pages[0].content == "<start page 1>\nHarbour report ships dock\n<end page 1>"
    bare = PDFReader(chunk=False, page_start_numbering_format="", page_end_numbering_format="")
    assert bare.read(path)[1].content == "Second page"
    whole = PDFReader(chunk=False, split_on_pages=False).read(str(path))
    assert len(whole) == 1 and "Second page" in whole[0].content
    locked = PdfWriter(clone_from=PdfReader(path))
    locked.encrypt("s3cret")
    out = io.BytesIO()
    locked.write(out)
    (tmp_path / "locked.pdf").write_bytes(out.getvalue())
    with pytest.raises(InvalidInputError, match="encrypted"):
        PDFReader().read(tmp_path / "locked.pdf")
    assert len(PDFReader(password="s3cret").read(tmp_path / "locked.pdf")) == 2
    assert len(asyncio.run(PDFReader().async_read(tmp_path / "locked.pdf", password="s3cret"))) == 2
    with pytest.raises(InvalidInputError, match="OCR"):
        PDFImageReader()


def test_file_readers_read_paths_and_open_files(tmp_path):
    (tmp_path / "rows.csv").write_text('name,age\nada,36\n"bob, jr",40\n')
    rows = CSVReader().read(tmp_path / "rows.csv")
    assert [r.content for r in rows] == ["name, age", "ada, 36", "bob, jr, 40"]
    paged = asyncio.run(CSVReader(chunk=False).async_read(tmp_path / "rows.csv", page_size=2))
    assert [(p.content, p.meta_data) for p in paged] == [
        ("name, age\nada, 36", {"page": 1}),
        ("bob, jr, 40", {"page": 2}),
    ]
    (tmp_path / "items.json").write_text('[{"a": 1}, {"b": "é"}]')
    items = JSONReader(chunk=False).read(tmp_path / "items.json")
    assert [(i.content, i.meta_data) for i in items] == [
        ('{"a": 1}', {"page": 1}),
        ('{"b": "é"}', {"page": 2}),
    ]
    (tmp_path / "guide.md").write_text("# Guide\nintro\n## Part\nbody\n")
    assert MarkdownReader().read(tmp_path / "guide.md")[0].name == "guide"
    text = TextReader(chunk_size=10).read(io.BytesIO(b"alpha beta gamma delta"), name="n")
    assert [t.content for t in text] == ["alpha beta", "gamma", "delta"]
    with pytest.raises(InvalidInputError, match="no such file"):
        TextReader().read(tmp_path / "missing.txt")
    with pytest.raises(InvalidInputError, match="takes no colour"):
        TextReader(colour="red")


def test_docx_reader_reads_the_paragraphs_with_the_standard_library(tmp_path):
    body = (
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>Hello</w:t></w:r><w:r><w:tab/><w:t>world</w:t></w:r></w:p>"
        "<w:p><w:r><w:t>Second</w:t></w:r></w:p></w:body></w:document>"
    )
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("word/document.xml", body)
    (tmp_path / "memo.docx").write_bytes(archive.getvalue())
    (doc,) = DocxReader().read(tmp_path / "memo.docx")
    assert (doc.name, doc.content) == ("memo", "Hello\tworld\n\nSecond")
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w") as z:
        z.writestr("word/document.xml", '<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>')
    (tmp_path / "bomb.docx").write_bytes(bomb.getvalue())
    with pytest.raises(InvalidInputError, match="document type declaration"):
        DocxReader().read(tmp_path / "bomb.docx")


def test_reader_factory_by_key_extension_and_url():
    assert type(ReaderFactory.get_reader_for_extension(".pdf")) is PDFReader
    assert type(ReaderFactory.get_reader_for_extension(".unknown")) is TextReader
    assert ReaderFactory.create_reader("csv") is ReaderFactory.create_reader("csv")
    assert ReaderFactory.get_reader_class("markdown") is MarkdownReader
    assert (
        type(ReaderFactory.get_reader_for_url("https://example.org/a.md")).__name__ == "URLReader"
    )
    with pytest.raises(InvalidInputError, match="no reader 'youtube'"):
        ReaderFactory.create_reader("youtube")
    ReaderFactory.register_reader(
        "notes", lambda **kw: TextReader(chunk_size=7, **kw), "Notes", "Notes", [".notes"]
    )
    assert ReaderFactory.get_reader_for_extension(".notes").chunk_size == 7
    ReaderFactory.clear_cache()


# -- FileSystemKnowledge -----------------------------------------------------------------


def test_filesystem_knowledge_tools_through_an_agent_and_never_out_of_its_folder(tmp_path, wire):
    base = tmp_path / "docs"
    (base / "sub").mkdir(parents=True)
    (base / "coffee.md").write_text("Coffee is brewed with hot water.\nServe it warm.\n")
    (base / "sub" / "tea.txt").write_text("Tea steeps for three minutes.\n")
    (base / "node_modules").mkdir()
    (base / "node_modules" / "x.md").write_text("water water")
    (tmp_path / "secret.txt").write_text("the host's secret water")
    (base / "link.txt").symlink_to(tmp_path / "secret.txt")
    fs = FileSystemKnowledge(base_dir=str(base))
    assert [d.name for d in fs.retrieve("water")] == ["coffee.md"]
    assert fs.get_file("../secret.txt") == "File not found: ../secret.txt"
    assert fs.get_file("link.txt") == "File not found: link.txt"
    assert "tea.txt" in fs.list_files("*.txt")
    wire.calls("grep_file", query="brew")
    wire.calls("get_file", path="sub/tea.txt")
    wire.says("Brew it with hot water.")
    agent = Agent(
        model=OpenAIChat(id="gpt-4o"), tools=fs.get_tools(), instructions=fs.build_context()
    )
    agent.run("How is coffee made?")
    grep = [m for m in wire.bodies[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert grep.startswith("### coffee.md\nCoffee is brewed")
    read = [m for m in wire.bodies[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert "Tea steeps" in read
    assert "secret" not in json.dumps(wire.bodies)
    with pytest.raises(InvalidInputError, match="no such folder"):
        FileSystemKnowledge(base_dir=str(tmp_path / "none"))
