"""``ferrule chat --web`` end to end: Debian's chromium, headless, driven by Playwright,
against the web chat on the test model (scripted: reasoning, a tool call, a long answer)
and on the offline default model. Each state is also saved as a screenshot: into docs/img/
(which docs/webchat.md shows) with ``FERRULE_WEBCHAT_SCREENSHOTS=docs/img``.

Browsers cannot be downloaded here (no ``playwright install``): the system's chromium is
used, and installed with apt-get when it is missing and we are root (a fresh CI machine);
when it cannot be had the tests fail saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Where the screenshots go: docs/img/ when asked for (FERRULE_WEBCHAT_SCREENSHOTS=docs/img,
#: as docs/webchat.md says), else a temporary folder, so a test run leaves the tree as it was.
SCREENSHOTS_ENV = "FERRULE_WEBCHAT_SCREENSHOTS"
#: Milliseconds the page gets for anything a model does (the offline model loads first).
WAIT = 120_000

#: A slow answer (about 9 s), to watch it stream and to stop it.
STORY_WORDS = 300
LONG_STORY = " ".join(f"word{i}" for i in range(STORY_WORDS))
LAST_WORD = f"word{STORY_WORDS - 1}"


def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


def scripted(request: Any) -> Any:
    """The scripted model: a tool call for "add", a slow long answer for "story", what
    it was sent for anything else (attachments and how many earlier messages)."""
    last = request.messages[-1]
    if last.role == "tool":
        return {"text": f"The sum is {last.text}."}
    question = last.text
    if "add" in question:
        return {
            "reasoning": "The user wants a sum: I call the add tool.",
            "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}],
        }
    if "story" in question:
        return {"text": LONG_STORY, "delay": 0.03}
    attached = [type(p).__name__ for p in last.contents if type(p).__name__ != "TextPart"]
    earlier = [m.text for m in request.messages[:-1] if m.role == "user"]
    return {
        "text": f"You sent {question!r} with {len(attached)} attachment(s) "
        f"{attached}; earlier questions: {earlier}."
    }


def png(path: Path, width: int = 48, height: int = 32) -> Path:
    """A small red-to-blue PNG, written by hand (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(
        b"\x00" + b"".join(bytes([255 - 5 * x, 60, 5 * x]) for x in range(width))
        for _ in range(height)
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
    return path


# -- the transcript, without a browser ---------------------------------------------------------

_DELTA = st.text(alphabet="abc ", min_size=1, max_size=5)
_RESPONSES = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["output_text", "reasoning"]), _DELTA),
        st.tuples(st.just("tool_call"), st.integers(0, 9)),
        st.tuples(st.just("tool_call_result"), st.integers(0, 9)),
    ),
    max_size=30,
)


@given(_RESPONSES)
def test_each_response_type_gets_its_own_boxes(items):
    """As the agent's sink streams them: a new text or reasoning box only when the type
    switches, a box for every tool call and every result."""
    from ferrule import AgentResponse
    from ferrule.webchat.app import REASONING_TITLE, TOOL_CALL_TITLE, Transcript

    transcript = Transcript([])
    expected: list[tuple[str | None, str]] = []  # (title, content) of each box
    previous = None
    for kind, value in items:
        switched = kind != previous
        previous = kind
        if kind in ("output_text", "reasoning"):
            content: Any = value
            title = REASONING_TITLE if kind == "reasoning" else None
            if switched:
                expected.append((title, value))
            else:
                expected[-1] = (title, expected[-1][1] + value)
        elif kind == "tool_call":
            content = {
                "id": f"call_{value}",
                "function": {"name": "add", "arguments": {"a": value}},
            }
            expected.append((TOOL_CALL_TITLE.format(name="add"), f'"a": {value}'))
        else:
            content = {"tool_call_id": f"call_{value}", "name": "add", "result": value}
            expected.append(("Tool result: add", str(value)))
        role = "tool" if kind == "tool_call_result" else "assistant"
        transcript.add(AgentResponse(kind, role, switched, content))
    transcript.end()
    boxes = transcript.messages
    assert [b.get("metadata", {}).get("title") for b in boxes] == [t for t, _ in expected]
    for box, (title, content) in zip(boxes, expected, strict=True):
        if title is None or title == REASONING_TITLE:
            assert box["content"] == content
        else:
            assert content in box["content"]
    assert all(b["metadata"].get("status") != "pending" for b in boxes if "metadata" in b)


