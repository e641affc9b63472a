"""Agno's ``agno.utils`` on ferrule: the ``agno`` loggers and ``log_*`` functions, printing a
run (finished or streamed, with its time), downloads from a loopback server, base64 data
and audio written to files, a Fernet key, Claude's MCP server description, and what is
refused by name."""

from __future__ import annotations

import base64
import io
import logging
import subprocess
import sys
import wave

import pytest
from cryptography.fernet import Fernet
from ferrule.agent import Agent
from ferrule.models.openai import OpenAIChat
from ferrule.utils import log
from ferrule.utils.audio import write_audio_to_file, write_wav_audio_to_file
from ferrule.utils.encryption import generate_encryption_key
from ferrule.utils.http import set_default_sync_client
from ferrule.utils.media import (
    download_audio,
    download_file,
    download_image,
    download_knowledge_filters_sample_data,
    save_base64_data,
)
from ferrule.utils.models.claude import MCPServerConfiguration
from ferrule.utils.pprint import apprint_run_response, pprint_run_response
from ferrule_kernel import InvalidInputError
from ferrule_kit.testing.loopback import LoopbackServer, Reply
from rich.console import Console


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def recorded():
    handler = Recorder()
    log.agent_logger.addHandler(handler)
    yield handler.records
    log.agent_logger.removeHandler(handler)
    log.set_log_level_to_info()
    log.set_log_tracebacks(False)
    log.use_agent_logger()


SETUP = """
import logging
from ferrule.utils import log
(handler,) = [h for h in log.agent_logger.handlers if isinstance(h, log.ColoredRichHandler)]
print(log.logger is log.agent_logger, type(log.logger) is log.AgnoLogger, log.logger.name,
      log.logger.propagate, log.logger.level == logging.INFO, handler.source_type,
      log.team_logger.name, log.workflow_logger.name, logging.getLogger().handlers == [])
"""


