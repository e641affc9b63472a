"""DocumentContent: type sniffing, limits, files; the document part type in the registry
(wire shape, errors naming fields, text extraction); and documents reaching every
provider's wire, a local model's prompt and an agent's ``files=`` (the providers are
installed by the test extra, never imported)."""

from __future__ import annotations

import base64

import pytest
from ferrule import Agent, APIModel, AsyncRuntime, Runtime
from ferrule_document import DocumentContent, DocumentPart, sniff_document_mime
from ferrule_kernel import InvalidInputError
from ferrule_kit.content.messages import Message, Part, TextPart
from ferrule_kit.content.parts import registry
from ferrule_kit.errors import UnsupportedContentError
from ferrule_kit.models.qwen3 import render_prompt
from ferrule_kit.testing import ScriptedTurn
from ferrule_kit.testing import chat_completions as chat_wire
from ferrule_kit.testing.dialects import PROVIDERS, send
from ferrule_kit.testing.loopback import LoopbackServer
from hypothesis import given
from hypothesis import strategies as st


def pdf_bytes(*pages: str) -> bytes:
    """A PDF with one line of Helvetica text per page, written object by object."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(len(pages)))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    font = 3 + 2 * len(pages)
    for i, text in enumerate(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents {4 + 2 * i} 0 R "
            f"/Resources << /Font << /F1 {font} 0 R >> >> >>".encode()
        )
        stream = f"BT /F1 12 Tf 20 72 Td ({text}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


PDF = pdf_bytes("Quarterly report", "Revenue grew")


def wire(part: DocumentPart) -> dict:
    return Message("user", [part]).to_dict()["content"][0]


# -- building documents -------------------------------------------------------------------


def test_from_bytes_sniffs_pdf_and_text():
    pdf = DocumentContent.from_bytes(PDF, filename="q3.pdf")
    assert (pdf.mime_type, pdf.filename, pdf.to_bytes()) == ("application/pdf", "q3.pdf", PDF)
    text = DocumentContent.from_bytes("Notes: café".encode(), "text/plain")
    assert (text.mime_type, text.filename, text.text()) == ("text/plain", None, "Notes: café")
    assert DocumentContent.from_text("hi", filename="a.txt") == DocumentPart(
        data=base64.b64encode(b"hi").decode(), mime_type="text/plain", filename="a.txt"
    )


@pytest.mark.parametrize(
    ("kwargs", "path", "words"),
    [
        ({"data": b""}, "data", "empty"),
        ({"data": "text"}, "data", "expected bytes"),
        ({"data": b"\x89PNG\r\n\x1a\n\x00"}, "data", "not a PDF or UTF-8 text"),
        ({"data": "é".encode("latin-1")}, "data", "not a PDF or UTF-8 text"),
        ({"data": PDF, "mime_type": "text/plain"}, "mime_type", "the bytes are application/pdf"),
        ({"data": PDF, "max_bytes": 10}, "data", "the limit is"),
    ],
)
def test_bad_bytes_name_the_field(kwargs, path, words):
    with pytest.raises(InvalidInputError, match=words) as info:
        DocumentContent.from_bytes(**kwargs)
    assert info.value.errors[0]["path"] == path


def test_from_path_keeps_the_file_name(tmp_path):
    path = tmp_path / "report.dat"  # the name does not decide the type
    path.write_bytes(PDF)
    assert DocumentContent.from_path(path) == DocumentContent.from_bytes(PDF, filename="report.dat")
    with pytest.raises(InvalidInputError, match="cannot read") as info:
        DocumentContent.from_path(tmp_path / "missing.pdf")
    assert info.value.errors[0]["path"] == "path"


def test_sniffing():
    assert sniff_document_mime(PDF) == "application/pdf"
    assert sniff_document_mime(b"plain") == "text/plain"
    assert sniff_document_mime("x".encode("utf-16")) is None


def test_a_pdfs_text_is_extracted_page_after_page():
    assert DocumentContent.from_bytes(PDF).text() == "Quarterly report\n\nRevenue grew"
    broken = DocumentPart(
        data=base64.b64encode(b"%PDF-1.4 broken").decode(), mime_type="application/pdf"
    )
    with pytest.raises(InvalidInputError, match="cannot read the PDF"):
        broken.text()


def test_text_extraction_is_bounded_and_each_refusal_names_its_bound():
    three = DocumentContent.from_bytes(pdf_bytes("one", "two", "three"), filename="log.pdf")
    assert three.text(max_pages=3, max_chars=11, max_seconds=60) == "one\n\ntwo\n\nthree"
    for bounds, reason, words in (
        ({"max_pages": 2}, "pages", "log.pdf has 3 pages; the limit is 2"),
        ({"max_chars": 5}, "text_size", "log.pdf holds over 5 characters of text (at page 2)"),
        ({"max_seconds": 0}, "time", "log.pdf took over 0 s to read (at page 1)"),
    ):
        with pytest.raises(InvalidInputError) as caught:
            three.text(**bounds)
        assert caught.value.details["reason"] == reason and words in caught.value.message


def test_a_decompression_bomb_is_a_typed_error_not_pypdfs():
    import zlib

    packer = zlib.compressobj(9)
    packed = b"".join(packer.compress(b" " * 2**20) for _ in range(128)) + packer.flush()
    page = b"BT /F1 12 Tf 20 72 Td (x) Tj ET"
    pdf = pdf_bytes("x").replace(
        b"<< /Length %d >>\nstream\n%s" % (len(page), page),
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s" % (len(packed), packed),
    )
    assert b"FlateDecode" in pdf  # the xref offsets are off now: pypdf recovers them
    with pytest.raises(InvalidInputError) as caught:
        DocumentContent.from_bytes(pdf, filename="bomb.pdf").text()
    assert caught.value.details["reason"] == "unreadable"
    assert "bomb.pdf" in caught.value.message and "LimitReachedError" in caught.value.message


# -- the part type -------------------------------------------------------------------------


def test_the_plugin_registers_the_document_part_type():
    assert registry.source("document") == "ferrule-document"
    assert Part.Document is DocumentPart
    import ferrule

    assert ferrule.DocumentContent is DocumentContent and ferrule.DocumentPart is DocumentPart


def test_the_wire_shape_is_openais_file_part():
    part = DocumentContent.from_bytes(PDF, filename="q3.pdf")
    assert wire(part) == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64," + part.data, "filename": "q3.pdf"},
    }


@given(
    st.one_of(
        st.binary(max_size=200).map(lambda b: b"%PDF-" + b),
        st.text(min_size=1, max_size=200).map(str.encode).filter(lambda b: b"\x00" not in b),
    ),
    st.none() | st.text(min_size=1, max_size=20),
)
def test_documents_round_trip_through_the_wire(data, filename):
    part = DocumentContent.from_bytes(data, filename=filename)
    message = Message(role="user", contents=[TextPart("read"), part])
    assert Message.from_dict(message.to_dict()) == message


@pytest.mark.parametrize(
    ("file", "path", "words"),
    [
        ({}, "$.content[0].file.file_data", "required field missing"),
        ({"file_data": "data:application/pdf,abc"}, "$.content[0].file.file_data", "base64"),
        (
            {"file_data": "data:image/png;base64,AAAA"},
            "$.content[0].file.file_data",
            "PDF or plain text",
        ),
        ({"file_id": "file-abc"}, "$.content[0].file.file_id", "not supported"),
        (
            {"file_data": "data:text/plain;base64,aGk=", "filename": 3},
            "$.content[0].file.filename",
            "expected string",
        ),
        ({"file_data": "data:text/plain;base64,aGk=", "x": 1}, "$.content[0].file.x", "unknown"),
    ],
)
def test_bad_wire_documents_name_the_field(file, path, words):
    with pytest.raises(InvalidInputError) as info:
        Message.from_dict({"role": "user", "content": [{"type": "file", "file": file}]})
    assert [(e["path"], words in e["message"]) for e in info.value.errors] == [(path, True)]


# -- every provider's wire -----------------------------------------------------------------

PDF_TEXT = '<document name="q3.pdf">\nQuarterly report\n\nRevenue grew\n</document>'
NOTES_TEXT = '<document name="notes.txt">\nBuy milk\n</document>'


def expected(provider: str, pdf: DocumentPart, notes: DocumentPart) -> list:
    """How each provider's wire carries the PDF and the text file."""
    if provider == "openai":
        file = {"filename": "q3.pdf", "file_data": pdf.data_url}
        return [{"type": "file", "file": file}, {"type": "text", "text": NOTES_TEXT}]
    if provider in ("openai-compatible", "xai"):
        return [{"type": "text", "text": PDF_TEXT}, {"type": "text", "text": NOTES_TEXT}]
    if provider == "anthropic":
        return [
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": pdf.data},
                "title": "q3.pdf",
            },
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "Buy milk"},
                "title": "notes.txt",
            },
        ]
    return [
        {"inlineData": {"mimeType": "application/pdf", "data": pdf.data}},
        {"inlineData": {"mimeType": "text/plain", "data": notes.data}},
    ]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)
