"""The weights table, model resolution, the model-management operators and ``ferrule models``.

Downloads are tested against a loopback server that answers as the Hugging Face Hub's
file endpoint does (``HEAD``/``GET /{repo}/resolve/{revision}/{file}`` with the commit,
ETag and size headers huggingface_hub reads), serving the tiny Qwen3 GGUF under the
file name the table gives Qwen/Qwen3-0.6B. Nothing reaches the internet.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from ferrule import LocalModel, Runtime
from ferrule_kernel import InvalidInputError
from ferrule_kit.errors import ModelError, UnknownModelError
from ferrule_kit.testing import check_stream
from ferrule_llamacpp import weights
from ferrule_llamacpp.plugin import ferrule_resolve_local_model

AGENT_GUIDE_IDS = [
    "Qwen/Qwen3-0.6B",
    "Qwen/Qwen3-1.7B",
    "Qwen/Qwen3-4B",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen3-14B",
    "Qwen/Qwen3-32B",
    "Qwen/Qwen3-30B-A3B",
]


def test_the_table_covers_every_local_model_id() -> None:
    for model in [*AGENT_GUIDE_IDS, "SmolLM2-135M-Instruct"]:
        entry = weights.lookup(model)
        assert entry is not None, model
        assert entry.filename.endswith(".gguf") and entry.quantization in entry.filename
    for model in AGENT_GUIDE_IDS:
        assert weights.lookup(model).repo_id == f"{model}-GGUF"  # Qwen's official GGUF repos


@pytest.mark.parametrize("model", [*AGENT_GUIDE_IDS, "SmolLM2-135M-Instruct", "/models/x.gguf"])
def test_resolver_routes_known_ids_and_gguf_paths_here(model: str) -> None:
    route = ferrule_resolve_local_model(model)
    assert route.component_type == "llamacpp_language_model"
    assert route.attributes == {"model": model}


def test_resolver_leaves_other_ids_to_other_backends() -> None:
    assert ferrule_resolve_local_model("gpt-4o") is None
    with Runtime() as rt, pytest.raises(UnknownModelError):
        LocalModel("no such model").route(rt.kernel)  # neither a table id nor owner/repo


def test_component_type_and_its_aliases_are_registered() -> None:
    with Runtime() as rt:
        (entry,) = [
            t for t in rt.kernel.component_types() if t["name"] == "llamacpp_language_model"
        ]
    assert set(entry["aliases"]) == {"local_language_model", "tvm_language_model"}
    assert [m["name"] for m in entry["methods"]] == ["infer", "count_tokens"]


def test_missing_weights_without_download_name_the_file_and_where_to_put_it(tmp_path: Path) -> None:
    with Runtime() as rt, pytest.raises(ModelError) as info:
        rt.define(
            "llamacpp_language_model",
            "q",
            {"model": "Qwen/Qwen3-0.6B", "download": False, "cache_dir": str(tmp_path)},
        )
    message = info.value.message
    assert "Qwen3-0.6B-Q8_0.gguf" in message
    assert str(tmp_path / "models--Qwen--Qwen3-0.6B-GGUF") in message
    assert (
        "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf" in message
    )


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrule.cli", "models", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def test_download_offline_fails_with_the_file_and_cache_path(tmp_path: Path) -> None:
    result = cli(
        "download", "Qwen/Qwen3-0.6B", "--cache-dir", str(tmp_path), env={"HF_HUB_OFFLINE": "1"}
    )
    assert result.returncode == 1
    assert "model_error" in result.stderr
    assert "Qwen3-0.6B-Q8_0.gguf" in result.stderr
    assert str(tmp_path / "models--Qwen--Qwen3-0.6B-GGUF") in result.stderr


def test_the_packaged_model_cannot_be_removed() -> None:
    result = cli("remove", "SmolLM2-135M-Instruct")
    assert result.returncode == 1
    assert "pip uninstall ferrule-smollm2" in result.stderr


def test_unknown_model_is_an_input_error() -> None:
    with Runtime() as rt, pytest.raises(InvalidInputError) as info:
        rt.call("download_model", {"model": "nope"})
    assert info.value.errors[0]["path"] == "$.model"


# -- a loopback Hugging Face file endpoint ----------------------------------------------


class HubFiles(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    files: ClassVar[dict[str, bytes]] = {}
    commit = "0123456789abcdef0123456789abcdef01234567"

    def _file(self) -> bytes | None:
        # /{org}/{repo}/resolve/{revision}/{filename}
        parts = self.path.split("?")[0].strip("/").split("/")
        if len(parts) != 5 or parts[2] != "resolve":
            return None
        return self.files.get(f"{parts[0]}/{parts[1]}/{parts[4]}")

    def _headers(self, body: bytes | None) -> None:
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.send_header("X-Error-Code", "EntryNotFound")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", f'"{hashlib.sha256(body).hexdigest()}"')
        self.send_header("X-Repo-Commit", self.commit)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._headers(self._file())

    def do_GET(self) -> None:
        body = self._file()
        self._headers(body)
        if body is not None:
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub(
    tiny_qwen3: Path, serve_http: Callable[[type[http.server.BaseHTTPRequestHandler]], str]
) -> str:
    HubFiles.files = {
        "Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf": tiny_qwen3.read_bytes(),
        "Qwen/Qwen3-0.6B-GGUF/README.md": b"# Qwen3-0.6B-GGUF\n",
    }
    return serve_http(HubFiles)


def test_download_list_run_and_remove_a_table_model(
    hub: str, tmp_path: Path, tiny_qwen3: Path
) -> None:
    cache = str(tmp_path / "hub")
    env = {"HF_ENDPOINT": hub}

    result = cli("download", "Qwen/Qwen3-0.6B", "--cache-dir", cache, env=env)
    assert result.returncode == 0, result.stderr
    assert "Qwen3-0.6B-Q8_0.gguf" in result.stdout

    listing = json.loads(cli("list", "--json", "--cache-dir", cache).stdout)
    downloaded = {m["model"]: m for m in listing["models"]}
    assert downloaded["Qwen/Qwen3-0.6B"]["size_bytes"] == tiny_qwen3.stat().st_size
    assert Path(downloaded["Qwen/Qwen3-0.6B"]["path"]).read_bytes() == tiny_qwen3.read_bytes()

    # LocalModel("Qwen/Qwen3-0.6B") now runs from the cache, offline, on the Qwen3 path.
    with Runtime() as rt:
        route = LocalModel(
            "Qwen/Qwen3-0.6B", options={"cache_dir": cache, "download": False}
        ).route(rt.kernel)
        rt.define(route.component_type, "q", route.attributes)
        assert rt.kernel.component("q").architecture == "qwen3"
        items = list(
            rt.call_iter_method(
                "q", "infer", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5}
            )
        )
        check_stream(items)
        assert items[-1]["usage"]["output_tokens"] == 5

    # Removing it frees the file (the cached revision held nothing else).
    with Runtime() as rt:
        removed = rt.call("remove_model", {"model": "Qwen/Qwen3-0.6B", "cache_dir": cache})
        assert removed == {
            "model": "Qwen/Qwen3-0.6B",
            "removed": True,
            "freed_bytes": tiny_qwen3.stat().st_size,
        }
        again = rt.call("remove_model", {"model": "Qwen/Qwen3-0.6B", "cache_dir": cache})
        assert again["removed"] is False
    listing = json.loads(cli("list", "--json", "--cache-dir", cache).stdout)
    assert "Qwen/Qwen3-0.6B" not in {m["model"] for m in listing["models"]}


def test_remove_keeps_other_files_of_the_repository(hub: str, tmp_path: Path) -> None:
    cache = str(tmp_path / "hub")
    env = {"HF_ENDPOINT": hub}
    readme = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, huggingface_hub as h; "
            "print(h.hf_hub_download('Qwen/Qwen3-0.6B-GGUF', 'README.md', cache_dir=sys.argv[1]))",
            cache,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=True,
    ).stdout.strip()
    assert cli("download", "Qwen/Qwen3-0.6B", "--cache-dir", cache, env=env).returncode == 0
    result = cli("remove", "Qwen/Qwen3-0.6B", "--cache-dir", cache)
    assert result.returncode == 0, result.stderr
    assert "removed" in result.stdout
    assert Path(readme).read_text() == "# Qwen3-0.6B-GGUF\n"
    assert weights.cached_file(weights.lookup("Qwen/Qwen3-0.6B"), cache) is None


#: Run in a fresh interpreter (huggingface_hub reads HF_ENDPOINT when imported): a model
#: made with Ailoy's progress callback, the progress printed as JSON lines, then a reply.
PROGRESS_SCRIPT = """
import asyncio, json, sys
import ferrule as ai

