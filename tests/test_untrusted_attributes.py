"""Nothing a network client sends names code to import, a file of the server, or a place
the server connects to (issue 11, High 1): every component type and operator field that
does is refused from an untrusted caller — which is every `ferrule serve` client — before
any plugin code runs, and accepted from code in the server's own process.

The audit behind this list is in docs/security.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ferrule import Runtime
from ferrule.server import ServerThread
from ferrule_kernel import InvalidInputError, Kernel

BASE_URL = "http://169.254.169.254/v1"

# (component type, attributes, the refused field)
DEFINES = [
    ("test_language_model", {"function": "sys:exit"}, "$.function"),
    ("test_language_model", {"function": "os:system"}, "$.function"),
    ("llamacpp_language_model", {"model": "/etc/passwd.gguf"}, "$.model"),
    ("llamacpp_language_model", {"model": "~/models/x.gguf"}, "$.model"),
    ("llamacpp_language_model", {"model": "../../x.gguf"}, "$.model"),
    ("llamacpp_language_model", {"model": "someone/Evil-GGUF:Q4_K_M"}, "$.model"),
    ("llamacpp_language_model", {"cache_dir": "/tmp/elsewhere"}, "$.cache_dir"),
    ("llamacpp_language_model", {"chat_template": "{{ 7 * 7 }}"}, "$.chat_template"),
    ("exllama_language_model", {"model": "/srv/models/any"}, "$.model"),
    ("exllama_language_model", {"model": "Qwen/Qwen3-8B", "cache_dir": "/tmp"}, "$.cache_dir"),
    ("openai_language_model", {"model": "gpt-4o", "base_url": BASE_URL}, "$.base_url"),
    ("anthropic_language_model", {"model": "claude-x", "base_url": BASE_URL}, "$.base_url"),
    ("gemini_language_model", {"model": "gemini-x", "base_url": BASE_URL}, "$.base_url"),
    ("xai_language_model", {"model": "grok-x", "base_url": BASE_URL}, "$.base_url"),
]
# (operator, inputs, the refused field)
CALLS = [
    ("list_local_models", {"cache_dir": "/"}, "$.cache_dir"),
    ("download_model", {"model": "Qwen/Qwen3-0.6B", "cache_dir": "/tmp/x"}, "$.cache_dir"),
    ("remove_model", {"model": "Qwen/Qwen3-0.6B", "cache_dir": "/home"}, "$.cache_dir"),
]


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    return Runtime().kernel  # every installed plugin, reached as a network client would


def _installed(kernel: Kernel, name: str, kind: str) -> None:
    names = kernel.registry.component_types if kind == "type" else kernel.registry.operators
    if name not in names:
        pytest.skip(f"{name} is not installed")


@pytest.mark.parametrize(("component_type", "attributes", "field"), DEFINES)
async def test_define_refuses_what_names_code_files_or_urls(
    kernel, component_type, attributes, field
):
    _installed(kernel, component_type, "type")
    with pytest.raises(InvalidInputError) as info:
        await kernel.define(component_type, "c", attributes)
    assert [e["path"] for e in info.value.errors] == [field]
    assert "c" not in kernel.components()


@pytest.mark.parametrize(("operator", "inputs", "field"), CALLS)
async def test_operators_refuse_server_directories(kernel, operator, inputs, field):
    _installed(kernel, operator, "operator")
    with pytest.raises(InvalidInputError) as info:
        await kernel.call(operator, inputs)
    assert [e["path"] for e in info.value.errors] == [field]


def test_code_in_the_servers_process_may_name_them(tmp_path: Path) -> None:
    pytest.importorskip("ferrule_llamacpp")
    with Runtime() as rt:
        listed = rt.call("list_local_models", {"cache_dir": str(tmp_path)})
        assert listed["cache_dir"] == str(tmp_path)
        rt.define("test_language_model", "lm", {"function": "builtins:str"})


@pytest.fixture
def served_models(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "served"
    root.mkdir()
    monkeypatch.setenv("FERRULE_REMOTE_PATHS", f"{tmp_path / 'nothing'}{os.pathsep}{root}")
    return root


async def test_a_network_client_may_name_files_under_the_served_directories_only(
    kernel, served_models: Path, tmp_path: Path
) -> None:
    _installed(kernel, "llamacpp_language_model", "type")
    outside = tmp_path / "outside.gguf"
    outside.write_bytes(b"GGUF")
    (served_models / "escape.gguf").symlink_to(outside)
    refused = [
        str(outside),
        str(served_models / ".." / "outside.gguf"),
        str(served_models / "escape.gguf"),  # a link out of the directory
        "served/x.gguf",  # relative: to what, on the server?
    ]
    for model in refused:
        with pytest.raises(InvalidInputError, match=r"\$\.model: names a path on the server"):
            await kernel.define("llamacpp_language_model", "c", {"model": model})
    # Under the directory it passes validation; the backend then looks for the file.
    with pytest.raises(InvalidInputError, match="no GGUF file at"):
        await kernel.define(
            "llamacpp_language_model", "c", {"model": str(served_models / "missing.gguf")}
        )


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ServerThread(Runtime().kernel) as url:
        yield url


def test_ferrule_serve_does_not_import_what_a_client_names(server: str) -> None:
    # The reported exploit: define the test model with function "sys:exit", then infer.
    with Runtime(url=server) as remote:
        with pytest.raises(InvalidInputError, match=r"\$\.function: names code to run"):
            remote.define("test_language_model", "lm", {"function": "sys:exit"})
        remote.define("test_language_model", "lm", {})
        items: list[Any] = list(
            remote.call_iter_method(
                "lm", "infer", {"messages": [{"role": "user", "content": "still here"}]}
            )
        )
        assert items[-1]["finish_reason"] == "stop"


def test_the_operators_declared_model_may_name_a_file_a_clients_may_not() -> None:
    # `ferrule serve --model PATH`: the operator names the file, so the OpenAI endpoint
    # defines it as code in the server's process would; a client naming another file is
    # still refused.
    smollm2 = pytest.importorskip("ferrule_smollm2")
    pytest.importorskip("ferrule_llamacpp")
    openai = pytest.importorskip("openai")
    declared = str(smollm2.gguf_path())
    with ServerThread(Runtime().kernel, models=[declared]) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        reply = client.chat.completions.create(
            model=declared, messages=[{"role": "user", "content": "Hi"}], max_tokens=2
        )
        assert reply.choices[0].finish_reason in ("length", "stop")
        with pytest.raises(openai.BadRequestError, match="names a path on the server"):
            client.chat.completions.create(
                model=declared + ".copy.gguf", messages=[{"role": "user", "content": "Hi"}]
            )