async def test_documents_reach_every_provider(provider, monkeypatch):
    pdf = DocumentContent.from_bytes(PDF, filename="q3.pdf")
    notes = DocumentContent.from_text("Buy milk", filename="notes.txt")
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        sent = await send(rt, server, provider, [wire(pdf), wire(notes)], monkeypatch)
    assert sent == expected(provider.name, pdf, notes)


async def test_a_scanned_pdf_is_refused_where_only_text_goes(monkeypatch):
    compatible = next(p for p in PROVIDERS if p.name == "openai-compatible")
    scan = DocumentContent.from_bytes(pdf_bytes(""), filename="scan.pdf")
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        with pytest.raises(UnsupportedContentError, match="no text layer") as info:
            await send(rt, server, compatible, [wire(scan)], monkeypatch)
    assert info.value.details["content_type"] == "document"
    assert info.value.errors[0]["path"] == "$.messages[0].content[0]"
    assert server.requests == []


async def test_size_limits_are_each_providers(monkeypatch):
    anthropic = next(p for p in PROVIDERS if p.name == "anthropic")
    big = DocumentContent.from_bytes(b"%PDF-" + b"0" * (32 * 2**20), max_bytes=33 * 2**20)
    async with LoopbackServer() as server, AsyncRuntime() as rt:
        with pytest.raises(UnsupportedContentError, match="up to 32 MB"):
            await send(rt, server, anthropic, [wire(big)], monkeypatch)
    assert server.requests == []