def test_the_agno_loggers_are_built_once_and_leave_the_root_logger_alone():
    # A fresh interpreter: in this one the agno package (a client test's) may have made
    # the "agno" logger first, and ferrule then shares it (the next test).
    ran = subprocess.run([sys.executable, "-c", SETUP], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == [
        "True",
        "True",
        "agno",
        "False",
        "True",
        "agent",
        "agno-team",
        "agno-workflow",
        "True",
    ]


def test_a_logger_named_agno_made_first_is_shared_and_written_plainly(recorded, monkeypatch):
    class TheirLogger(logging.Logger):  # as Agno's: info(msg, center, symbol, *args)
        def info(self, msg, center=False, symbol="*", *args, **kwargs):  # type: ignore[override]
            super().info(f"theirs {msg}", *args, **kwargs)

    theirs = TheirLogger("agno-elsewhere")
    seen = Recorder()
    theirs.addHandler(seen)
    theirs.setLevel(logging.INFO)
    monkeypatch.setattr(log, "logger", theirs)
    log.log_info("loaded %d documents", False, "*", 3)
    log.log_info("Title", center=True, symbol="=")
    assert seen.records[0].getMessage() == "loaded 3 documents"
    assert seen.records[1].getMessage().strip("=").strip() == "Title"


def test_the_agno_loggers_write_what_their_level_lets_through(recorded):
    assert log.logger is log.agent_logger and log.logger.name == "agno"
    log.log_info("loaded %d documents", False, "*", 3)
    log.log_debug("hidden")
    log.set_log_level_to_debug(level=1)
    log.log_debug("shown")
    log.log_debug("too deep", log_level=2)
    log.log_info("Title", center=True, symbol="=")
    assert [r.getMessage() for r in recorded][:2] == ["loaded 3 documents", "shown"]
    assert recorded[2].getMessage().strip("=").strip() == "Title"
    assert recorded[2].getMessage().startswith("=")


def test_tracebacks_and_custom_loggers(recorded):
    try:
        raise ValueError("boom")
    except ValueError:
        log.log_warning("quiet")
        log.set_log_tracebacks(True)
        log.log_error("loud")
    assert recorded[0].exc_info is None and recorded[1].exc_info[0] is ValueError
    mine = logging.getLogger("my-app")
    captured = Recorder()
    mine.addHandler(captured)
    mine.setLevel(logging.INFO)
    log.configure_agno_logging(custom_default_logger=mine)
    log.log_info("to mine", center=True)
    assert captured.records[0].getMessage().strip("*").strip() == "to mine"
    mine.removeHandler(captured)


def test_pprint_prints_a_run_and_a_stream_with_its_time(wire):
    wire.says("Hello **there**")
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    console = Console(record=True, width=80)
    pprint_run_response(agent.run("hi"), console=console)
    assert "Hello **there**" in console.export_text()
    wire.says("Streamed reply")
    console = Console(record=True, width=80)
    pprint_run_response(agent.run("hi", stream=True), show_time=True, console=console)
    shown = console.export_text()
    assert "Streamed reply" in shown and "Response" in shown and "s)" in shown
    with pytest.raises(InvalidInputError):
        pprint_run_response(42)


async def test_apprint_prints_an_async_stream(wire):
    wire.says("Async reply")
    agent = Agent(model=OpenAIChat(id="gpt-4o"))
    console = Console(record=True, width=80)
    await apprint_run_response(agent.arun("hi", stream=True), markdown=True, console=console)
    assert "Async reply" in console.export_text()


def test_downloads_stream_to_files(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 20000
    with LoopbackServer() as server:
        server.script(
            Reply(body=(png,), content_type="image/png"),
            Reply(body=(b"<html></html>",), content_type="text/html"),
            Reply(body=(b"RIFF....",), content_type="audio/wav"),
            Reply(body=(b"a,b\n1,2\n",), content_type="text/csv"),
        )
        assert download_image(f"{server.url}/cat.png", str(tmp_path / "img" / "cat.png"))
        assert not download_image(f"{server.url}/page", str(tmp_path / "page.png"))
        assert download_audio(f"{server.url}/a.wav", str(tmp_path / "a.wav")).endswith("a.wav")
        download_file(f"{server.url}/d.csv", str(tmp_path / "d" / "d.csv"))
    assert (tmp_path / "img" / "cat.png").read_bytes() == png
    assert not (tmp_path / "page.png").exists()
    assert (tmp_path / "d" / "d.csv").read_text() == "a,b\n1,2\n"
    with pytest.raises(InvalidInputError, match="http"):
        download_file("file:///etc/passwd", str(tmp_path / "x"))


def test_base64_data_audio_and_keys(tmp_path):
    assert save_base64_data(base64.b64encode(b"data").decode(), str(tmp_path / "b" / "x.bin"))
    assert (tmp_path / "b" / "x.bin").read_bytes() == b"data"
    write_audio_to_file(base64.b64encode(b"RIFFwave").decode(), str(tmp_path / "s" / "a.wav"))
    assert (tmp_path / "s" / "a.wav").read_bytes() == b"RIFFwave"
    pcm = b"\x00\x01" * 2400
    write_wav_audio_to_file(str(tmp_path / "pcm.wav"), pcm, rate=24000)
    with wave.open(str(tmp_path / "pcm.wav")) as wav:
        assert (wav.getnchannels(), wav.getframerate(), wav.readframes(2400)) == (1, 24000, pcm)
    key = generate_encryption_key()
    assert len(key) == 44 and key != generate_encryption_key()
    assert Fernet(key).decrypt(Fernet(key).encrypt(b"secret")) == b"secret"
    server = MCPServerConfiguration(type="url", url="https://mcp.example/sse", name="docs")
    assert server.to_dict() == {"type": "url", "url": "https://mcp.example/sse", "name": "docs"}
    assert "token" not in repr(MCPServerConfiguration("url", "u", "n", authorization_token="token"))


def test_what_utils_refuses_names_the_way():
    with pytest.raises(InvalidInputError, match="own HTTP client"):
        set_default_sync_client(io.BytesIO())
    with pytest.raises(InvalidInputError, match="Agno's servers"):
        download_knowledge_filters_sample_data()