async def main():
    if sys.argv[2:] == ["download"]:  # Ailoy's LangModel.download, then remove
        ai.LangModel.download("Qwen/Qwen3-0.6B", lambda p: print(json.dumps([p.comment, p.current, p.total])), cache_dir=sys.argv[1])
        ai.LangModel.remove("Qwen/Qwen3-0.6B", cache_dir=sys.argv[1])
        return
    lm = await ai.LangModel.new_local(
        "Qwen/Qwen3-0.6B",
        progress_callback=lambda p: print(json.dumps([p.comment, p.current, p.total])),
        cache_dir=sys.argv[1],
    )
    out = await lm.infer("Hi", config=ai.LangModelInferConfig(max_tokens=2))
    print(json.dumps(["reply", out.message.role, len(out.message.text) > 0]))

asyncio.run(main())
"""


def progress_events(hub: str, cache: Path, *args: str) -> list[list[Any]]:
    """What `PROGRESS_SCRIPT` reports (an event a line) run with ``cache`` and ``args``,
    downloading from ``hub``."""
    run = [sys.executable, "-c", PROGRESS_SCRIPT, str(cache), *args]
    env = {**os.environ, "HF_ENDPOINT": hub}
    result = subprocess.run(run, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_new_local_reports_the_bytes_downloaded_then_the_load(
    hub: str, tmp_path: Path, tiny_qwen3: Path
) -> None:
    size = tiny_qwen3.stat().st_size
    events = progress_events(hub, tmp_path / "hub")
    downloads = [e for e in events if e[0] == "Downloading Qwen3-0.6B-Q8_0.gguf"]
    assert downloads and downloads[-1][1:] == [size, size]  # every byte, counted
    assert [e[1] for e in downloads] == sorted(e[1] for e in downloads)
    assert events[len(downloads) :] == [
        ["Qwen3-0.6B-Q8_0.gguf ready", 1, 2],
        ["Initialized", 2, 2],
        ["reply", "assistant", True],
    ]
    # Now cached: nothing is downloaded, the steps are the file found and the load.
    assert progress_events(hub, tmp_path / "hub")[:2] == [
        ["Qwen3-0.6B-Q8_0.gguf ready", 1, 2],
        ["Initialized", 2, 2],
    ]


def test_download_reports_the_bytes_and_remove_frees_them(
    hub: str, tmp_path: Path, tiny_qwen3: Path
) -> None:
    size = tiny_qwen3.stat().st_size
    cache = tmp_path / "hub"
    events = progress_events(hub, cache, "download")
    assert events[-2][1:] == [size, size] and events[-1] == ["Qwen3-0.6B-Q8_0.gguf ready", 1, 1]
    assert not list(cache.glob("**/*.gguf"))  # removed again