def test_local_models_read_the_text():
    message = Message("user", ["Summarise:", DocumentContent.from_bytes(PDF, filename="q3.pdf")])
    assert f"<|im_start|>user\nSummarise:\n\n{PDF_TEXT}<|im_end|>" in render_prompt([message])


def test_an_agent_takes_files(tmp_path, monkeypatch):
    """``Agent.query(..., files=[...])``: paths are read as documents (this plugin adapts
    paths), parts go as they are; they reach the model after the prompt."""
    (tmp_path / "q3.pdf").write_bytes(PDF)
    notes = DocumentContent.from_text("Buy milk", filename="notes.txt")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with LoopbackServer() as server, Runtime() as rt:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        server.script(chat_wire.reply(ScriptedTurn(text=("Revenue grew.",))))
        with Agent(rt, APIModel("gpt-4o")) as agent:
            answer = "".join(
                r.content for r in agent.query("Summarise.", files=[tmp_path / "q3.pdf", notes])
            )
    assert answer == "Revenue grew."
    content = server.requests[0].json["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "Summarise."}
    assert content[1]["type"] == "file" and content[1]["file"]["filename"] == "q3.pdf"
    assert content[2] == {"type": "text", "text": NOTES_TEXT}


def test_files_must_be_paths_or_parts(tmp_path):
    from ferrule.agent import prompt_parts

    with pytest.raises(InvalidInputError) as info:
        prompt_parts("Summarise.", [3])
    assert info.value.errors[0]["path"] == "files[0]"
    with pytest.raises(InvalidInputError, match="cannot read") as missing:
        prompt_parts("Summarise.", [DocumentContent.from_text("x"), tmp_path / "missing.pdf"])
    assert missing.value.errors[0]["path"] == "files[1].path"
    with pytest.raises(InvalidInputError, match="one on its own"):
        prompt_parts("Summarise.", "report.pdf")
