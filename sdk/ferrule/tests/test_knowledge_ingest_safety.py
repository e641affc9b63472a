"""Knowledge ingest under hostile input (issue 26): a PDF decompression bomb fails alone and
is parsed off the event loop under bounds; a folder keeps to itself unless told to follow
links out; URL ingest goes only where `http_request`'s address policy allows, on every
redirect hop. Real files, a real sqlite-vec store, the offline embedder, a real loopback
HTTP server."""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from ferrule import Runtime
from ferrule.cli import main
from ferrule.knowledge import Knowledge, ReadLimits
from ferrule.knowledge.vectordb import SqliteVecDb
from ferrule_kernel import InvalidInputError
from ferrule_kit.network.addresses import ALLOW_VARIABLE

TIDES = "# Tides\n\nThe tide turns twice a day at the harbour, and the ferry waits for it.\n"


@pytest.fixture(scope="module")
def rt() -> Iterator[Runtime]:
    with Runtime() as runtime:
        yield runtime


def knowledge_at(rt: Any, path: Path, **options: Any) -> Knowledge:
    return Knowledge(vector_db=SqliteVecDb(db_file=path), runtime=rt, **options)


def pdf_bytes(contents: list[bytes], *, flate: bool = False) -> bytes:
    """A PDF, written byte by byte, whose pages draw these content streams (Flate-encoded
    when ``flate``: the stream bytes are then given already compressed)."""
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, once the pages are numbered
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for stream in contents:
        filters = b" /Filter /FlateDecode" if flate else b""
        objects.append(
            b"<< /Length %d%s >>\nstream\n%s\nendstream" % (len(stream), filters, stream)
        )
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>" % content
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n%s\nendobj\n" % (number, body))
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def text_page(line: str) -> bytes:
    return b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % line.encode("latin-1")


def bomb_pdf() -> bytes:
    """A one-page PDF whose Flate content stream inflates to 256 MiB (of spaces: it would
    read as no text at all, were it read)."""
    packer = zlib.compressobj(9)
    chunk = b" " * 2**20
    packed = b"".join(packer.compress(chunk) for _ in range(256)) + packer.flush()
    return pdf_bytes([packed], flate=True)


def folder_with_bomb(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "tides.md").write_text(TIDES)
    (folder / "bomb.pdf").write_bytes(bomb_pdf())
    return folder


# -- item 2: bad files fail alone, parsed off the loop, under bounds ---------------------------


def test_a_pdf_bomb_fails_alone_and_the_rest_of_the_folder_is_inserted(
    rt: Runtime, tmp_path: Path
) -> None:
    folder = folder_with_bomb(tmp_path)
    kb = knowledge_at(rt, tmp_path / "kb.db")
    result = kb.add_content(path=folder)
    assert result.added == [f"file:{folder.resolve() / 'tides.md'}"]
    [failure] = result.failed
    assert failure.source == str(folder.resolve() / "bomb.pdf")
    assert failure.reason == "unreadable" and "bomb.pdf" in failure.message
    assert kb.search("when does the tide turn?", max_results=1)[0].name == "tides.md"
    kb.close()


