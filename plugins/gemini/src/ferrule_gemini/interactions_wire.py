"""Gemini Interactions API wire translation: pure functions, no I/O.

`build_request` turns an `InferInput` into the JSON body of ``POST {base}/interactions``;
`StreamTranslator` turns the events of a streamed interaction (``interaction.created``,
``step.start`` / ``step.delta`` / ``step.stop``, ``interaction.status_update``,
``interaction.completed``, ``error``) into ferrule's stream items, and `interaction_items`
does the same for a whole ``Interaction`` resource (a background interaction polled to its
end with ``GET {base}/interactions/{id}``). The key, the endpoint and the error bodies are
the generateContent wire's (`ferrule_gemini.wire`): one Google API, one key handling.

Server-side state. Google keeps each interaction (unless ``store`` is false) and continues
one from its id: the reply carries its id as a reasoning part signed
``"interaction:<id>"`` on the assistant message, and the next request sends
``previous_interaction_id`` with only the messages after that assistant message. With
``store=False`` (or no signed message) the whole conversation goes, each assistant turn as
its ``thought`` / ``model_output`` / ``function_call`` steps, signatures kept
(``"thought:<sig>"`` and ``"functionCall.<n>:<sig>"``, as in `ferrule_gemini.wire`).
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from ferrule_kit.content.messages import Message, TextPart, system_text
from ferrule_kit.errors import (
    InvalidInputError,
    ModelError,
    ProviderProtocolError,
    StreamInterruptedError,
)
from ferrule_kit.models.lm import (
    InferInput,
    Usage,
    finish,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)

from .wire import (
    PROVIDER,
    encode_part,
    inline_media,
    parse_error_body,
    sampling_config,
    split_signature,
    stream_error,
)

PATH = "interactions"
#: The anchor of the reasoning part that carries an interaction's id.
INTERACTION_ANCHOR = "interaction"
#: Statuses after which an interaction changes no more.
TERMINAL_STATUSES = frozenset({"completed", "requires_action", "failed", "cancelled", "incomplete"})
FAILED_STATUSES = frozenset({"failed", "cancelled"})
#: The Interactions content types, by the first half of a MIME type.
CONTENT_TYPES = {"image": "image", "audio": "audio", "video": "video"}


def interaction_path(interaction_id: str) -> str:
    """``interactions/{id}``; an id is Google's, but it goes into a URL: keep it one segment."""
    if not interaction_id or "/" in interaction_id or "?" in interaction_id:
        raise ProviderProtocolError(
            f"Gemini sent an unusable interaction id {interaction_id!r}", provider=PROVIDER
        )
    return f"{PATH}/{interaction_id}"


@attrs.frozen
class RequestSettings:
    """What every request of one component carries besides the conversation.

    ``model`` or ``agent`` (an agent id: the agent path, ``agent_config`` instead of
    ``generation_config``); ``store`` None leaves Google's default (stored);
    ``background`` runs the interaction server-side, polled to its end."""

    model: str
    agent: str | None = None
    agent_config: dict[str, Any] | None = None
    store: bool | None = None
    background: bool = False
    environment: str | dict[str, Any] | None = None
    service_tier: str | None = None
    #: What the reply may hold (``["text", "image"]``): drawn images and speech come back as
    #: media parts.
    response_modalities: list[str] | None = None
    generation_config: dict[str, Any] = attrs.field(factory=dict)
    extra_body: dict[str, Any] = attrs.field(factory=dict)

    @property
    def stateful(self) -> bool:
        """Whether Google keeps the conversation (the agent path always does)."""
        return self.agent is not None or self.store is not False


# -- request ---------------------------------------------------------------------------


def interaction_signature(interaction_id: str) -> str:
    return f"{INTERACTION_ANCHOR}:{interaction_id}"


