"""The web chat's page, on Gradio: one message box per response type, as the agent guide's
Gradio example builds it on `AgentResponse.is_type_switched`.

A reply streams into the chat as boxes: reasoning (collapsible), each tool call with its
arguments, each tool result, and the text. Attachments become content parts through what
content plugins export (``ImageContent``, ``AudioContent``, ``DocumentContent``); the
chosen model's provider checks them against its `ferrule_kit.content.policy.ContentPolicy` and a
model that cannot take one refuses it with a typed error, shown in the chat. Every run is
stored in a session of the chat's storage component, so the session list can reopen a
conversation, and the model continues it with its history.

Uploads are bounded (``max_file_size``, `DEFAULT_MAX_FILE_SIZE`: the page refuses a larger
file before sending it and Gradio's upload route refuses it with 413 while reading it).
The files a browser attached are deleted when its session ends (the tab is closed) or the
chat closes; Gradio sweeps uploads never sent (`UPLOAD_SWEEP`) and deletes the rest when
the server stops.
"""

from __future__ import annotations

import contextlib
import json
import mimetypes
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import gradio as gr
from ferrule_kernel import FerruleError, InvalidInputError, RequestCancelledError, field_errors
from ferrule_kit.content.messages import Message, TextPart

if TYPE_CHECKING:
    from ..agent import Agent
    from ..db.base import StorageDb
    from ..runtime import Runtime

#: The agent name every web chat run is stored under (its sessions are the chat's).
AGENT_NAME = "ferrule web chat"
#: Runs of a session the model sees as history.
HISTORY_RUNS = 20
#: Characters of a session's first question that name it in the list.
TITLE_LENGTH = 60
#: The largest file the page takes, in bytes: what the providers take inline (OpenAI's
#: and Gemini's images, 20 MB), and room for a document.
DEFAULT_MAX_FILE_SIZE = 20 * 1024 * 1024
#: Gradio's cache sweep, (every, older than) in seconds: uploads a browser attached but
#: never sent (no session knows them) are gone within a day.
UPLOAD_SWEEP = (3600, 86400)

ChatHistory = list[dict[str, Any]]

#: Box titles, one per response type; tests and docs find the boxes by them.
REASONING_TITLE = "Reasoning"
TOOL_CALL_TITLE = "Tool call: {name}"
TOOL_RESULT_TITLE = "Tool result: {name}"
STOPPED_NOTE = "(stopped)"
PAUSED_NOTE = "(paused: a tool waits for a confirmation, which this chat cannot give)"

#: What content plugins export for each kind of file: the class whose ``from_path`` makes
#: the part (`ferrule_kit.content.parts.PartRegistry.export`; `ferrule.catalog.EXPORTS` says which
#: distribution to install when none does).
_CONTENT_CLASSES = {"image": "ImageContent", "audio": "AudioContent"}
_DOCUMENT_CLASS = "DocumentContent"


def attachment_part(path: str, field: str) -> Any:
    """The file at ``path`` as a content part: an image, audio, or else a document."""
    from ferrule_kit.content.parts import registry

    from ..catalog import install_hint

    mime = mimetypes.guess_type(path)[0] or ""
    export = _CONTENT_CLASSES.get(mime.partition("/")[0], _DOCUMENT_CLASS)
    try:
        content = registry.export(export)
    except KeyError:
        hint = install_hint("export", export) or ""
        raise InvalidInputError(
            f"{path.rsplit('/', 1)[-1]}: no content plugin that reads {mime or 'this file'} "
            f"is installed. {hint}".strip(),
            field=field,
        ) from None
    try:
        return content.from_path(path)
    except InvalidInputError as exc:  # the plugin's field is its own: say which file
        name = path.rsplit("/", 1)[-1]
        raise InvalidInputError(
            f"{field} ({name}): {exc.message}", errors=field_errors(exc, field)
        ) from None


def _busy(**update: Any) -> Any:
    """The input box while a reply streams: the stop button in place of send."""
    return gr.MultimodalTextbox(submit_btn=False, stop_btn=True, **update)


def _idle() -> Any:
    return gr.MultimodalTextbox(submit_btn=True, stop_btn=False)


def _tool_name(tool: Any) -> str:
    """What the Tools boxes call a tool: a preset's name, a function's, a `Tool`'s."""
    if isinstance(tool, str):
        return tool
    return str(getattr(tool, "name", None) or getattr(tool, "__name__", None) or tool)


def _json(value: Any) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False, indent=2) + "\n```"


