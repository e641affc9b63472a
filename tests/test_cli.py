"""The ``ferrule`` command's habits, in subprocesses with a home and settings folder of their
own: ``--version``, piped stdin, a reader that goes away, ``ferrule keys``, config.toml
(default model, aliases), ``provider:model`` ids, components on a server (``define``,
``delete``, ``call``/``iter COMPONENT.METHOD``), and what ``ferrule plugins`` says.
API providers are loopback servers; nothing reaches the network."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from ferrule.models import route_model, split_provider
from ferrule.runtime import new_kernel
from ferrule.server import ServerThread
from ferrule_kernel import Kernel
from ferrule_kit.network.http import resolve_api_key
from ferrule_kit.testing import ScriptedTurn
from ferrule_kit.testing import chat_completions as wire
from ferrule_kit.testing.loopback import LoopbackServer

KEY = "sk-test-0123456789abcdefghijklmnopWXYZ"


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """The environment of a user with nothing set up yet (and no provider key variables)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and k not in ("FERRULE_CONFIG", "FERRULE_URL")
    }
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        COLUMNS="300",
    )
    return env


def ferrule(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ferrule.cli", *args],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_version(home: dict[str, str]) -> None:
    result = ferrule(home, "--version")
    assert result.returncode == 0
    assert result.stdout.startswith(f"ferrule {version('ferrule')} (ferrule-kernel ")


def test_python_dash_m_ferrule_is_the_command(home: dict[str, str]) -> None:
    # where the script is not on PATH (a venv that is not activated)
    result = subprocess.run(
        [sys.executable, "-m", "ferrule", "--version"],
        capture_output=True,
        text=True,
        env=home,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"ferrule {version('ferrule')} ")


# -- stdin and stdout ----------------------------------------------------------------------


def test_piped_stdin_is_the_input_of_call_and_the_question_of_chat(home: dict[str, str]) -> None:
    called = ferrule(home, "call", "echo", stdin='{"text": "piped"}')
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout) == {"text": "piped"}

    asked = ferrule(home, "chat", "-m", "test", stdin="hello from a pipe\n")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip() == "hello from a pipe"  # the test model echoes

    # Piped text first, then the question: `cat notes.txt | ferrule chat "Summarise"`.
    both = ferrule(home, "chat", "-m", "test", "Summarise this.", stdin="The notes.\n")
    assert both.stdout.strip() == "The notes.\n\nSummarise this."


def test_an_idle_pipe_does_not_hang_a_question(home: dict[str, str]) -> None:
    """A parent that leaves stdin an open pipe it never writes (some CI runners, an
    unclosed Popen pipe): `ferrule chat QUESTION` waits 2 s for it, then answers alone."""
    with subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", "chat", "-m", "test", "the question"],
        stdin=subprocess.PIPE,  # open, never written, never closed until the end
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=home,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.wait(timeout=30) == 0
        assert process.stdout.read().strip() == "the question"
        assert "nothing came on stdin within 2 s" in process.stderr.read()


def test_with_nothing_piped_call_takes_an_empty_object(home: dict[str, str]) -> None:
    result = ferrule(home, "call", "echo")  # stdin is /dev/null: nothing is read from it
    assert result.returncode == 1
    assert "$.text" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("plugins", "--json"),
        ("plugins",),
        ("iter", "spell", json.dumps({"text": "x" * 5000})),
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(
    home: dict[str, str], args: tuple[str, ...]
) -> None:
    """`ferrule plugins --json | head -1`: the read end is closed before (or while) the
    command writes; it stops without a traceback."""
    process = subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=home,
    )
    assert process.stdout is not None and process.stderr is not None
    if args[0] == "iter":
        process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 1
    assert stderr == ""


# -- keys ----------------------------------------------------------------------------------


def test_keys_are_stored_privately_listed_masked_and_never_printed(home: dict[str, str]) -> None:
    path = Path(home["XDG_CONFIG_HOME"]) / "ferrule" / "keys.json"
    assert ferrule(home, "keys", "path").stdout.strip() == str(path)
    assert "no stored keys" in ferrule(home, "keys", "list").stdout

    stored = ferrule(home, "keys", "set", "claude", stdin=KEY + "\n")
    assert stored.returncode == 0, stored.stderr
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"anthropic": KEY}  # claude is anthropic's

    ferrule(home, "keys", "set", "openai", stdin="short\n")
    listed = ferrule(home, "keys", "list")
    assert listed.stdout.splitlines() == ["anthropic    …WXYZ", "openai       ****"]
    shadowed = ferrule({**home, "ANTHROPIC_API_KEY": "from-env"}, "keys", "list")
    assert "(unused while ANTHROPIC_API_KEY is set)" in shadowed.stdout
    for result in (stored, listed, shadowed):
        assert KEY not in result.stdout + result.stderr
        assert "short" not in result.stdout + result.stderr

    empty = ferrule(home, "keys", "set", "openai", stdin="\n")
    assert empty.returncode == 1
    assert json.loads(path.read_text())["openai"] == "short"