def test_a_stopped_run_says_so_an_error_names_its_kind_a_pause_its_tool():
    from ferrule import AgentResponse
    from ferrule.webchat.app import PAUSED_NOTE, STOPPED_NOTE, Transcript
    from ferrule_kernel import RequestCancelledError
    from ferrule_kit.errors import UnsupportedContentError

    transcript = Transcript([])
    transcript.add(AgentResponse("output_text", "assistant", True, "Once"))
    cancelled = RequestCancelledError("the run was cancelled")
    transcript.add(AgentResponse("error", "assistant", True, cancelled.message, cancelled))
    refused = UnsupportedContentError("no images here", field="$.messages[0].content[1]")
    transcript.add(AgentResponse("error", "assistant", True, refused.message, refused))
    paused = {"run_id": "r1", "requirements": [{"tool_call_id": "c1", "name": "wipe"}]}
    transcript.add(AgentResponse("paused", "assistant", True, paused))
    assert [m["content"] for m in transcript.messages] == [
        "Once",
        STOPPED_NOTE,
        "**Error** (unsupported_content): no images here",
        f"{PAUSED_NOTE} (wipe)",
    ]


def test_a_file_no_content_plugin_reads_is_refused_naming_the_field(tmp_path):
    from ferrule.webchat import attachment_part
    from ferrule_kernel import InvalidInputError

    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)))
    with pytest.raises(InvalidInputError) as refused:
        attachment_part(str(data), "files[0]")
    assert refused.value.message.startswith("files[0] (data.bin): not a PDF or UTF-8 text")
    assert [e["path"] for e in refused.value.details["errors"]] == ["files[0].data"]


# -- the browser ----------------------------------------------------------------------------


