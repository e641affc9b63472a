"""Any GGUF repository of the Hugging Face Hub by id (``owner/repo[:QUANT]``), generation
defaults, and failing fast offline.

The hub is a loopback server speaking the two endpoints huggingface_hub uses here: the
repository tree listing (``GET /api/models/{repo}/tree/{revision}``) and file resolution
(``HEAD``/``GET /{repo}/resolve/{revision}/{path}`` with the commit, ETag and size headers
it reads). It serves tiny GGUFs written by the tests. Nothing reaches the internet: the
subprocesses get ``HF_ENDPOINT`` and a cache of their own.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from ferrule import LocalModel, Runtime
from ferrule_kit.content.messages import Message
from ferrule_kit.models.lm import InferInput
from ferrule_llamacpp import hub, weights
from ferrule_llamacpp.attributes import LlamaCppAttributes
from ferrule_llamacpp.formats import CHAT_SAMPLING, _sampling
from ferrule_llamacpp.plugin import ferrule_resolve_local_model

# -- ids and the choice of a file ----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "repo", "quant"),
    [
        ("bartowski/SmolLM2-360M-Instruct-GGUF", "bartowski/SmolLM2-360M-Instruct-GGUF", None),
        ("unsloth/Qwen3-8B-GGUF:Q4_K_M", "unsloth/Qwen3-8B-GGUF", "Q4_K_M"),
        ("hf.co/unsloth/Qwen3-8B-GGUF:UD-Q4_K_XL", "unsloth/Qwen3-8B-GGUF", "UD-Q4_K_XL"),
        ("https://huggingface.co/a/b.c-d", "a/b.c-d", None),
    ],
)
def test_hub_ids_name_a_repository_and_a_quant(model: str, repo: str, quant: str | None) -> None:
    assert hub.parse(model) == hub.HubModel(repo, quant)
    assert ferrule_resolve_local_model(model).attributes == {"model": model}


@pytest.mark.parametrize("model", ["gpt-4o", "/models/x.gguf", "a/b/c", "models/x.gguf", "a/"])
def test_other_ids_name_no_repository(model: str) -> None:
    assert hub.parse(model) is None


FILES = [
    "README.md",
    "Model-F16.gguf",
    "Model-Q8_0.gguf",
    "Model-Q4_K_M.gguf",
    "Model-UD-Q4_K_M.gguf",
    "Model-IQ4_XS.gguf",
    "mmproj-Model-F16.gguf",
    "Q6_K/Model-Q6_K-00001-of-00002.gguf",
    "Q6_K/Model-Q6_K-00002-of-00002.gguf",
    "Q5_K_M/Model-Q5_K_M-00001-of-00002.gguf",  # its second shard is missing
]


@pytest.mark.parametrize(
    ("quant", "files"),
    [
        (None, ("Model-Q4_K_M.gguf",)),  # Q4_K_M first, the plainest file naming it
        ("q8_0", ("Model-Q8_0.gguf",)),
        ("UD-Q4_K_M", ("Model-UD-Q4_K_M.gguf",)),
        ("IQ4_XS", ("Model-IQ4_XS.gguf",)),
        ("Q6_K", ("Q6_K/Model-Q6_K-00001-of-00002.gguf", "Q6_K/Model-Q6_K-00002-of-00002.gguf")),
        ("Q5_K_M", None),  # incomplete
        ("Q4_K", None),  # not a prefix match of Q4_K_M
        ("Q2_K", None),
    ],
)
def test_the_quant_picks_the_file(quant: str | None, files: tuple[str, ...] | None) -> None:
    chosen = hub.choose(hub.HubModel("o/r", quant), FILES)
    assert (chosen.files if chosen else None) == files


def test_without_a_quant_the_preferred_one_the_repository_has_wins() -> None:
    assert hub.choose(hub.HubModel("o/r"), ["m-F16.gguf", "m-Q8_0.gguf"]).path == "m-Q8_0.gguf"
    assert hub.choose(hub.HubModel("o/r"), ["whatever.gguf", "README.md"]).path == "whatever.gguf"
    assert hub.choose(hub.HubModel("o/r"), ["a.gguf", "b.gguf"]) is None  # which one? ask
    assert hub.choose(hub.HubModel("o/r"), ["mmproj-F16.gguf"]) is None


# -- generation defaults --------------------------------------------------------------------


def test_a_gguf_s_own_sampling_settings_are_its_defaults(
    tmp_path: Path, write_gguf: Callable[..., object]
) -> None:
    path = tmp_path / "llama.gguf"
    write_gguf(
        path,
        architecture="llama",
        metadata={"general.sampling.temp": 0.5, "general.sampling.top_k": 7},
    )
    template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    with Runtime() as rt:
        # A context past the 1024 tokens it was written with: room for the whole cap.
        attributes = {"model": str(path), "chat_template": template, "n_ctx": 2048}
        rt.define("llamacpp_language_model", "m", attributes)
        defaults = rt.kernel.component("m")._format.defaults
        assert defaults == {**CHAT_SAMPLING, "temperature": 0.5, "top_k": 7}
        # The chat default caps a reply that never ends (the random model never emits EOS).
        items = list(
            rt.call_iter_method("m", "infer", {"messages": [{"role": "user", "content": "a"}]})
        )
        assert items[-1]["finish_reason"] == "length"
        assert items[-1]["usage"]["output_tokens"] == CHAT_SAMPLING["max_tokens"] == 1024
        rt.define("llamacpp_language_model", "capped", {**attributes, "max_tokens": 3})
        items = list(
            rt.call_iter_method("capped", "infer", {"messages": [{"role": "user", "content": "a"}]})
        )
        assert items[-1]["usage"]["output_tokens"] == 3


def test_the_request_wins_over_the_component_and_the_component_over_the_model() -> None:
    defaults = {**CHAT_SAMPLING, "temperature": 0.5}
    attributes = LlamaCppAttributes(repeat_penalty=1.0, top_k=3, max_tokens=100)
    message = Message.from_dict({"role": "user", "content": "a"})
    request = InferInput([message], temperature=0.9, max_tokens=7)
    assert _sampling(defaults, attributes, request) == {
        **CHAT_SAMPLING,
        "temperature": 0.9,
        "top_k": 3,
        "repeat_penalty": 1.0,
        "max_tokens": 7,
        "presence_penalty": 0.0,
    }
    assert _sampling(defaults, LlamaCppAttributes(), request)["repeat_penalty"] == 1.1


# -- a loopback hub ---------------------------------------------------------------------------


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    repos: ClassVar[dict[str, dict[str, bytes]]] = {}
    requests: ClassVar[list[str]] = []
    commit = "0123456789abcdef0123456789abcdef01234567"

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    def _route(self) -> tuple[int, bytes, dict[str, str]]:
        path = self.path.split("?")[0]
        self.requests.append(f"{self.command} {path}")
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] == "tree":
            files = self.repos.get(f"{parts[2]}/{parts[3]}")
            if files is None:
                return 404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}
            listing = [
                {
                    "type": "file",
                    "path": name,
                    "size": len(body),
                    "oid": hashlib.sha1(body).hexdigest(),
                }
                for name, body in files.items()
            ]
            return 200, json.dumps(listing).encode(), {"Content-Type": "application/json"}
        if len(parts) >= 5 and parts[2] == "resolve":
            body = self.repos.get(f"{parts[0]}/{parts[1]}", {}).get("/".join(parts[4:]))
            if body is None:
                return 404, b"", {"X-Error-Code": "EntryNotFound"}
            return (
                200,
                body,
                {
                    "ETag": f'"{hashlib.sha256(body).hexdigest()}"',
                    "X-Repo-Commit": self.commit,
                    "Content-Type": "application/octet-stream",
                },
            )
        return 404, b"", {}

    def do_HEAD(self) -> None:
        self._send(*self._route())

    def do_GET(self) -> None:
        self._send(*self._route())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def hub_url(
    tmp_path_factory: pytest.TempPathFactory,
    write_gguf: Callable[..., object],
    serve_http: Callable[[type[http.server.BaseHTTPRequestHandler]], str],
) -> str:
    folder = tmp_path_factory.mktemp("hub")
    write_gguf(folder / "q4.gguf", seed=1)
    write_gguf(folder / "q8.gguf", seed=2)
    write_gguf(folder / "Split-Q4_K_M.gguf", seed=3, split_max_tensors=16)
    tiny = {
        "README.md": b"# tiny\n",
        "Tiny-Q8_0.gguf": (folder / "q8.gguf").read_bytes(),
        "Tiny-Q4_K_M.gguf": (folder / "q4.gguf").read_bytes(),
        "mmproj-Tiny-F16.gguf": b"not a model",
    }
    split = {
        f"Q4_K_M/Split-Q4_K_M-0000{i}-of-00002.gguf": (
            folder / f"Split-Q4_K_M-0000{i}-of-00002.gguf"
        ).read_bytes()
        for i in (1, 2)
    }
    safetensors = {"model.safetensors": b"weights", "config.json": b"{}"}
    Hub.repos = {
        "someone/Tiny-GGUF": tiny,
        "someone/Split-GGUF": split,
        "someone/Tiny": safetensors,
    }
    return serve_http(Hub)


#: Defines the model id of argv[1] through LocalModel, generates 3 tokens and prints which
#: file llama.cpp loaded (relative to the repository's snapshot).
RUN_MODEL = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from ferrule import LocalModel, Runtime

    with Runtime() as rt:
        route = LocalModel(sys.argv[1]).route(rt.kernel)
        rt.define(route.component_type, "lm", route.attributes)
        items = list(rt.call_iter_method(
            "lm", "infer", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3}
        ))
        path = Path(rt.kernel.component("lm").path)
        snapshot = next(p for p in path.parents if p.parent.name == "snapshots")
        print(json.dumps({"file": path.relative_to(snapshot).as_posix(), "last": items[-1]}))
    """
)