def test_a_provider_reads_the_stored_key_after_its_variable(
    home: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", home["XDG_CONFIG_HOME"])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(Exception, match="ferrule keys set openai"):
        resolve_api_key("openai", None, ["OPENAI_API_KEY"])
    ferrule(home, "keys", "set", "openai", stdin=KEY)
    assert resolve_api_key("openai", None, ["OPENAI_API_KEY"]) == KEY
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert resolve_api_key("openai", None, ["OPENAI_API_KEY"]) == "from-env"
    assert resolve_api_key("openai", "given", ["OPENAI_API_KEY"]) == "given"


def test_chat_on_an_api_model_uses_the_stored_key(home: dict[str, str]) -> None:
    ferrule(home, "keys", "set", "openai", stdin=KEY)
    with LoopbackServer(validate=wire.validator()) as server:
        server.script(wire.reply(ScriptedTurn(text=("Hello", " from the API"))))
        env = {**home, "OPENAI_BASE_URL": server.url + "/v1"}
        result = ferrule(env, "chat", "-m", "openai:my-model", "Hi")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "Hello from the API"
        (request,) = server.requests
        assert request.headers["authorization"] == f"Bearer {KEY}"
        assert request.json["model"] == "my-model"  # provider:model, the provider's part cut


# -- config.toml ---------------------------------------------------------------------------


def write_config(home: dict[str, str], text: str) -> Path:
    path = Path(home["XDG_CONFIG_HOME"]) / "ferrule" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_sets_the_default_model_and_aliases(home: dict[str, str]) -> None:
    write_config(home, 'default_model = "echo"\n\n[aliases]\necho = "test"\n')
    result = ferrule(home, "chat", "from the default")  # SmolLM2 would not echo
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from the default"
    assert ferrule(home, "chat", "-m", "echo", "via the alias").stdout.strip() == "via the alias"

    other = Path(home["HOME"]) / "other.toml"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text('default_model = "nowhere-model"\n')
    moved = ferrule({**home, "FERRULE_CONFIG": str(other)}, "chat", "hi")
    assert moved.returncode == 1
    assert "nowhere-model" in moved.stderr


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("default_model = \n", "is not valid TOML"),
        ('defualt_model = "test"\n', "unknown setting 'defualt_model'"),
        ("[aliases]\nfast = 3\n", "[aliases] must map names to model id strings"),
    ],
)
def test_a_bad_config_file_is_named_in_one_line(
    home: dict[str, str], text: str, fault: str
) -> None:
    path = write_config(home, text)
    result = ferrule(home, "chat", "-m", "test", "hi")
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert str(path) in line and fault in line


# -- provider:model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kernel() -> Kernel:
    return new_kernel()


@pytest.mark.parametrize(
    ("model", "provider", "rest"),
    [
        ("openai:gpt-4o", "openai", "gpt-4o"),
        ("claude:claude-sonnet-4-20250514", "claude", "claude-sonnet-4-20250514"),
        ("unsloth/Qwen3-8B-GGUF:Q4_K_M", None, "unsloth/Qwen3-8B-GGUF:Q4_K_M"),  # a quant
        ("llama3:8b", None, "llama3:8b"),  # no provider of that name
        ("gpt-4o", None, "gpt-4o"),
    ],
)
def test_provider_model_ids(kernel: Kernel, model: str, provider: str | None, rest: str) -> None:
    assert split_provider(kernel, model) == (provider, rest)


def test_provider_model_routes_to_that_provider(kernel: Kernel) -> None:
    route = route_model(kernel, "openai:some-local-name")
    assert route.component_type == "openai_language_model"
    assert route.attributes == {"model": "some-local-name"}
    local = route_model(kernel, "someone/Tiny-GGUF:Q8_0")
    assert local.component_type == "llamacpp_language_model"