def _install_chromium() -> str:
    """Why chromium is missing after trying to install it (empty when it is there)."""
    if os.path.exists(CHROMIUM):
        return ""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return (
            f"{CHROMIUM} is missing and cannot be installed here (not root, or no apt-get): "
            "apt-get install chromium"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            return f"{' '.join(command)} failed: {done.stderr[-2000:]}"
    return "" if os.path.exists(CHROMIUM) else f"apt-get installed chromium, but not {CHROMIUM}"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    why = _install_chromium()
    if why:
        pytest.fail(f"the web chat tests need Debian's chromium: {why}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1100, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


# -- the chat -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def web_chat(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The web chat in this process on a free loopback port, with the scripted test model,
    the echoing one and the offline default model, and a token."""
    import secrets

    from ferrule import LocalModel, Runtime
    from ferrule.db.sqlite import SqliteDb
    from ferrule.webchat import WebChat, WebChatServer, create_app
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL
    from ferrule_testmodel import TestModel

    folder = tmp_path_factory.mktemp("webchat")
    token = secrets.token_urlsafe(32)
    with Runtime() as rt:
        chat = WebChat(
            rt,
            {
                "scripted": TestModel(function=scripted),
                "test": LocalModel("test"),
                DEFAULT_LOCAL_MODEL: LocalModel(DEFAULT_LOCAL_MODEL),
            },
            default_model="scripted",
            storage=SqliteDb(db_file=folder / "chats.db"),
            tools=[add],
        )
        server = WebChatServer(
            create_app(chat, token=token, bound_host="127.0.0.1"), "127.0.0.1", 0
        )
        server.start()
        try:
            yield {"url": server.url, "token": token, "chat": chat, "db": folder / "chats.db"}
        finally:
            server.stop()
            chat.close()


@pytest.fixture
def page(browser: Any, web_chat: dict[str, Any]) -> Iterator[Any]:
    """A new tab on the chat, signed in with the token, on a new chat."""
    tab = browser.new_page()
    tab.goto(f"{web_chat['url']}/?token={web_chat['token']}")
    tab.wait_for_selector("#box textarea", timeout=WAIT)
    try:
        yield tab
    finally:
        tab.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get(SCREENSHOTS_ENV)
    return Path(folder) if folder else tmp_path_factory.mktemp("screenshots")


def screenshot(page: Any, folder: Path, name: str) -> None:
    """The page as it is now, once Gradio's folds and progress marks have settled."""
    page.wait_for_timeout(1000)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"webchat-{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000  # a page, not a blank


def ask(page: Any, text: str) -> None:
    """Send ``text`` (with what is attached), and wait until the chat shows it: from then
    on the stop button is there until the reply ends (`wait_until_idle`)."""
    sent = page.locator('#chat [data-testid="user"]').count()
    page.fill("#box textarea", text)
    page.press("#box textarea", "Enter")
    page.wait_for_function(
        f"() => document.querySelectorAll('#chat [data-testid=user]').length > {sent}",
        timeout=WAIT,
    )


def choose(page: Any, dropdown: str, option: str) -> None:
    page.click(f"{dropdown} input")
    page.click(f"{dropdown} [role=option]:has-text({option!r})")


def bot_texts(page: Any) -> list[str]:
    return [t.strip() for t in page.locator('#chat [data-testid="bot"]').all_inner_texts()]


def box_titles(page: Any) -> list[str]:
    return [t.strip() for t in page.locator("#chat .thought-group .title").all_inner_texts()]


def wait_until_idle(page: Any) -> None:
    """Until the reply has ended: the send button is back in place of stop."""
    page.wait_for_selector("#box button.submit-button", state="visible", timeout=WAIT)
    page.wait_for_selector("#box button.stop-button", state="detached", timeout=WAIT)


# -- the tests ------------------------------------------------------------------------------


def test_a_question_streams_into_the_chat(page, screenshots):
    ask(page, "tell me a story")
    first = page.locator('#chat [data-testid="bot"]').last
    page.wait_for_function(
        "() => { const b = document.querySelectorAll('#chat [data-testid=bot]');"
        " return b.length && b[b.length - 1].innerText.includes('word20'); }",
        timeout=WAIT,
    )
    partial = first.inner_text()
    assert LAST_WORD not in partial  # still streaming
    screenshot(page, screenshots, "streaming")
    page.wait_for_function(
        f"() => document.querySelector('#chat').innerText.includes('{LAST_WORD}')", timeout=WAIT
    )
    wait_until_idle(page)
    assert bot_texts(page)[-1] == LONG_STORY


def test_reasoning_a_tool_call_and_its_result_each_get_a_box(page, screenshots):
    page.check("#reasoning input")
    ask(page, "please add 2 and 3")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('The sum is 5.')",
        timeout=WAIT,
    )
    wait_until_idle(page)
    assert box_titles(page) == ["Reasoning", "Tool call: add", "Tool result: add"]
    chat = page.inner_text("#chat")
    # the tool call's box shows its arguments, the result's box the result
    assert '"a": 2' in chat and '"b": 3' in chat
    texts = bot_texts(page)
    assert texts[-1] == "The sum is 5."
    # the reasoning box is a fold (closed once done, unless it was opened): open, it shows
    shows_reasoning = (
        "() => document.querySelector('#chat').innerText.includes('I call the add tool')"
    )
    page.wait_for_timeout(1000)  # the fold closes as the reply ends
    if not page.evaluate(shows_reasoning):
        page.click("#chat .thought-group .title >> nth=0")
        page.wait_for_function(shows_reasoning, timeout=WAIT)
    screenshot(page, screenshots, "tool-call")


def test_an_image_is_attached_and_reaches_the_model(page, screenshots, tmp_path):
    image = png(tmp_path / "red.png")
    page.set_input_files("#box input[type=file]", str(image))
    page.wait_for_selector("#box .thumbnail-item", timeout=WAIT)
    ask(page, "what is in this picture")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('attachment(s)')",
        timeout=WAIT,
    )
    wait_until_idle(page)
    assert "with 1 attachment(s) ['ImagePart']" in bot_texts(page)[-1]
    assert page.locator('#chat [data-testid="user"] img').count() == 1  # shown in the chat
    screenshot(page, screenshots, "image")


