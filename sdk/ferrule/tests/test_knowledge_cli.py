"""``ferrule knowledge add|search`` on a real sqlite-vec file with the offline embedder."""

from __future__ import annotations

import json
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
    assert capsys.readouterr().err.startswith("error (invalid_input): no such file or folder")
    assert main(["knowledge", "search", "x", "--db", db, "--filter", '{"a": {"$nope": 1}}']) == 1
    assert "error (invalid_input)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["knowledge", "search", "x", "--filter", "[1]"])
    with pytest.raises(SystemExit):
        main(["knowledge", "search", "x", "--db", db, "--embedder", "nonsense"])


def test_the_progress_bar_shows_on_a_terminal_only(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal gets the bar; stdout (a pipe) gets the result alone."""
    import os
    import pty
    import subprocess
    import sys

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join(f"Paragraph {i} about tides and ships." for i in range(40)))
    command = [sys.executable, "-m", "ferrule.cli", "knowledge", "add", str(corpus)]
    command += ["--db", str(tmp_path / "kb.db"), "--chunk-size", "60"]
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
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
    assert b"embedding" in shown and b"/40" in shown


def test_on_a_ferrule_serve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ferrule.server import ServerThread
    from ferrule_kit.storage import STORAGE_DIR_ENV

    monkeypatch.setenv(STORAGE_DIR_ENV, str(tmp_path / "server"))
    notes = tmp_path / "notes.txt"
    notes.write_text("The lighthouse keeper logs every ship that passes.\n")
    with ServerThread() as url:
        assert main(["knowledge", "add", str(notes), "--url", url, "--db", "kb.db"]) == 0
        assert "added 1" in capsys.readouterr().out
        assert main(["knowledge", "search", "ships", "--url", url, "--db", "kb.db"]) == 0
        assert "1. notes.txt" in capsys.readouterr().out
    assert (tmp_path / "server" / "kb.db").exists()