# -- components on a server ----------------------------------------------------------------


def test_define_call_iter_and_delete_components_on_a_server(home: dict[str, str]) -> None:
    kernel = new_kernel()
    with ServerThread(kernel, token="s3cret") as url:
        env = {**home, "FERRULE_URL": url, "FERRULE_TOKEN": "s3cret"}
        defined = ferrule(env, "define", "test_language_model", "lm0", '{"delay": 0}')
        assert defined.returncode == 0, defined.stderr
        assert kernel.components() == {"lm0": "test_language_model"}  # outlives the command

        request = {"messages": [{"role": "user", "content": "two words"}]}
        streamed = ferrule(env, "iter", "lm0.infer", stdin=json.dumps(request))
        assert streamed.returncode == 0, streamed.stderr
        items = [json.loads(line) for line in streamed.stdout.splitlines()]
        assert "".join(i["message"]["content"][0]["text"] for i in items) == "two words"
        assert items[-1]["finish_reason"] == "stop"

        remote_echo = ferrule({**home}, "call", "echo", '{"text": "x"}', "--url", url)
        assert remote_echo.returncode == 1
        assert "unauthorized" in remote_echo.stderr

        deleted = ferrule(env, "delete", "lm0")
        assert deleted.returncode == 0, deleted.stderr
        assert kernel.components() == {}
        again = ferrule(env, "delete", "lm0")
        assert again.returncode == 1
        assert "lm0" in again.stderr


@pytest.mark.parametrize(
    "args",
    [("define", "test_language_model", "lm0"), ("delete", "lm0")],
)
def test_define_and_delete_need_a_server(home: dict[str, str], args: tuple[str, ...]) -> None:
    result = ferrule(home, *args)
    assert result.returncode == 2
    assert "ferrule serve" in result.stderr and "--url" in result.stderr


def test_a_method_without_a_server_says_where_components_live(home: dict[str, str]) -> None:
    result = ferrule(home, "iter", "lm0.infer", "{}")
    assert result.returncode == 1
    assert "components live on a ferrule server" in result.stderr


# -- plugins -------------------------------------------------------------------------------


def test_plugins_say_what_each_thing_does(home: dict[str, str]) -> None:
    listed = json.loads(ferrule(home, "plugins", "--json").stdout)
    exllama = next(p for p in listed if p["name"] == "exllama")
    description = exllama["descriptions"]["exllama_language_model"]
    assert "one at a time" in description and "flash-attn" in description
    echo = next(p for p in listed if p["name"] == "echo")
    assert echo["operators"] == ["echo"]
    assert set(echo["descriptions"]) == {"echo"} and echo["descriptions"]["echo"]
    image = next(p for p in listed if p["name"] == "image")
    assert image["hooks"] == ["ferrule_register_part_types"] and image["part_types"] == ["image"]

    table = ferrule(home, "plugins", "--format", "table", "--all").stdout
    assert "component type exllama_language_model" in table
    assert "one at a time" in table
    assert "content type image" in table


def test_plugins_in_a_pipe_are_a_line_each_and_all_is_a_line_per_name(
    home: dict[str, str],
) -> None:
    # stdout is a pipe here: lines for grep, cut and awk, not a table of boxes
    listed = json.loads(ferrule(home, "plugins", "--json").stdout)
    lines = ferrule(home, "plugins").stdout.splitlines()
    assert len(lines) == len(listed)
    rows = {line.split()[0]: line.split(maxsplit=4) for line in lines}
    assert rows["echo"] == [
        "echo",
        "ferrule-echo",
        version("ferrule-echo"),
        "ok",
        "operators: echo",
    ]
    assert rows["image"][4] == "content types: image"
    assert rows["ray"][4] == "placement"
    assert rows["openai"][4].endswith("; API model ids; embedder ids")

    named = ferrule(home, "plugins", "--all").stdout.splitlines()
    echo = [line.split(maxsplit=3) for line in named if line.startswith("echo ")]
    assert echo == [["echo", "operator", "echo", "Return the input text as given."]]
    registered = sum(len(p["operators"]) + len(p["component_types"]) for p in listed)
    assert sum(line.split()[1] in ("operator", "component") for line in named) == registered

    # a terminal still gets the table, one row per plugin (no descriptions without --all)
    table = ferrule(home, "plugins", "--format", "table").stdout
    assert "┃ plugin" in table and "operators: echo" in table
    assert "Return the input text as given." not in table