def test_the_offline_model_answers_and_refuses_an_image(page, screenshots, tmp_path):
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    choose(page, "#model", DEFAULT_LOCAL_MODEL)
    page.uncheck("#tools label:has-text('add') input")  # a plain answer: no tools offered
    ask(page, "Say hello in one short sentence.")
    wait_until_idle(page)
    page.wait_for_function(
        "() => document.querySelectorAll('#chat [data-testid=bot]').length > 0", timeout=WAIT
    )
    answer = bot_texts(page)[-1]
    assert answer and not answer.startswith("Error"), answer
    page.set_input_files("#box input[type=file]", str(png(tmp_path / "red.png")))
    page.wait_for_selector("#box .thumbnail-item", timeout=WAIT)
    ask(page, "what is in this picture")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('unsupported_content')",
        timeout=WAIT,
    )
    wait_until_idle(page)
    refusal = bot_texts(page)[-1]
    assert refusal.startswith("Error (unsupported_content)"), refusal
    assert "image" in refusal
    screenshot(page, screenshots, "image-refused")


def test_stop_ends_the_answer_midway(page, screenshots, web_chat):
    ask(page, "tell me another story")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('word10')", timeout=WAIT
    )
    page.click("#box button.stop-button")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('(stopped)')", timeout=WAIT
    )
    wait_until_idle(page)
    story = bot_texts(page)[-2]
    page.wait_for_timeout(1500)  # nothing more arrives
    assert bot_texts(page)[-2] == story
    assert LAST_WORD not in story
    assert web_chat["chat"]._running == {}  # the run was cancelled, not left streaming
    screenshot(page, screenshots, "stopped")
    # the chat goes on
    ask(page, "are you there")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes(\"You sent 'are you there'\")",
        timeout=WAIT,
    )


def test_a_session_is_listed_and_resumed(page, screenshots, web_chat):
    ask(page, "remember the word papaya")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('papaya\\' with')",
        timeout=WAIT,
    )
    wait_until_idle(page)
    page.click("#new-chat")
    page.wait_for_function(
        "() => !document.querySelector('#chat').innerText.includes('papaya')", timeout=WAIT
    )
    choose(page, "#sessions", "remember the word papaya")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes('papaya')", timeout=WAIT
    )
    ask(page, "which word was it")
    page.wait_for_function(
        "() => document.querySelector('#chat').innerText.includes(\"You sent 'which word\")",
        timeout=WAIT,
    )
    wait_until_idle(page)
    # the model was sent the resumed session's history
    assert "earlier questions: ['remember the word papaya']" in bot_texts(page)[-1]
    screenshot(page, screenshots, "session-resumed")


def test_sessions_outlive_the_chat(web_chat):
    """Another chat on the same db (a restarted ``ferrule chat --web``) lists them."""
    from ferrule import LocalModel, Runtime
    from ferrule.db.sqlite import SqliteDb
    from ferrule.webchat import WebChat

    with Runtime() as rt:
        chat = WebChat(
            rt,
            {"test": LocalModel("test")},
            default_model="test",
            storage=SqliteDb(db_file=web_chat["db"]),
        )
        try:
            labels = [label for label, _ in chat.sessions()]
            session = next(sid for label, sid in chat.sessions() if "papaya" in label)
            shown = chat.history(session)
        finally:
            chat.close()
    assert any(label.startswith("remember the word papaya") for label in labels)
    assert [m["role"] for m in shown[:2]] == ["user", "assistant"]
    assert shown[0]["content"] == "remember the word papaya"


