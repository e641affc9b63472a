"""`ferrule serve`'s ``prepare_local_model`` route, what the Node client's
``LangModel.newLocal(..., { progressCallback })`` streams: a local model id routed as
``define_model`` routes it, its weights made ready by the ``prepare_model`` operator with
each event streamed as ``iter`` streams. (Bytes downloaded from a hub: the Node client's
tests/compat/ailoy-v0_2-progress.test.mjs, against a loopback Hugging Face endpoint.)"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from ferrule.runtime import new_kernel
from ferrule.server import ServerThread

pytestmark = pytest.mark.timeout(60)

TOKEN = "prepare-model-token-0123456789abcdef"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with ServerThread(new_kernel(), token=TOKEN) as url:
        yield url


def post(url: str, body: Any) -> tuple[int, list[dict[str, Any]]]:
    request = urllib.request.Request(
        f"{url}/ferrule/v1/prepare_local_model",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, [json.loads(line) for line in response.read().splitlines()]
    except urllib.error.HTTPError as exc:
        return exc.code, [json.loads(exc.read())]


def test_the_packaged_model_is_ready_at_once(url: str) -> None:
    status, lines = post(url, {"model": "SmolLM2-135M-Instruct"})
    assert status == 200
    assert [line["item"]["event"] for line in lines[:-1]] == ["ready"]
    assert lines[0]["item"]["filename"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert lines[-1] == {"end": True}


def test_a_model_whose_backend_finds_its_files_streams_nothing(url: str) -> None:
    assert post(url, {"model": "test"}) == (200, [{"end": True}])


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"model": 3}, 422, "model"),
        ({"model": "test", "name": "x"}, 422, "$.name"),
        ({"model": "test", "options": []}, 422, "options"),
    ],
)
def test_bad_requests_get_a_typed_error_naming_the_field(
    url: str, body: dict[str, Any], status: int, field: str
) -> None:
    got, [answer] = post(url, body)
    assert got == status
    assert answer["error"]["kind"] == "invalid_input"
    assert field in json.dumps(answer["error"])


def test_a_cache_dir_from_the_network_is_refused(url: str, tmp_path: Any) -> None:
    # The server's own $HF_HUB_CACHE is where it writes; a client names no folder.
    status, [answer] = post(
        url, {"model": "Qwen/Qwen3-0.6B", "options": {"cache_dir": str(tmp_path)}}
    )
    assert status == 422
    assert answer["error"]["kind"] == "invalid_input"
    assert "cache_dir" in json.dumps(answer["error"])
    assert list(tmp_path.iterdir()) == []


# -- what define_model refuses, this route refuses (issue 31, reproduction 8) -------------


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"chat_template": "{{ messages }}"}, "chat_template"),
        ({"filename": "../../../../etc/passwd"}, "filename"),
        ({"cache_dir": "/tmp"}, "cache_dir"),
    ],
)
def test_options_define_model_refuses_are_refused_before_anything_is_fetched(
    url: str, options: dict[str, Any], field: str
) -> None:
    status, [answer] = post(url, {"model": "SmolLM2-135M-Instruct", "options": options})
    assert status == 422, answer
    assert answer["error"]["kind"] == "invalid_input"
    assert [e["path"] for e in answer["error"]["details"]["errors"]] == [f"$.{field}"]


def test_a_model_file_outside_the_served_folders_is_refused(url: str) -> None:
    status, [answer] = post(url, {"model": "/etc/passwd.gguf"})
    assert status == 422, answer
    assert answer["error"]["kind"] == "invalid_input"


def test_the_ready_event_names_the_file_not_the_servers_path(url: str) -> None:
    status, lines = post(url, {"model": "SmolLM2-135M-Instruct"})
    assert status == 200
    ready = lines[0]["item"]
    assert ready["event"] == "ready" and "path" not in ready
    assert not [v for v in ready.values() if isinstance(v, str) and v.startswith("/")]
