"""``ferrule knowledge add|search`` on a real sqlite-vec file with the offline embedder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ferrule.cli import main


def test_add_then_search(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "tides.md").write_text("# Tides\n\nThe tide turns twice a day at the harbour.\n")
    (corpus / "bread.txt").write_text("Rye loaves come out of the oven at dawn.\n")
    (corpus / "skip.log").write_text("a log line\n")
    db = str(tmp_path / "kb.db")
    args = ["knowledge", "add", str(corpus), "--db", db, "--exclude", "*.log"]
    assert main([*args, "--metadata", '{"source": "notes"}']) == 0
    assert "added 2, replaced 0, skipped 0 document(s); 2 chunk(s)" in capsys.readouterr().out
    assert main([*args, "--metadata", '{"source": "notes"}']) == 0  # unchanged: skipped
    assert "added 0, replaced 0, skipped 2" in capsys.readouterr().out
    assert main(["knowledge", "search", "when is bread baked?", "--db", db, "--top-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. bread.txt (score ") and "Rye loaves" in out
    query = ["knowledge", "search", "tide", "--db", db, "--json"]
    assert main([*query, "--filter", '{"source": "notes"}']) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and rows[0]["name"] == "tides.md"
    assert rows[0]["meta_data"] == {"name": "tides.md", "source": "notes", "chunk": 0}
    assert main([*query, "--filter", '{"source": "elsewhere"}']) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert main(["knowledge", "search", "rye", "--db", db, "--keyword", "--top-k", "1"]) == 0
    assert "bread.txt" in capsys.readouterr().out


def test_errors_are_one_line_and_typed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "kb.db")
    assert main(["knowledge", "add", str(tmp_path / "missing"), "--db", db]) == 1
    progress, error = capsys.readouterr().err.splitlines()  # stderr is no terminal here
    assert progress == f"knowledge add: reading {tmp_path / 'missing'}"
    assert error.startswith("error (invalid_input): no such file or folder")
    assert main(["knowledge", "search", "x", "--db", db, "--filter", '{"a": {"$nope": 1}}']) == 1
    assert "error (invalid_input)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["knowledge", "search", "x", "--filter", "[1]"])
    with pytest.raises(SystemExit):
        main(["knowledge", "search", "x", "--db", db, "--embedder", "nonsense"])


def test_the_progress_bar_shows_on_a_terminal_only(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal gets the bar, from reading on; stdout (a pipe) gets the
    result alone."""
    import os
    import pty
    import subprocess
    import sys

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"Paragraph {i} about tides and ships." for i in range(40)))
    command = [sys.executable, "-m", "ferrule.cli", "knowledge", "add", str(corpus)]
    command += ["--db", str(tmp_path / "kb.db"), "--chunk-size", "60"]
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        shown += data
    out, _ = child.communicate(timeout=300)
    os.close(leader)
    assert child.returncode == 0
    assert out.decode().strip() == "added 1, replaced 0, skipped 0 document(s); 40 chunk(s) written"
    assert b"reading " in shown and b"embedding 1 document(s)" in shown
    assert b"/40" in shown and b"chunks" in shown
    assert b"knowledge add:" not in shown  # no plain lines on a terminal


def test_the_bar_moves_after_each_embedder_call() -> None:
    import io

    from ferrule.cli.knowledge import IngestDisplay
    from ferrule.knowledge import IngestProgress
    from rich.console import Console

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    display = IngestDisplay(console, "docs/", every=5.0)
    for done in (0, 32, 64):
        display.update(IngestProgress(documents=3, chunks=70, embedded=done))
        display.bar.refresh()
    display.close(finished=True)
    drawn = screen.getvalue()
    assert "reading docs/" in drawn and "embedding 3 document(s)" in drawn
    assert "0/70" in drawn and "32/70" in drawn and "64/70" in drawn and "chunks" in drawn
    assert "/s" in drawn  # the rate, once chunks are embedded


def test_off_a_terminal_progress_is_plain_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"Paragraph {i} about tides and ships." for i in range(70)))
    args = ["knowledge", "add", str(corpus), "--db", str(tmp_path / "kb.db")]
    args += ["--chunk-size", "60", "--progress-every", "0"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().endswith("70 chunk(s) written")
    lines = captured.err.splitlines()
    assert lines[0] == f"knowledge add: reading {corpus}"
    assert lines[1] == "knowledge add: embedding 70 chunk(s) of 1 document(s)"
    # after each embedder call (16 chunks) but the last: chunks, documents, rate, time left
    middle = [re.fullmatch(PLAIN_LINE, line) for line in lines[2:-1]]
    assert all(middle) and len(middle) == 4  # 5 calls: 16, 16, 16, 16 and 6 chunks
    done = [int(m.group(1)) for m in middle if m]
    assert done == sorted(set(done)) and done[-1] < 70
    assert re.fullmatch(
        r"knowledge add: 70 chunk\(s\) embedded in \d+:\d\d \([\d.]+ chunks/s\)", lines[-1]
    )
    assert main(args) == 0  # unchanged: nothing to embed
    assert capsys.readouterr().err.splitlines()[1:] == [
        "knowledge add: nothing to embed (1 unchanged, skipped)"
    ]


PLAIN_LINE = (
    r"knowledge add: (\d+)/70 chunks embedded \(\d+%\), 0/1 documents stored, "
    r"[\d.]+ chunks/s, about \d+:\d\d left"
)


def test_on_a_ferrule_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ferrule.server import ServerThread
    from ferrule_kit.stores.storage import STORAGE_DIR_ENV

    monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path / "server"))
    notes = tmp_path / "notes.txt"
    notes.write_text("The lighthouse keeper logs every ship that passes.\n")
    with ServerThread() as url:
        assert main(["knowledge", "add", str(notes), "--url", url, "--db", "kb.db"]) == 0
        assert "added 1" in capsys.readouterr().out
        assert main(["knowledge", "search", "ships", "--url", url, "--db", "kb.db"]) == 0
        assert "1. notes.txt" in capsys.readouterr().out
    assert (tmp_path / "server" / "kb.db").exists()