# -- uploads ---------------------------------------------------------------------------------


def stored_uploads(name: str) -> list[Path]:
    """Where Gradio keeps the uploaded files called ``name``."""
    from gradio.utils import get_upload_folder

    return sorted(Path(get_upload_folder()).rglob(name))


def test_a_file_over_the_limit_is_refused_and_not_stored(page, web_chat, tmp_path):
    from ferrule.webchat.app import DEFAULT_MAX_FILE_SIZE

    assert web_chat["chat"].max_file_size == DEFAULT_MAX_FILE_SIZE
    big = tmp_path / f"big-{os.getpid()}-{id(page)}.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"0" * DEFAULT_MAX_FILE_SIZE)
    page.set_input_files("#box input[type=file]", str(big))
    page.wait_for_function(
        "() => document.body.innerText.includes('exceed the maximum allowed size')",
        timeout=WAIT,
    )
    assert big.name in page.inner_text("body")
    assert page.locator("#box .thumbnail-item").count() == 0
    # a client that skips the page's check: the upload route refuses it while reading it
    boundary = "ferrule-test-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; '
            f'filename="{big.name}"\r\nContent-Type: application/pdf\r\n\r\n'
        ).encode()
        + big.read_bytes()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        f"{web_chat['url']}/gradio_api/upload",
        data=body,
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Authorization": f"Bearer {web_chat['token']}",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 413
    assert "maximum allowed size" in refused.value.read().decode()
    assert stored_uploads(big.name) == []


def test_the_files_a_session_attached_are_deleted_when_it_ends(browser, web_chat, tmp_path):
    # a size no other test uploads: Gradio keeps each content in a folder named by its hash
    image = png(tmp_path / f"session-{os.getpid()}-{id(tmp_path)}.png", width=37, height=23)
    tab = browser.new_page()
    try:
        tab.goto(f"{web_chat['url']}/?token={web_chat['token']}")
        tab.wait_for_selector("#box textarea", timeout=WAIT)
        tab.set_input_files("#box input[type=file]", str(image))
        tab.wait_for_selector("#box .thumbnail-item", timeout=WAIT)
        ask(tab, "what is in this picture")
        tab.wait_for_function(
            "() => document.querySelector('#chat').innerText.includes('attachment(s)')",
            timeout=WAIT,
        )
        wait_until_idle(tab)
        [stored] = stored_uploads(image.name)
        assert stored.read_bytes() == image.read_bytes()
    finally:
        tab.close()
    # the tab is closed: Gradio ends its session (unload), and the chat deletes its files
    deadline = time.monotonic() + WAIT / 1000
    while stored.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not stored.exists()
    assert not stored.parent.exists()  # the folder Gradio made for it too
    assert all(str(stored) not in files for files in web_chat["chat"]._uploads.values())


# -- who may use it -------------------------------------------------------------------------