def run(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
        check=False,
    )


def run_model(model: str, env: dict[str, str]) -> dict:
    result = run("-c", RUN_MODEL, model, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_any_gguf_repository_runs_by_id_and_then_offline(hub_url: str, tmp_path: Path) -> None:
    env = {"HF_ENDPOINT": hub_url, "HF_HUB_CACHE": str(tmp_path / "cache")}
    Hub.requests.clear()

    ran = run_model("someone/Tiny-GGUF", env)
    assert ran["file"] == "Tiny-Q4_K_M.gguf"
    assert ran["last"]["usage"]["output_tokens"] == 3
    assert "GET /someone/Tiny-GGUF/resolve/main/Tiny-Q8_0.gguf" not in Hub.requests

    assert run_model("someone/Tiny-GGUF:Q8_0", env)["file"] == "Tiny-Q8_0.gguf"
    assert run_model("hf.co/someone/Split-GGUF", env)["file"] == (
        "Q4_K_M/Split-Q4_K_M-00001-of-00002.gguf"
    )

    # Cached now: the same ids run with the hub switched off, and asking nothing of it.
    Hub.requests.clear()
    offline = {**env, "HF_HUB_OFFLINE": "1"}
    assert run_model("someone/Tiny-GGUF", offline)["file"] == "Tiny-Q4_K_M.gguf"
    assert run_model("someone/Tiny-GGUF:q8_0", offline)["file"] == "Tiny-Q8_0.gguf"
    assert Hub.requests == []

    listed = run("-m", "ferrule.cli", "models", "list", "--json", env=env)
    models = {m["model"]: m for m in json.loads(listed.stdout)["models"]}
    assert {"someone/Tiny-GGUF:Q4_K_M", "someone/Tiny-GGUF:Q8_0", "someone/Split-GGUF:Q4_K_M"} <= (
        set(models)
    )
    assert models["someone/Tiny-GGUF:Q8_0"]["quantization"] == "Q8_0"

    removed = run("-m", "ferrule.cli", "models", "remove", "someone/Split-GGUF:Q4_K_M", env=env)
    assert removed.returncode == 0, removed.stderr
    assert "removed" in removed.stdout
    cache = tmp_path / "cache"
    assert weights.cached_hub_weights(hub.HubModel("someone/Split-GGUF"), cache) is None
    # The other repository stays, though this hub gives both the same commit.
    assert weights.cached_hub_weights(hub.HubModel("someone/Tiny-GGUF"), cache) is not None


def test_models_download_takes_a_repository_and_quant(hub_url: str, tmp_path: Path) -> None:
    env = {"HF_ENDPOINT": hub_url}
    cache = str(tmp_path / "cache")
    result = run(
        "-m",
        "ferrule.cli",
        "models",
        "download",
        "someone/Tiny-GGUF:Q8_0",
        "--cache-dir",
        cache,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "Tiny-Q8_0.gguf" in result.stdout
    entry, path = weights.cached_hub_weights(hub.HubModel("someone/Tiny-GGUF", "Q8_0"), cache)
    assert entry.quantization == "Q8_0"
    assert path.read_bytes() == Hub.repos["someone/Tiny-GGUF"]["Tiny-Q8_0.gguf"]


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("someone/Tiny-GGUF:Q2_K", "has no Q2_K GGUF file; it has: Q4_K_M, Q8_0"),
        ("someone/Missing-GGUF", "no model repository 'someone/Missing-GGUF'"),
        ("someone/Tiny", "has no .gguf model file"),
    ],
)
def test_what_the_repository_lacks_is_named(
    hub_url: str, tmp_path: Path, model: str, message: str
) -> None:
    env = {"HF_ENDPOINT": hub_url, "HF_HUB_CACHE": str(tmp_path)}
    result = run("-m", "ferrule.cli", "chat", "-m", model, "hi", env=env)
    assert result.returncode == 1
    assert message in result.stderr
    assert "unknown_model" in result.stderr


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("model", ["Qwen/Qwen3-0.6B", "someone/Tiny-GGUF:Q8_0"])
@pytest.mark.parametrize(
    "offline",
    [
        {"HF_HUB_OFFLINE": "1"},
        {"HF_ENDPOINT": "http://127.0.0.1:{port}"},  # nothing listens
        {"HF_ENDPOINT": "http://hub.invalid"},  # no such name
    ],
    ids=["HF_HUB_OFFLINE", "refused", "no-dns"],
)
def test_offline_a_model_to_download_fails_at_once_in_one_line(
    tmp_path: Path, model: str, offline: dict[str, str]
) -> None:
    env = {k: v.format(port=_closed_port()) for k, v in offline.items()}
    env["HF_HUB_CACHE"] = str(tmp_path)
    result = run("-m", "ferrule.cli", "chat", "-m", model, "hi", env=env, timeout=60)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "cannot be reached" in lines[0]
    # one line: huggingface_hub's retries (about 25 s) would each print "Retrying in ..."
    assert f"ferrule models download {model}" in lines[0]


def test_a_hub_id_resolves_through_local_model() -> None:
    with Runtime() as rt:
        route = LocalModel("someone/Tiny-GGUF:Q8_0").route(rt.kernel)
    assert route.component_type == "llamacpp_language_model"
    assert route.attributes == {"model": "someone/Tiny-GGUF:Q8_0"}