def _error_text(error: FerruleError) -> str:
    return f"**Error** ({error.kind}): {error.message}"


class Transcript:
    """The chat's messages (Gradio's message dicts) as a run's responses arrive: a new box
    whenever the response type switches, deltas appended to the open one."""

    def __init__(self, messages: ChatHistory) -> None:
        self.messages = messages
        self._tool_names: dict[str, str] = {}

    def _close_open_box(self) -> None:
        if self.messages:
            metadata = self.messages[-1].get("metadata")
            if metadata and metadata.get("status") == "pending":
                metadata["status"] = "done"

    def _box(self, content: str, title: str | None = None, **metadata: Any) -> None:
        self._close_open_box()
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if title is not None:
            message["metadata"] = {"title": title, **metadata}
        self.messages.append(message)

    def add(self, response: Any) -> None:
        kind, content = response.type, response.content
        if kind in ("output_text", "reasoning"):
            if response.is_type_switched or not self.messages:
                if kind == "reasoning":
                    self._box("", REASONING_TITLE, status="pending")
                else:
                    self._box("")
            self.messages[-1]["content"] += content
        elif kind == "tool_call":
            function = content["function"]
            call_id = str(content.get("id") or len(self.messages))
            self._tool_names[call_id] = function["name"]
            self._box(
                _json(function["arguments"]),
                TOOL_CALL_TITLE.format(name=function["name"]),
                id=call_id,
            )
        elif kind == "tool_call_result":
            name = content.get("name") or self._tool_names.get(content.get("tool_call_id"), "tool")
            shown = content["result"] if "error" not in content else {"error": content["error"]}
            self._box(_json(shown), TOOL_RESULT_TITLE.format(name=name))
        elif kind == "error":
            self.error(response.error or FerruleError(str(content)))
        elif kind == "paused":  # a tool that asks for a confirmation: not asked here yet
            names = ", ".join(r["name"] for r in content["requirements"])
            self._box(f"{PAUSED_NOTE} ({names})")

    def error(self, error: FerruleError) -> None:
        self._box(STOPPED_NOTE if isinstance(error, RequestCancelledError) else _error_text(error))

    def end(self) -> None:
        self._close_open_box()

    def replay(self, messages: Sequence[Message]) -> None:
        """A stored session's messages, as the chat showed them (reasoning is not stored)."""
        for message in messages:
            if message.role == "user":
                text = "\n\n".join(
                    p.text if isinstance(p, TextPart) else f"(attached: {type(p).__name__})"
                    for p in message.contents
                )
                self.messages.append({"role": "user", "content": text})
            elif message.role == "assistant":
                if message.text:
                    self._box(message.text)
                for call in message.tool_calls:
                    self._tool_names[call.id] = call.name
                    self._box(
                        _json(call.arguments), TOOL_CALL_TITLE.format(name=call.name), id=call.id
                    )
            elif message.role == "tool":
                name = self._tool_names.get(message.tool_call_id or "", "tool")
                try:
                    shown = json.loads(message.text)
                except ValueError:
                    shown = message.text
                self._box(_json(shown), TOOL_RESULT_TITLE.format(name=name))