def _get(url: str, **headers: str) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=30) as answer:
            return answer.status, dict(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_the_token_host_and_origin_are_checked(web_chat):
    url, token = web_chat["url"], web_chat["token"]
    status, _, body = _get(f"{url}/")
    assert status == 401 and "needs its token" in body
    assert _get(f"{url}/?token=wrong")[0] == 401
    assert _get(f"{url}/config", Cookie="ferrule_webchat=wrong")[0] == 401
    status, headers, _ = _get(f"{url}/?token={token}")
    assert status == 303 and headers["location"] == "/"  # the token leaves the address
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert _get(f"{url}/", Cookie=cookie.split(";")[0])[0] == 200
    assert _get(f"{url}/", Authorization=f"Bearer {token}")[0] == 200
    # a DNS-rebinding page names its own host; a cross-site page its own origin
    status, _, body = _get(f"{url}/?token={token}", Host="attacker.example")
    assert status == 421 and "attacker.example" in body
    status, _, body = _get(f"{url}/", Cookie=cookie.split(";")[0], Origin="http://attacker.example")
    assert status == 403 and "attacker.example" in body
    assert token not in repr(web_chat["chat"])


def test_a_browser_without_the_token_is_refused(browser, web_chat):
    tab = browser.new_page()
    try:
        tab.context.clear_cookies()
        answer = tab.goto(f"{web_chat['url']}/")
        assert answer.status == 401
        assert "needs its token" in tab.inner_text("body")
    finally:
        tab.close()


# -- the command ----------------------------------------------------------------------------


def _ferrule(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ferrule.cli", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_ferrule_chat_web_prints_an_address_with_a_fresh_token(tmp_path):
    env = {**os.environ, "FERRULE_STORAGE_DIR": str(tmp_path)}
    env.pop("FERRULE_TOKEN", None)
    process = _ferrule("chat", "--web", "-m", "test", "--port", "0", env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ferrule chat --web: open http://127.0.0.1:"), (
            line + process.stderr.read() if process.poll() is not None else line
        )
        address = line.split("open ", 1)[1].split()[0]
        base, _, token = address.partition("/?token=")
        assert len(token) >= 32
        assert _get(f"{base}/")[0] == 401
        assert _get(f"{base}/", Authorization=f"Bearer {token}")[0] == 200
    finally:
        process.terminate()
        process.wait(30)


def test_the_command_keeps_uploads_in_a_private_folder_it_removes_at_exit(tmp_path):
    env = {**os.environ, "FERRULE_STORAGE_DIR": str(tmp_path)}
    env.pop("GRADIO_TEMP_DIR", None)
    process = _ferrule("chat", "--web", "-m", "test", "--port", "0", env=env)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        address = line.split("open ", 1)[1].split()[0]
        base, _, token = address.partition("/?token=")
        boundary = "ferrule-test-boundary"
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; '
            f'filename="note.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n'
            f"--{boundary}--\r\n"
        ).encode()
        request = urllib.request.Request(
            f"{base}/gradio_api/upload",
            data=body,
            headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Authorization": f"Bearer {token}",
            },
        )
        with urllib.request.urlopen(request, timeout=60) as answer:
            [stored] = json.loads(answer.read())
        folder = Path(stored).parent.parent
        assert folder.name.startswith("ferrule-webchat-")
        assert folder.stat().st_mode & 0o777 == 0o700
        assert Path(stored).read_text() == "hello"
    finally:
        process.terminate()
        process.wait(30)
    assert not folder.exists()


def test_beyond_loopback_a_token_is_required():
    process = _ferrule("chat", "--web", "--host", "0.0.0.0", "--no-token")
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert "refusing to serve on '0.0.0.0' without a token" in err


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        (["a question"], "--web takes no question"),
        (["--session", "work"], "--session is the terminal chat's"),
        (["--no-token", "--token", "x" * 32], "give --token or --no-token, not both"),
        (["--max-upload-mib", "0"], "--max-upload-mib must be more than 0"),
    ],
)
def test_options_that_do_not_go_with_web_are_refused(options, refusal):
    process = _ferrule("chat", "--web", "-m", "test", *options)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2
    assert refusal in err


def test_the_picker_lists_the_installed_models():
    from ferrule import Runtime
    from ferrule.cli.webchat import installed_models
    from ferrule_kit.models.lmspec import DEFAULT_LOCAL_MODEL

    with Runtime() as rt:
        models = installed_models(rt, "claude-sonnet-4-20250514")
    assert next(iter(models)) == "claude-sonnet-4-20250514"  # the chosen one comes first
    assert models["test"] == "test"  # ferrule-testmodel is installed
    assert DEFAULT_LOCAL_MODEL in models  # ferrule-smollm2 ships its weights


def test_gradio_is_imported_only_for_the_web_chat():
    code = (
        "import sys, ferrule\n"
        "from ferrule.cli import build_parser\n"
        "build_parser().parse_args(['chat', '-m', 'test', 'hi'])\n"
        "assert 'gradio' not in sys.modules and 'ferrule.webchat' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
