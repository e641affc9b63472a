"""`ferrule serve` itself: the command as a real subprocess, its safety rules, the raw
kernel protocol (docs/serve.md), and what a client sees when the server goes away."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import aiohttp
import pytest
from ferrule import Runtime
from ferrule.remote import RemoteError, UnauthorizedError
from ferrule.server import ServerThread, check_bind, is_loopback
from ferrule_kernel import FerruleError, InvalidInputError, UnknownOperatorError

pytestmark = pytest.mark.timeout(60)

PLUGIN_MODULE = '''
"""A plugin for `ferrule serve --plugin serve_fixture:plugin` (a test of the command)."""
import asyncio
import attrs
from pathlib import Path
from ferrule_kernel import ComponentTypeSpec, MethodSpec, OperatorSpec, hookimpl


@attrs.frozen
class Text:
    text: str


@attrs.frozen
class Marker:
    path: str


def reverse(inputs: Text) -> dict:
    return {"text": inputs.text[::-1]}


async def forever(inputs: Text):
    while True:
        yield {"text": inputs.text}
        await asyncio.sleep(0.01)


class Closer:
    """Writes its marker file when closed: proves a stopped server closed its components."""

    def __init__(self, attributes: Marker) -> None:
        self.path = Path(attributes.path)

    def touch(self, inputs: Text) -> dict:
        return {"text": inputs.text}

    def close(self) -> None:
        self.path.write_text("closed")


class Plugin:
    @hookimpl
    def ferrule_register_operators(self):
        return [
            OperatorSpec("reverse", reverse, Text),
            OperatorSpec("forever", forever, Text, streaming=True),
        ]

    @hookimpl
    def ferrule_register_component_types(self):
        return [ComponentTypeSpec("closer", Closer, Marker, (MethodSpec("touch", Text),))]


plugin = Plugin()
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("serve_plugin")
    (folder / "serve_fixture.py").write_text(textwrap.dedent(PLUGIN_MODULE))
    return folder


def start_serve(plugin_path: Path, *args: str, env: dict[str, str] | None = None):
    environment = {k: v for k, v in os.environ.items() if k != "FERRULE_TOKEN"}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(plugin_path), os.environ.get("PYTHONPATH", "")]
    )
    environment.update(env or {})
    command = [sys.executable, "-m", "ferrule.cli", "serve", "--port", "0", *args]
    return subprocess.Popen(
        command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def listening(process: subprocess.Popen) -> str:
    """The line the command prints once it listens."""
    line = process.stdout.readline()
    assert "listening on" in line, line + process.stderr.read()
    return line


def url_of(process: subprocess.Popen) -> str:
    return listening(process).split("listening on ")[1].split()[0]


def stop(process: subprocess.Popen) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(timeout=20)


# -- the command ---------------------------------------------------------------------


def test_the_command_serves_the_kernel_and_stops_cleanly_on_sigterm(plugin_path, tmp_path):
    process = start_serve(plugin_path, "--plugin", "serve_fixture:plugin")
    try:
        url = url_of(process)
        assert url.startswith("http://127.0.0.1:")
        rt = Runtime(url=url)
        assert rt.call("reverse", {"text": "abc"}) == {"text": "cba"}
        assert rt.call("echo", {"text": "installed plugins too"}) == {
            "text": "installed plugins too"
        }
        marker = tmp_path / "closed.txt"
        rt.define("closer", "c", {"path": str(marker)})
        assert rt.call_method("c", "touch", {"text": "x"}) == {"text": "x"}
        # leave it defined: the server's shutdown must close it
        rt._core.engine.transport.names.clear()
        rt.stop()
    finally:
        code = stop(process)
    assert code == 0
    assert marker.read_text() == "closed"


def test_the_command_takes_its_token_from_the_environment(plugin_path):
    process = start_serve(plugin_path, env={"FERRULE_TOKEN": "env-token-123"})
    try:
        line = listening(process)
        assert line.rstrip().endswith("with a bearer token")
        url = line.split("listening on ")[1].split()[0]
        with Runtime(url=url) as anonymous, pytest.raises(UnauthorizedError):
            anonymous.call("echo", {"text": "x"})
        with Runtime(url=url, token="env-token-123") as rt:
            assert rt.call("echo", {"text": "x"}) == {"text": "x"}
    finally:
        stop(process)


def test_the_command_refuses_a_public_address_without_a_token(plugin_path):
    process = start_serve(plugin_path, "--host", "0.0.0.0")
    assert process.wait(timeout=30) == 2
    error = process.stderr.read()
    assert "refusing to serve on '0.0.0.0' without a token" in error and "FERRULE_TOKEN" in error


def test_the_command_reports_a_plugin_it_cannot_load(plugin_path):
    process = start_serve(plugin_path, "--plugin", "serve_fixture:nothing_here")
    assert process.wait(timeout=30) == 2
    assert "cannot load plugin" in process.stderr.read()


def test_the_command_reports_a_port_in_use(plugin_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        command = [sys.executable, "-m", "ferrule.cli", "serve", "--port", str(port)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and f"cannot listen on 127.0.0.1:{port}" in result.stderr


STRONG_TOKEN = "0123456789abcdefghijklmnopqrstuvwxyz"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.20", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_only_loopback_may_go_without_a_token(host, loopback):
    assert is_loopback(host) is loopback
    check_bind(host, STRONG_TOKEN)
    if loopback:
        check_bind(host, None)
    else:
        with pytest.raises(FerruleError, match="without a token"):
            check_bind(host, None)


def test_importing_ferrule_or_its_cli_does_not_import_aiohttp():
    code = (
        "import sys, ferrule, ferrule.cli; ferrule.cli.build_parser(); "
        "ferrule.Runtime().call('echo', {'text': 'x'}); print('aiohttp' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.stdout.strip() == "False", result.stderr


# -- tokens on the kernel routes -------------------------------------------------------


def test_the_kernel_routes_need_the_token_and_health_does_not():
    with ServerThread(token="kernel-token-42") as url:
        for token in (None, "wrong"):
            with Runtime(url=url, token=token) as rt, pytest.raises(UnauthorizedError):
                rt.call("echo", {"text": "x"})
            with Runtime(url=url, token=token) as rt, pytest.raises(UnauthorizedError):
                rt.call_iter("spell", {"text": "x"})
        with Runtime(url=url, token="kernel-token-42") as rt:
            assert list(rt.call_iter("spell", {"text": "ok"})) == [{"text": "o"}, {"text": "k"}]
            assert "kernel-token-42" not in repr(rt) and "kernel-token-42" not in repr(
                rt._core.engine.transport.client
            )
        with urllib_open(f"{url}/health") as response:
            assert json.load(response) == {"status": "ok"}


def urllib_open(url: str):
    import urllib.request

    return urllib.request.urlopen(url, timeout=10)


# -- the protocol on the wire -------------------------------------------------------------

JSON = {"Content-Type": "application/json"}


async def test_the_kernel_protocol_on_the_wire():
    with ServerThread() as url:
        async with aiohttp.ClientSession() as session:
            post = f"{url}/ferrule/v1"
            async with session.post(
                f"{post}/call", json={"operator": "echo", "inputs": {"text": "hi"}}
            ) as r:
                assert (r.status, await r.json()) == (200, {"output": {"text": "hi"}})
            async with session.post(
                f"{post}/iter", json={"operator": "spell", "inputs": {"text": "ab"}}
            ) as r:
                assert r.headers["Content-Type"].startswith("application/x-ndjson")
                lines = [json.loads(line) for line in (await r.text()).splitlines()]
            assert lines == [{"item": {"text": "a"}}, {"item": {"text": "b"}}, {"end": True}]
            async with session.post(f"{post}/call", json={"operator": "nope"}) as r:
                body = await r.json()
                assert r.status == 404 and body["error"]["kind"] == "unknown_operator"
            async with session.post(f"{post}/call", json={"operator": "echo", "input": {}}) as r:
                body = await r.json()
                assert r.status == 422 and body["error"]["details"]["errors"] == [
                    {"path": "$.input", "message": "unknown field"}
                ]
            async with session.post(f"{post}/call", data=b"{oops", headers=JSON) as r:
                assert r.status == 422 and "not valid JSON" in (await r.json())["error"]["message"]
            async with session.get(f"{post}/operators") as r:
                assert "echo" in {op["name"] for op in await r.json()}
            async with session.post(f"{post}/nothing", json={}) as r:
                assert r.status == 404 and (await r.json())["error"]["kind"] == "remote_error"


def test_inputs_that_json_cannot_carry_are_refused_before_sending():
    with ServerThread() as url, Runtime(url=url) as rt:
        with pytest.raises(InvalidInputError, match="JSON-compatible"):
            rt.call("echo", {"text": object()})


# -- when the server is not there ---------------------------------------------------------


def test_an_unreachable_server_is_a_remote_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with Runtime(url=f"http://127.0.0.1:{port}") as rt, pytest.raises(RemoteError, match="failed"):
        rt.call("echo", {"text": "x"})


def test_a_server_that_stops_mid_stream_ends_the_stream_with_a_remote_error(plugin_path):
    process = start_serve(plugin_path, "--plugin", "serve_fixture:plugin")
    try:
        url = url_of(process)
        with Runtime(url=url) as rt:
            stream = rt.call_iter("forever", {"text": "x"})
            assert next(stream) == {"text": "x"}
            process.kill()  # no goodbye: the connection just drops
            with pytest.raises(RemoteError):
                for _ in stream:
                    pass
    finally:
        process.kill()
        process.wait(timeout=20)


def test_a_stream_over_a_killed_server_does_not_hang_later_requests(plugin_path):
    process = start_serve(plugin_path, "--plugin", "serve_fixture:plugin")
    url = url_of(process)
    rt = Runtime(url=url)
    try:
        assert rt.call("reverse", {"text": "ab"}) == {"text": "ba"}
        process.kill()
        process.wait(timeout=20)
        started = time.monotonic()
        with pytest.raises(RemoteError):
            rt.call("reverse", {"text": "ab"})
        assert time.monotonic() - started < 10
    finally:
        rt.stop()


def test_a_server_thread_that_cannot_listen_raises_at_start():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            ServerThread(port=taken.getsockname()[1]).start()


def test_unknown_operator_errors_name_what_the_server_has():
    with ServerThread() as url, Runtime(url=url) as rt:
        with pytest.raises(UnknownOperatorError, match="'echo'"):
            rt.call("nope")