def previous_interaction(messages: list[Message]) -> tuple[str | None, int]:
    """The id of the latest interaction an assistant message carries, and that message's
    index (``(None, -1)`` when none does)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "assistant":
            continue
        for part in message.reasoning:
            if part.signature is None:
                continue
            anchor, raw = split_signature(part.signature)
            if anchor == INTERACTION_ANCHOR and raw:
                return raw, index
    return None, -1


def content_item(part: Any, where: str) -> dict[str, Any]:
    """One content part as an Interactions content item (text, image, audio, video or
    document), refused as the generateContent wire refuses what Gemini cannot take."""
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    encoded = encode_part(part, where)
    inline = encoded.get("inlineData")
    if not isinstance(inline, dict):
        raise InvalidInputError("Gemini's Interactions API takes inline media only", field=where)
    mime = str(inline.get("mimeType", ""))
    kind = CONTENT_TYPES.get(mime.split("/", 1)[0], "document")
    return {"type": kind, "data": inline["data"], "mime_type": mime}


def _contents(message: Message, where: str) -> list[dict[str, Any]]:
    return [
        content_item(part, f"{where}.content[{j}]")
        for j, part in enumerate(message.contents)
        if not (isinstance(part, TextPart) and not part.text)
    ]


def _assistant_steps(message: Message, where: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    call_signatures: dict[int, str] = {}
    for reasoning in message.reasoning:
        if reasoning.signature is None:
            continue
        anchor, raw = split_signature(reasoning.signature)
        if anchor == "thought":
            thought: dict[str, Any] = {"type": "thought", "signature": raw}
            if reasoning.text:
                thought["summary"] = [{"type": "text", "text": reasoning.text}]
            steps.append(thought)
        elif anchor.startswith("functionCall.") and anchor[13:].isdigit():
            call_signatures[int(anchor[13:])] = raw
    content = _contents(message, where)
    if content:
        steps.append({"type": "model_output", "content": content})
    for n, call in enumerate(message.tool_calls):
        if not isinstance(call.arguments, dict):
            raise InvalidInputError(
                "Gemini needs tool-call arguments to be a JSON object",
                field=f"{where}.tool_calls[{n}]",
            )
        step: dict[str, Any] = {
            "type": "function_call",
            "id": call.id,
            "name": call.name,
            "arguments": call.arguments,
        }
        if n in call_signatures:
            step["signature"] = call_signatures[n]
        steps.append(step)
    return steps


def input_steps(
    messages: list[Message], offset: int = 0, names: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The conversation's turns as Interactions input steps (``offset``: the index of
    ``messages[0]`` in the request, for the fields errors name; ``names``: the functions of
    earlier calls, by id, which their results name)."""
    names = dict(names or {})
    steps: list[dict[str, Any]] = []
    for index, message in enumerate(messages, start=offset):
        where = f"$.messages[{index}]"
        if message.role == "user":
            content = _contents(message, where)
            if content:
                steps.append({"type": "user_input", "content": content})
        elif message.role == "assistant":
            names.update((call.id, call.name) for call in message.tool_calls)
            steps += _assistant_steps(message, where)
        elif message.role == "tool":
            call_id = message.tool_call_id or ""
            result = {"type": "function_result", "call_id": call_id, "result": message.text}
            if call_id in names:
                result["name"] = names[call_id]
            steps.append(result)
    return steps


#: The sampling inputs by the names ``generation_config`` gives them.
SAMPLING_FIELDS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "stop": "stop_sequences",
}


def _generation_config(inputs: InferInput) -> dict[str, Any]:
    config = sampling_config(inputs, SAMPLING_FIELDS)
    if inputs.reasoning_on:
        config["thinking_summaries"] = "auto"
        if inputs.effort is not None:
            config["thinking_level"] = inputs.effort
    if inputs.tools and inputs.tool_choice != "auto":
        forced = inputs.forced_tool
        if forced is not None:
            config["tool_choice"] = {"allowed_tools": {"mode": "any", "tools": [forced]}}
        else:
            config["tool_choice"] = "none" if inputs.tool_choice == "none" else "any"
    return config


def build_request(inputs: InferInput, settings: RequestSettings, *, stream: bool) -> dict[str, Any]:
    """The ``POST /interactions`` body for ``inputs``."""
    messages = inputs.messages
    body: dict[str, Any] = {}
    if settings.agent is not None:
        body["agent"] = settings.agent
    else:
        body["model"] = settings.model
    start = 0
    if settings.stateful:
        previous, index = previous_interaction(messages)
        if previous is not None:
            body["previous_interaction_id"] = previous
            start = index + 1
    system = [
        system_text(m, f"$.messages[{i}]", PROVIDER)
        for i, m in enumerate(messages)
        if m.role == "system"
    ]
    names = {call.id: call.name for m in messages[:start] for call in m.tool_calls}
    steps = input_steps([m for m in messages[start:] if m.role != "system"], start, names)
    if not steps:
        raise InvalidInputError(
            "Gemini needs a new user message or tool result to answer", field="$.messages"
        )
    body["input"] = steps
    # The agent path takes the request itself as its instruction: a system prompt is the
    # model path's (Google refuses it beside an agent).
    if system and settings.agent is None:
        body["system_instruction"] = "\n\n".join(s for s in system if s)
    if inputs.tools:
        body["tools"] = [
            {
                "type": "function",
                "name": t.function.name,
                "description": t.function.description,
                "parameters": t.function.parameters,
            }
            for t in inputs.tools
        ]
    if inputs.output_schema is not None:
        body["response_format"] = {
            "type": "text",
            "mime_type": "application/json",
            "schema": inputs.output_schema,
        }
    if settings.agent is not None:
        if settings.agent_config:
            body["agent_config"] = dict(settings.agent_config)
        if settings.environment is not None:
            body["environment"] = settings.environment
    else:
        config = {**_generation_config(inputs), **settings.generation_config}
        if config:
            body["generation_config"] = config
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    if settings.response_modalities:
        body["response_modalities"] = list(settings.response_modalities)
    if settings.agent is not None:
        body["store"] = True  # an agent's interaction lives server-side
    elif settings.store is not None:
        body["store"] = settings.store
    if settings.background:
        body["background"] = True
    else:
        body["stream"] = stream
    return {**body, **settings.extra_body}


