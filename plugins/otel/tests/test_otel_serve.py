"""``ferrule serve`` traced the way a deployment runs it: ``opentelemetry-instrument ferrule
serve`` (OpenTelemetry's auto-configuration, exporting OTLP over HTTP), a chat completion
sent to it, and the spans read back by a loopback collector decoding the OTLP/HTTP
protobuf requests (``POST /v1/traces``, ``ExportTraceServiceRequest``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(v) for v in value.array_value.values)
    return getattr(value, kind) if kind else None


class Collector(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps every span it is sent, as (name, attributes,
    service name)."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), CollectorHandler)
        self.spans: list[tuple[str, dict[str, Any], str]] = []
        self.paths: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class CollectorHandler(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.paths.append(self.path)
        assert self.headers["Content-Type"] == "application/x-protobuf"
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for resource_spans in request.resource_spans:
            resource = {a.key: value_of(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    attributes = {a.key: value_of(a.value) for a in span.attributes}
                    self.server.spans.append(
                        (span.name, attributes, resource.get("service.name", ""))
                    )
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = Collector()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_ferrule_serve_under_opentelemetry_instrument_exports_chat_spans(collector, tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")},
        "OTEL_SERVICE_NAME": "ferrule-test",
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_LOGS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.url,
        "OTEL_BSP_SCHEDULE_DELAY": "50",  # export within 50 ms, not the default 5 s
        "XDG_CACHE_HOME": str(tmp_path),
    }
    env.pop("FERRULE_TOKEN", None)
    command = [str(INSTRUMENT), sys.executable, "-m", "ferrule.cli", "serve", "--port", "0"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()
        assert "listening on" in line, line + process.stderr.read()
        url = line.split("listening on ")[1].split()[0]
        body = {"model": "test", "messages": [{"role": "user", "content": "traced hello"}]}
        request = urllib.request.Request(
            f"{url}/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            reply = json.loads(response.read())
        assert reply["choices"][0]["message"]["content"] == "traced hello"
        deadline = time.monotonic() + 20
        while not collector.spans and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    assert collector.paths and set(collector.paths) == {"/v1/traces"}
    chats = [(a, service) for name, a, service in collector.spans if name == "chat"]
    assert len(chats) == 1, collector.spans
    attributes, service = chats[0]
    assert service == "ferrule-test"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "test"
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["gen_ai.usage.input_tokens"] == 2
    assert attributes["gen_ai.usage.output_tokens"] == 2
    assert attributes["gen_ai.response.time_to_first_chunk"] > 0
    assert "traced hello" not in json.dumps(attributes)  # content capture is off