def test_a_single_bad_pdf_is_still_a_typed_error_naming_it(rt: Runtime, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(bomb_pdf())
    kb = knowledge_at(rt, tmp_path / "kb.db")
    with pytest.raises(InvalidInputError) as caught:
        kb.add_content(path=bomb)
    assert caught.value.errors[0]["path"] == "path" and "bomb.pdf" in caught.value.message
    kb.close()


def test_pdfs_are_parsed_off_the_event_loop(
    rt: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ferrule.knowledge import readers

    on_loop: list[bool] = []
    parse = readers._pdf_text

    def recording(*args: Any, **kwargs: Any) -> str:
        on_loop.append(rt.sync_bridge.in_loop_thread())  # type: ignore[attr-defined]
        return parse(*args, **kwargs)

    monkeypatch.setattr(readers, "_pdf_text", recording)
    (tmp_path / "one.pdf").write_bytes(pdf_bytes([text_page("The lamp was lit in 1931.")]))
    kb = knowledge_at(rt, tmp_path / "kb.db")
    assert kb.add_content(path=tmp_path / "one.pdf").chunks == 1
    assert on_loop == [False]
    kb.close()


def test_pdf_bounds_are_configurable_and_each_failure_names_its_bound(
    rt: Runtime, tmp_path: Path
) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    pages = [text_page(f"Page {n} of the harbour log.") for n in range(3)]
    (folder / "long.pdf").write_bytes(pdf_bytes(pages))
    (folder / "wordy.pdf").write_bytes(pdf_bytes([text_page("x" * 400)]))
    (folder / "short.pdf").write_bytes(pdf_bytes([text_page("Short note.")]))
    limits = ReadLimits(max_pdf_pages=2, max_pdf_chars=300)
    kb = knowledge_at(rt, tmp_path / "kb.db", limits=limits)
    result = kb.add_content(path=folder)
    assert result.added == [f"file:{folder.resolve() / 'short.pdf'}"]
    reasons = {Path(f.source).name: f.reason for f in result.failed}
    assert reasons == {"long.pdf": "pages", "wordy.pdf": "text_size"}
    # a time bound of zero fails every PDF at its first page, by time
    kb_slow = knowledge_at(rt, tmp_path / "kb2.db", limits=ReadLimits(max_pdf_seconds=0))
    assert {f.reason for f in kb_slow.add_content(path=folder).failed} == {"time"}
    kb.close()
    kb_slow.close()
    for bad in ({"max_pdf_pages": 0}, {"max_pdf_pages": 1.5}, {"max_pdf_seconds": -1}):
        with pytest.raises(InvalidInputError) as caught:
            ReadLimits(**bad)
        assert caught.value.errors[0]["path"] == next(iter(bad))
    with pytest.raises(InvalidInputError) as caught:
        knowledge_at(rt, tmp_path / "kb3.db", limits={"max_pdf_pages": 1})
    assert caught.value.errors[0]["path"] == "limits"


def test_the_cli_reports_a_bad_file_and_adds_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = folder_with_bomb(tmp_path)
    assert main(["knowledge", "add", str(folder), "--db", str(tmp_path / "kb.db")]) == 0
    captured = capsys.readouterr()
    assert "added 1, replaced 0, skipped 0 document(s); 1 chunk(s) written; 1 failed" in (
        captured.out
    )
    assert "failed: " in captured.err and "bomb.pdf" in captured.err
    assert "Traceback" not in captured.err


# -- item 5: a folder keeps to itself ----------------------------------------------------------


def test_a_folder_ingest_does_not_follow_links_out_of_the_folder(
    rt: Runtime, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("The vault code is 4417.")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "notes.txt").write_text("Rye loaves come out of the oven at dawn.")
    (folder / "link.txt").symlink_to(Path("..") / "outside" / "secret.txt")
    (folder / "inner.txt").symlink_to("notes.txt")  # inside the folder: read
    kb = knowledge_at(rt, tmp_path / "kb.db")
    result = kb.add_content(path=folder)
    root = folder.resolve()
    assert sorted(result.added) == [f"file:{root / 'inner.txt'}", f"file:{root / 'notes.txt'}"]
    [failure] = result.failed
    assert failure.source == str(root / "link.txt") and failure.reason == "outside_folder"
    assert all("4417" not in d.content for d in kb.search("vault code", max_results=5))
    followed = kb.add_content(path=folder, follow_symlinks=True)
    assert followed.added == [f"file:{root / 'link.txt'}"] and not followed.failed
    kb.close()


# -- item 6: URL ingest under http_request's address policy ------------------------------------


@pytest.fixture
def server(rt: Runtime) -> Iterator[int]:
    """A loopback server: /guide.md answers Markdown, /hop redirects to 127.0.0.1's
    /guide.md (whatever host name reached it)."""

    port_box: list[int] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.path == "/guide.md":
            return web.Response(text=TIDES, content_type="text/markdown")
        if request.path == "/hop":
            raise web.HTTPFound(f"http://127.0.0.1:{port_box[0]}/guide.md")
        return web.Response(status=404)

    async def serve() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_get("/{tail:.*}", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    bridge = rt.sync_bridge
    runner, port = bridge.run(serve())
    port_box.append(port)
    try:
        yield port
    finally:
        bridge.run(runner.cleanup())


def test_url_ingest_refuses_loopback_by_default(
    rt: Runtime, tmp_path: Path, server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    kb = knowledge_at(rt, tmp_path / "kb.db")
    for url in (f"http://127.0.0.1:{server}/guide.md", f"http://localhost:{server}/guide.md"):
        with pytest.raises(InvalidInputError) as caught:
            kb.add_content(url=url)
        assert caught.value.errors[0]["path"] == "url"
        assert "loopback" in caught.value.message and ALLOW_VARIABLE in caught.value.message
    kb.close()


def test_url_ingest_checks_every_redirect_hop(
    rt: Runtime, tmp_path: Path, server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "localhost")  # the host name, not 127.0.0.1 itself
    kb = knowledge_at(rt, tmp_path / "kb.db")
    assert kb.add_content(url=f"http://localhost:{server}/guide.md").chunks == 1
    with pytest.raises(InvalidInputError) as caught:
        kb.add_content(url=f"http://localhost:{server}/hop")
    assert "127.0.0.1 is a loopback address" in caught.value.message
    kb.close()


def test_url_ingest_is_allowed_where_the_host_allows_it(
    rt: Runtime, tmp_path: Path, server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1, localhost")
    kb = knowledge_at(rt, tmp_path / "kb.db")
    assert kb.add_content(url=f"http://localhost:{server}/hop").added == [
        f"url:http://localhost:{server}/hop"
    ]
    kb.close()


def test_the_cli_adds_a_url_under_the_same_policy(
    tmp_path: Path, server: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ALLOW_VARIABLE, raising=False)
    url = f"http://127.0.0.1:{server}/guide.md"
    args = ["knowledge", "add", url, "--db", str(tmp_path / "kb.db")]
    assert main(args) == 1
    assert "loopback" in capsys.readouterr().err
    monkeypatch.setenv(ALLOW_VARIABLE, "127.0.0.1")
    assert main(args) == 0
    assert "added 1" in capsys.readouterr().out