# -- replies ---------------------------------------------------------------------------


def interaction_error(interaction: dict[str, Any]) -> ModelError:
    """The typed error for an interaction that ended ``failed`` or ``cancelled``."""
    status = interaction.get("status")
    error = interaction.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return stream_error(error)
    detail = error.get("message") if isinstance(error, dict) else error
    message = str(detail or "no message")
    return ModelError(
        f"{PROVIDER}: the interaction ended {status}: {message}",
        provider=PROVIDER,
        provider_message=message,
        interaction_status=status,
    )


def _usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    thoughts = usage.get("total_thought_tokens")
    return Usage(
        input_tokens=int(usage.get("total_input_tokens") or 0),
        output_tokens=int(usage.get("total_output_tokens") or 0) + int(thoughts or 0),
        reasoning_tokens=int(thoughts) if thoughts is not None else None,
    )


#: Content items of the reply that are media (``response_modalities``).
MEDIA_TYPES = frozenset({"image", "audio"})


def _output(content: dict[str, Any]) -> list[dict[str, Any]]:
    """The stream items of one content item (or delta) of the reply: text, or a drawn image
    or speech as a media part (as the generateContent wire gives an ``inlineData`` part)."""
    kind = content.get("type")
    if kind == "text":
        return [text_delta(content["text"])] if content.get("text") else []
    if kind in MEDIA_TYPES:
        if content.get("uri") and not content.get("data"):
            raise ProviderProtocolError(
                f"Gemini sent {kind} output as a uri; ferrule reads inline data only",
                provider=PROVIDER,
            )
        default = "image/png" if kind == "image" else "audio/wav"
        mime_type = content.get("mime_type") or default
        return inline_media({"mimeType": mime_type, "data": content.get("data")})
    return []  # documents, videos: not output the contract carries


@attrs.define
class _Call:
    id: str
    name: str
    arguments: str
    signature: str | None
    #: Whether fragments came (they replace the arguments the step started with).
    streamed: bool = False