class WebChat:
    """The chat over one ``runtime``: ``models`` maps the picker's labels to what
    `Agent` takes as a model (a `LocalModel`, an `APIModel`, a `TestModel`, ...);
    ``storage`` is the db the sessions live in (a `SqliteDb`, ...)."""

    def __init__(
        self,
        runtime: Runtime,
        models: Mapping[str, Any],
        *,
        default_model: str,
        storage: StorageDb,
        tools: Sequence[Any] = (),
        system_message: str | None = None,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    ) -> None:
        if not isinstance(max_file_size, int) or isinstance(max_file_size, bool):
            raise InvalidInputError("must be a number of bytes", field="max_file_size")
        if max_file_size < 1:
            raise InvalidInputError("must be at least 1 byte", field="max_file_size")
        if not models:
            raise InvalidInputError("the web chat needs at least one model", field="models")
        if default_model not in models:
            raise InvalidInputError(
                f"{default_model!r} is not one of the models: {', '.join(models)}",
                field="default_model",
            )
        self.runtime = runtime
        self.models = dict(models)
        self.default_model = default_model
        self.tools = list(tools)
        self.system_message = system_message
        self.max_file_size = max_file_size
        self._storage = f"webchat-db-{uuid.uuid4().hex[:8]}"
        runtime.define(storage.component_type, self._storage, storage.attributes(runtime))
        #: The tools by the names the page's Tools boxes show.
        self._tools = {_tool_name(tool): tool for tool in self.tools}
        self._agents: dict[tuple[str, frozenset[str]], Agent[Any]] = {}
        self._lock = threading.Lock()
        #: Gradio's browser session -> (agent, run id) of the run it streams now.
        self._running: dict[str, tuple[Agent[Any], str]] = {}
        #: Gradio's browser session -> the uploaded files it attached, deleted when it ends.
        self._uploads: dict[str, set[str]] = {}

    def agent(self, label: str, tools: Sequence[str] = ()) -> Agent[Any]:
        """The agent of the model ``label`` with the ``tools`` of those given to the chat
        (one per choice, shared by every browser: the conversation lives in the session,
        not in the agent)."""
        from ..agent import Agent

        if label not in self.models:
            raise InvalidInputError(
                f"{label!r} is not one of the models: {', '.join(self.models)}", field="model"
            )
        unknown = [name for name in tools if name not in self._tools]
        if unknown:
            raise InvalidInputError(f"no tool named {unknown[0]!r} in this chat", field="tools")
        key = (label, frozenset(tools))
        with self._lock:
            agent = self._agents.get(key)
            if agent is None:
                agent = Agent(
                    self.runtime,
                    self.models[label],
                    system_message=self.system_message,
                    tools=[self._tools[name] for name in self._tools if name in key[1]],
                    name=AGENT_NAME,
                    db=self._storage,
                    add_history_to_context=True,
                    num_history_runs=HISTORY_RUNS,
                )
                self._agents[key] = agent
            return agent

    def close(self) -> None:
        with self._lock:
            agents, self._agents = list(self._agents.values()), {}
        for agent in agents:
            agent.delete()
        self.runtime.delete(self._storage)
        for browser in list(self._uploads):
            self.end_session(browser)

    def end_session(self, browser: str) -> None:
        """A browser session ended (its tab closed): delete the files it attached, and
        the folder Gradio made for each when nothing else is in it."""
        with self._lock:
            files = self._uploads.pop(browser, set())
            # the same bytes uploaded twice are one file (Gradio names it by its hash)
            files -= set().union(*self._uploads.values())
        for path in files:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            with contextlib.suppress(OSError):  # not empty, or gone
                os.rmdir(os.path.dirname(path))

    # -- sessions -------------------------------------------------------------------------

    def sessions(self) -> list[tuple[str, str]]:
        """The stored chats, newest first, as (label, session id)."""
        from ..agent.settings import agent_id_for

        found = self.runtime.call_method(
            self._storage, "list_sessions", {"agent_id": agent_id_for(AGENT_NAME), "limit": 100}
        )["sessions"]
        out = []
        for session in found:
            when = time.strftime("%b %d %H:%M", time.localtime(session["updated_at"]))
            out.append(
                (
                    f"{session.get('name') or session['session_id'][:8]} · {when}",
                    session["session_id"],
                )
            )
        return out

    def history(self, session_id: str) -> ChatHistory:
        messages = self.agent(self.default_model).get_session_messages(
            session_id,
            skip_roles=["system"],
            skip_statuses=["cancelled", "error", "paused", "regenerated"],
        )
        transcript = Transcript([])
        # Agno's `Message` (what the agent returns) as the engine's, which the chat shows
        transcript.replay([m.to_kit() for m in messages])
        return transcript.messages

    # -- a reply --------------------------------------------------------------------------

    async def respond(
        self,
        box: Mapping[str, Any] | None,
        shown: ChatHistory,
        label: str,
        tools: Sequence[str],
        reasoning: bool,
        session_id: str,
        browser: str,
    ) -> AsyncIterator[tuple[Any, ChatHistory]]:
        """Stream one reply: yields (the input box's new value, the chat)."""
        text = str((box or {}).get("text") or "").strip()
        files = [f if isinstance(f, str) else f["path"] for f in (box or {}).get("files") or []]
        if not text and not files:
            return
        with self._lock:
            self._uploads.setdefault(browser, set()).update(files)
        messages: ChatHistory = list(shown)
        if text:
            messages.append({"role": "user", "content": text})
        for path in files:
            messages.append({"role": "user", "content": {"path": path}})
        transcript = Transcript(messages)
        yield _busy(value=None), messages
        try:
            parts = [attachment_part(p, f"files[{i}]") for i, p in enumerate(files)]
            agent = self.agent(label, tools)
            stream = agent.query(
                [text, *parts] if text else parts, reasoning=reasoning, session_id=session_id
            )
        except FerruleError as exc:  # refused before the run started
            transcript.error(exc)
            yield _idle(), messages
            return
        self._running[browser] = (agent, stream.run_id)
        finished = False
        try:
            # The stop button cancels the run: it ends with a `RequestCancelledError`,
            # which the transcript shows as stopped.
            async for response in stream:
                transcript.add(response)
                yield _busy(), messages
            finished = True
        finally:
            self._running.pop(browser, None)
            if not finished:  # a closed page: Gradio cancelled this task
                agent.cancel(stream.run_id)
        transcript.end()
        if text:
            await self._name_session(session_id, text)
        yield _idle(), messages

    async def _name_session(self, session_id: str, question: str) -> None:
        """Name a stored session that has no name yet by ``question`` (its first one that
        ran), for the session list."""
        ref = {"session_id": session_id}
        stored = (await self.runtime.acall_method(self._storage, "get_session", ref))["session"]
        if stored is not None and not stored.get("name"):
            name = {"name": question[:TITLE_LENGTH]}
            await self.runtime.acall_method(self._storage, "rename_session", {**ref, **name})

    def stop(self, browser: str) -> bool:
        """The stop button: cancel the browser's run (its stream then ends, stopped);
        False when none was running."""
        running = self._running.get(browser)
        return running is not None and running[0].cancel(running[1])

    # -- the page -------------------------------------------------------------------------

    def blocks(self) -> gr.Blocks:
        def session_choices(current: str | None = None) -> Any:
            return gr.Dropdown(choices=self.sessions(), value=current)

        def new_chat() -> tuple[str, ChatHistory, Any]:
            return uuid.uuid4().hex, [], gr.Dropdown(value=None)

        def open_session(session_id: str | None, current: str) -> tuple[str, ChatHistory]:
            if not session_id:
                return current, []
            return session_id, self.history(session_id)

        async def respond(
            box: Mapping[str, Any] | None,
            shown: ChatHistory,
            label: str,
            tools: list[str],
            reasoning: bool,
            session_id: str,
            request: gr.Request,
        ) -> AsyncIterator[tuple[Any, ChatHistory]]:
            async for update in self.respond(
                box, shown, label, tools, reasoning, session_id, request.session_hash or ""
            ):
                yield update

        def stop(request: gr.Request) -> None:
            self.stop(request.session_hash or "")

        def end_session(request: gr.Request) -> None:
            self.end_session(request.session_hash or "")

        page = gr.Blocks(title="ferrule chat", analytics_enabled=False, delete_cache=UPLOAD_SWEEP)
        with page:
            session_id = gr.State(lambda: uuid.uuid4().hex)
            with gr.Row():
                with gr.Column(scale=1, min_width=220):
                    gr.Markdown("### ferrule chat")
                    model = gr.Dropdown(
                        choices=list(self.models),
                        value=self.default_model,
                        label="Model",
                        elem_id="model",
                    )
                    reasoning = gr.Checkbox(label="Reasoning", elem_id="reasoning")
                    tools = gr.CheckboxGroup(
                        choices=list(self._tools),
                        value=list(self._tools),
                        label="Tools",
                        elem_id="tools",
                        visible=bool(self._tools),
                    )
                    new = gr.Button("New chat", elem_id="new-chat")
                    sessions = gr.Dropdown(
                        choices=[], value=None, label="Sessions", elem_id="sessions"
                    )
                with gr.Column(scale=4):
                    # One box per message: the response types must not merge into one bubble.
                    chat = gr.Chatbot(
                        elem_id="chat",
                        height=680,
                        buttons=["copy"],
                        show_label=False,
                        group_consecutive_messages=False,
                    )
                    limit = f"{self.max_file_size / 2**20:.3g} MiB"
                    box = gr.MultimodalTextbox(
                        placeholder=f"Ask; attach images, audio or documents (up to {limit} "
                        "each) with the clip",
                        file_count="multiple",
                        stop_btn=False,  # shown while a reply streams (`_busy`)
                        elem_id="box",
                        show_label=False,
                    )
            page.load(session_choices, None, sessions)
            page.unload(end_session)
            reply = box.submit(
                respond, [box, chat, model, tools, reasoning, session_id], [box, chat]
            )
            reply.then(session_choices, session_id, sessions)
            box.stop(stop, None, None, queue=False)
            new.click(new_chat, None, [session_id, chat, sessions])
            sessions.input(open_session, [sessions, session_id], [session_id, chat])
        return page