class StreamTranslator:
    """Turns an interaction's events into ferrule stream items.

    `feed(event)` per SSE event; `finished` says when ``interaction.completed`` came (its
    finish item given); `close()` at the end of the stream raises if it never came.
    Function calls are given whole when the interaction ends, each one that no
    ``function_result`` step of the same interaction answered (an agent's own calls are
    run server-side: only the ones left to the client are asked for).
    """

    def __init__(self) -> None:
        self.interaction_id: str | None = None
        self.finished = False
        self._step_types: dict[int, str] = {}
        self._calls: dict[int, _Call] = {}
        self._answered: set[str] = set()
        self._thought_signatures: dict[int, str] = {}

    def feed(self, event: Any) -> list[dict[str, Any]]:
        if not isinstance(event, dict):
            raise ProviderProtocolError(
                "Gemini sent a malformed interaction event (not a JSON object)", provider=PROVIDER
            )
        kind = event.get("event_type")
        if kind == "error" or ("error" in event and kind is None):
            error = event.get("error")
            if isinstance(error, dict) and "code" in error:
                raise stream_error(error)
            raise stream_error(parse_error_body(event) or {"message": str(error)})
        try:
            return self._feed(kind, event)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ProviderProtocolError(
                f"Gemini sent a malformed interaction event ({type(exc).__name__}: {exc})",
                provider=PROVIDER,
            ) from None

    def _feed(self, kind: Any, event: dict[str, Any]) -> list[dict[str, Any]]:
        if self.finished:
            return []
        if kind == "interaction.created":
            return self._identify(event["interaction"])
        if kind == "interaction.status_update":
            if event.get("status") in FAILED_STATUSES:
                raise interaction_error({"status": event["status"], "error": event.get("error")})
            return []
        if kind == "step.start":
            return self._start(int(event["index"]), event["step"])
        if kind == "step.delta":
            return self._delta(int(event["index"]), event["delta"])
        if kind == "step.stop":
            return []
        if kind == "interaction.completed":
            return self.complete(event["interaction"])
        return []  # events this client does not need (metadata, new kinds)

    def _identify(self, interaction: dict[str, Any]) -> list[dict[str, Any]]:
        if interaction.get("id"):
            self.interaction_id = str(interaction["id"])
        return []

    def _start(self, index: int, step: dict[str, Any]) -> list[dict[str, Any]]:
        kind = step["type"]
        self._step_types[index] = kind
        items: list[dict[str, Any]] = []
        if kind == "thought":
            if step.get("signature"):
                self._thought_signatures[index] = step["signature"]
            for summary in step.get("summary") or ():
                items += self._summary(index, summary)
        elif kind == "model_output":
            for content in step.get("content") or ():
                items += _output(content)
        elif kind == "function_call":
            arguments = step.get("arguments")
            self._calls[index] = _Call(
                id=str(step["id"]),
                name=str(step["name"]),
                arguments=json.dumps(arguments) if arguments else "",
                signature=step.get("signature"),
            )
        elif kind == "function_result" and step.get("call_id"):
            self._answered.add(str(step["call_id"]))
        return items  # server-side tool steps (search, code execution...) stay Google's

    def _summary(self, index: int, content: Any) -> list[dict[str, Any]]:
        if not isinstance(content, dict) or content.get("type") != "text":
            return []
        text = content.get("text") or ""
        return [reasoning_delta(text)] if text else []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[dict[str, Any]]:
        kind = delta["type"]
        if kind in MEDIA_TYPES or kind == "text":
            return _output(delta)
        if kind == "thought_summary":
            return self._summary(index, delta.get("content"))
        if kind == "thought_signature" and delta.get("signature"):
            self._thought_signatures[index] = delta["signature"]
            return []
        if kind == "arguments_delta" and index in self._calls:
            call = self._calls[index]
            if not call.streamed:
                call.arguments, call.streamed = "", True
            call.arguments += str(delta.get("arguments") or "")
        return []

    def complete(self, interaction: dict[str, Any]) -> list[dict[str, Any]]:
        """The items that end the interaction: its signatures, its unanswered function
        calls, its id (a signature: see the module docstring) and the finish item (a failed interaction raises its typed error)."""
        status = interaction.get("status")
        if status in FAILED_STATUSES:
            raise interaction_error(interaction)
        self._identify(interaction)
        items: list[dict[str, Any]] = []
        for index in sorted(self._thought_signatures):
            signature = self._thought_signatures[index]
            items.append(reasoning_delta("", signature=f"thought:{signature}"))
        calls = [c for _, c in sorted(self._calls.items()) if c.id not in self._answered]
        for n, call in enumerate(calls):
            if call.signature:
                items.append(reasoning_delta("", signature=f"functionCall.{n}:{call.signature}"))
            items.append(tool_call_delta(n, id=call.id, name=call.name))
            items.append(tool_call_delta(n, arguments=call.arguments or "{}"))
        self.finished = True
        reason = "tool_calls" if calls else ("length" if status == "incomplete" else "stop")
        last = finish(reason, _usage(interaction.get("usage")))  # type: ignore[arg-type]
        if self.interaction_id is not None:  # on the finish item: no delta of its own
            signature = interaction_signature(self.interaction_id)
            last["message"]["reasoning"] = [{"type": "text", "text": "", "signature": signature}]
        return [*items, last]

    def close(self) -> None:
        """Raise if the stream ended before the interaction did."""
        if not self.finished:
            raise StreamInterruptedError(
                "Gemini's interaction stream ended before interaction.completed "
                "(connection closed mid-reply)",
                provider=PROVIDER,
                status=None,
            )


def interaction_items(interaction: Any) -> list[dict[str, Any]]:
    """The stream items of a whole ``Interaction`` (a finished background interaction)."""
    if not isinstance(interaction, dict):
        raise ProviderProtocolError(
            "Gemini sent a malformed interaction (not a JSON object)", provider=PROVIDER
        )
    translator = StreamTranslator()
    items = translator.feed({"event_type": "interaction.created", "interaction": interaction})
    for index, step in enumerate(interaction.get("steps") or ()):
        items += translator.feed({"event_type": "step.start", "index": index, "step": step})
    return items + translator.feed(
        {"event_type": "interaction.completed", "interaction": interaction}
    )
