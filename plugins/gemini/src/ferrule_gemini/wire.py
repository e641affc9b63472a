"""Gemini ``streamGenerateContent`` wire translation: pure functions, no I/O.

`build_request` turns an `InferInput` into the JSON body of
``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``; `StreamTranslator` turns
the reply's SSE records (each a whole ``GenerateContentResponse``) into ferrule's stream
items. The JSON schemas of tools and structured output become Gemini's subset in
`ferrule_gemini.schema`.

Thought signatures: Gemini attaches an opaque ``thoughtSignature`` to a part (a thought
summary, the answer's text, or a function call) and wants it back on that same part.
ferrule keeps each as a reasoning part whose signature names its anchor:
``"thought:<sig>"`` (with the thought's text), ``"text:<sig>"`` (the answer's last text
part), ``"functionCall.<n>:<sig>"`` (the n-th tool call of that message) or
``"inlineData.<n>:<sig>"`` (the n-th image the model drew). Signatures are
base64, so the colon is unambiguous; a signature without a known anchor is treated as
``text``.

Tool calls: Gemini sends each ``functionCall`` part whole, usually without an id; ferrule
gives it an id starting with ``GENERATED_ID_PREFIX`` (never sent back to Gemini, which
matches results by name). Its stream items are a first delta with the id and name, then
one with the whole ``args`` as the arguments.

Media output (``generationConfig.responseModalities``): an ``inlineData`` part of the reply
is an image (``image_url`` with a data URL) or speech (``input_audio``, its MIME type as the
format) on ferrule's wire (`inline_media`); a later turn sends the images back (to edit
them), not the speech.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import attrs
from ferrule_kit.content.messages import Message, TextPart, system_and_turns
from ferrule_kit.content.parts import GEMINI, registry
from ferrule_kit.content.policy import Accepts, ContentPolicy
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
    media_delta,
    reasoning_delta,
    text_delta,
    tool_call_delta,
)
from ferrule_kit.network.http import ProviderErrorInfo, environment_base_url, provider_error
from ferrule_kit.network.http import parse_error_body as parse_generic_error

from .schema import function_declaration, to_gemini_schema

PROVIDER = "gemini"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
#: Move the endpoint when no base_url is given. Google's SDK (google-genai) reads
#: GOOGLE_GEMINI_BASE_URL, a host without the API version, which is then added
#: (``http://127.0.0.1:8080`` -> ``http://127.0.0.1:8080/v1beta``).
BASE_URL_VARIABLES = ("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL")
_API_VERSION = re.compile(r"/v1(?:alpha|beta)?$")
GENERATED_ID_PREFIX = "gemini-call-"
IMAGE_MIME_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
AUDIO_FORMATS = frozenset({"wav", "mp3", "mpeg", "aiff", "aac", "ogg", "flac"})
#: Gemini takes inline data up to a 20 MB request; larger media need the Files API.
MAX_INLINE_BYTES = 20 * 1024 * 1024
#: What Gemini takes besides text: inline images, audio and documents (PDF, plain text),
#: never a public URL; the request's total inline size is checked by `build_request`.
CONTENT = ContentPolicy(
    PROVIDER,
    GEMINI,
    label="Gemini",
    limits={
        "image": Accepts(formats=IMAGE_MIME_TYPES, urls=False),
        "audio": Accepts(formats=AUDIO_FORMATS),
        "document": Accepts(formats=frozenset({"application/pdf", "text/plain"})),
    },
    elsewhere={
        "image_url": "Use ImageContent.from_bytes / from_path / from_pillow, or a provider "
        "that takes image URLs (OpenAI, Grok)"
    },
    size_unit="MB",
)
THINKING_BUDGETS = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
#: Gemini 3 Pro takes only the low and high thinking levels; Flash models take all four.
PRO_THINKING_LEVELS = {"minimal": "low", "low": "low", "medium": "high", "high": "high"}

FINISH_REASONS = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "LANGUAGE": "stop",
    "OTHER": "stop",
}
#: Finish reasons that mean the model failed rather than finished.
FAILED_FINISH_REASONS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"})

_VERSION = re.compile(r"^(?:models/)?gemini-(\d+)(?:\.(\d+))?")


def model_path(model: str) -> str:
    return model if model.startswith(("models/", "tunedModels/")) else f"models/{model}"


def default_base_url() -> str:
    base = environment_base_url(BASE_URL_VARIABLES, DEFAULT_BASE_URL)
    return base if _API_VERSION.search(base) else f"{base}/v1beta"


def stream_url(base_url: str | None, model: str) -> str:
    """The endpoint; the key goes in a header, never here, so it cannot leak into logs."""
    base = (base_url or default_base_url()).rstrip("/")
    return f"{base}/{model_path(model)}:streamGenerateContent?alt=sse"


def request_headers(api_key: str) -> dict[str, str]:
    """Gemini's auth header (`ferrule_kit.network.http` adds the content type and ``Accept``)."""
    return {"x-goog-api-key": api_key}


def _version(model: str) -> tuple[int, int] | None:
    match = _VERSION.match(model)
    return (int(match.group(1)), int(match.group(2) or 0)) if match else None


# -- request ---------------------------------------------------------------------------


def encode_part(part: Any, field: str = "content") -> dict[str, Any]:
    """One content part as a Gemini ``Part``: text here, any other part by its content
    plugin once `CONTENT` lets it through (`UnsupportedContentError` otherwise)."""
    if isinstance(part, TextPart):
        return {"text": part.text}
    encoded: dict[str, Any] = registry.encode(part, CONTENT, field)
    return encoded


def _parts(message: Message, where: str) -> list[dict[str, Any]]:
    return [
        encode_part(part, f"{where}.content[{j}]")
        for j, part in enumerate(message.contents)
        if not (isinstance(part, TextPart) and not part.text)
    ]


def split_signature(signature: str) -> tuple[str, str]:
    """``(anchor, signature)`` of a stored Gemini signature (see the module docstring)."""
    anchor, colon, raw = signature.partition(":")
    return (anchor, raw) if colon else ("text", signature)


def inline_media(blob: dict[str, Any]) -> list[dict[str, Any]]:
    """The stream item of an ``inlineData`` part of the reply (an image the model drew,
    speech it said: ``responseModalities``), as an ``image_url`` or ``input_audio`` part."""
    mime_type, data = blob.get("mimeType"), blob.get("data")
    if not isinstance(mime_type, str) or not isinstance(data, str) or not data:
        raise ProviderProtocolError(
            "Gemini sent an inlineData part without its mimeType and base64 data",
            provider=PROVIDER,
        )
    if mime_type.startswith("audio/"):
        return [
            media_delta({"type": "input_audio", "input_audio": {"data": data, "format": mime_type}})
        ]
    url = f"data:{mime_type};base64,{data}"
    return [media_delta({"type": "image_url", "image_url": {"url": url}})]


def _model_parts(message: Message, where: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    text_signature: str | None = None
    call_signatures: dict[int, str] = {}
    inline_signatures: dict[int, str] = {}
    for reasoning in message.reasoning:
        if reasoning.signature is None:
            continue  # unsigned reasoning is not needed by Gemini; its text stays with us
        anchor, raw = split_signature(reasoning.signature)
        if anchor == "thought":
            parts.append({"text": reasoning.text, "thought": True, "thoughtSignature": raw})
        elif anchor == "text":
            text_signature = raw
        elif anchor.startswith("functionCall.") and anchor[13:].isdigit():
            call_signatures[int(anchor[13:])] = raw
        elif anchor.startswith("inlineData.") and anchor[11:].isdigit():
            inline_signatures[int(anchor[11:])] = raw
        # other anchors belong to other providers (e.g. Anthropic's redacted thinking)
    # The model's own speech is not sent back (speech models read text); its images are,
    # for the next turn to edit them.
    spoken = attrs.evolve(message, contents=[p for p in message.contents if p.type != "audio"])
    answer = _parts(spoken, where)
    inline = [p for p in answer if "inlineData" in p]
    for n, raw in inline_signatures.items():
        if n < len(inline):
            inline[n]["thoughtSignature"] = raw
    if text_signature is not None:
        if not answer or "text" not in answer[-1]:
            answer.append({"text": ""})
        answer[-1]["thoughtSignature"] = text_signature
    parts += answer
    for n, call in enumerate(message.tool_calls):
        if not isinstance(call.arguments, dict):
            raise InvalidInputError(
                "Gemini needs tool-call arguments to be a JSON object",
                field=f"{where}.tool_calls[{n}]",
            )
        function_call: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id and not call.id.startswith(GENERATED_ID_PREFIX):
            function_call["id"] = call.id
        part: dict[str, Any] = {"functionCall": function_call}
        if n in call_signatures:
            part["thoughtSignature"] = call_signatures[n]
        parts.append(part)
    return parts


def _function_response(message: Message, names: dict[str, str], where: str) -> list[dict[str, Any]]:
    if message.tool_call_id is None:
        raise InvalidInputError(
            "a tool message needs the tool_call_id of the call it answers",
            field=f"{where}.tool_call_id",
        )
    name = names.get(message.tool_call_id)
    if name is None:
        raise InvalidInputError(
            f"no earlier assistant message has a tool call with id {message.tool_call_id!r}; "
            "Gemini matches tool results to calls by name",
            field=f"{where}.tool_call_id",
        )
    response: dict[str, Any]
    try:
        value = json.loads(message.text)
    except json.JSONDecodeError:
        value = message.text
    response = value if isinstance(value, dict) else {"result": value}
    function_response: dict[str, Any] = {"name": name, "response": response}
    if not message.tool_call_id.startswith(GENERATED_ID_PREFIX):
        function_response["id"] = message.tool_call_id
    media = [p for p in _parts(message, where) if "text" not in p]
    return [{"functionResponse": function_response}, *media]


def _system_and_contents(messages: list[Message]) -> tuple[list[str], list[dict[str, Any]]]:
    call_names: dict[str, str] = {}  # a tool result names its call's function

    def turn(message: Message, where: str) -> tuple[str, list[dict[str, Any]]]:
        if message.role == "user":
            return "user", _parts(message, where)
        if message.role == "assistant":
            call_names.update((call.id, call.name) for call in message.tool_calls)
            return "model", _model_parts(message, where)
        return "user", _function_response(message, call_names, where)

    system, turns = system_and_turns(messages, PROVIDER, turn)
    return system, [{"role": role, "parts": parts} for role, parts in turns]


def _inline_size(contents: list[dict[str, Any]]) -> int:
    return sum(
        len(p["inlineData"]["data"]) for c in contents for p in c["parts"] if "inlineData" in p
    )


#: The value Google documents for a function call whose signature is unknown (a history
#: written by hand or by another model); Gemini 3 refuses such a call without one.
SKIP_SIGNATURE = "skip_thought_signature_validator"


def _sign_unsigned_calls(contents: list[dict[str, Any]]) -> None:
    """Give the first function call of each model step in the current turn (everything
    after the last user text) the documented placeholder if it has no signature."""
    start = 0
    for i, content in enumerate(contents):
        if content["role"] == "user" and any("functionResponse" not in p for p in content["parts"]):
            start = i + 1
    for content in contents[start:]:
        if content["role"] != "model":
            continue
        first = next((p for p in content["parts"] if "functionCall" in p), None)
        if first is not None and "thoughtSignature" not in first:
            first["thoughtSignature"] = SKIP_SIGNATURE


def thinking_config(inputs: InferInput, model: str) -> dict[str, Any] | None:
    """Gemini's ``thinkingConfig`` for this request, or None to leave the model's default."""
    version = _version(model)
    effort = inputs.effort
    if inputs.reasoning_on:
        config: dict[str, Any] = {"includeThoughts": True}
        if version is not None and version >= (3, 0):
            if effort is not None:
                config["thinkingLevel"] = (
                    effort if "flash" in model else PRO_THINKING_LEVELS[effort]
                )
        else:
            config["thinkingBudget"] = THINKING_BUDGETS[effort] if effort else -1  # -1: dynamic
        return config
    # Reasoning off: 2.5 Flash models think unless told not to; Pro models cannot be
    # switched off (budget 0 is refused), so they just keep their thoughts to themselves.
    # Speech and image models do not think, and take no thinkingConfig.
    media_model = "-tts" in model or "image" in model
    if version is not None and (2, 5) <= version < (3, 0) and "flash" in model and not media_model:
        return {"thinkingBudget": 0}
    return None


#: The sampling inputs by the names ``generationConfig`` gives them.
SAMPLING_FIELDS = {
    "temperature": "temperature",
    "top_p": "topP",
    "max_tokens": "maxOutputTokens",
    "stop": "stopSequences",
}


def sampling_config(inputs: InferInput, names: dict[str, str]) -> dict[str, Any]:
    """The sampling inputs given (temperature, top-p, max tokens, at most 5 stop
    sequences) under ``names``: generateContent's camelCase or the Interactions API's."""
    config: dict[str, Any] = {}
    for field in ("temperature", "top_p", "max_tokens"):
        value = getattr(inputs, field)
        if value is not None:
            config[names[field]] = value
    if inputs.stop:
        if len(inputs.stop) > 5:
            raise InvalidInputError("Gemini accepts at most 5 stop sequences", field="$.stop")
        config[names["stop"]] = list(inputs.stop)
    return config


def build_request(inputs: InferInput, *, model: str) -> dict[str, Any]:
    """The ``streamGenerateContent`` body for ``inputs``."""
    system, contents = _system_and_contents(inputs.messages)
    if not contents:
        raise InvalidInputError(
            "Gemini needs at least one user message besides the system instruction",
            field="$.messages",
        )
    size = _inline_size(contents)
    if size > MAX_INLINE_BYTES:
        raise CONTENT.refuse(
            f"Gemini takes at most {MAX_INLINE_BYTES // (1024 * 1024)} MB of inline data (images, "
            f"audio, documents) per request; this one has {size / (1024 * 1024):.1f} MB: send "
            "fewer or smaller files",
            "$.messages",
            "inline_data",
        )
    version = _version(model)
    if version is not None and version >= (3, 0):
        _sign_unsigned_calls(contents)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    if inputs.tools:
        body["tools"] = [
            {"functionDeclarations": [function_declaration(t.function) for t in inputs.tools]}
        ]
        if inputs.tool_choice != "auto":  # Gemini's ANY is OpenAI's required
            calling: dict[str, Any] = {"mode": "NONE" if inputs.tool_choice == "none" else "ANY"}
            if inputs.forced_tool is not None:
                calling["allowedFunctionNames"] = [inputs.forced_tool]
            body["toolConfig"] = {"functionCallingConfig": calling}
    config = sampling_config(inputs, SAMPLING_FIELDS)
    if inputs.output_schema is not None:
        config["responseMimeType"] = "application/json"
        config["responseSchema"] = to_gemini_schema(inputs.output_schema)
    thinking = thinking_config(inputs, model)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    if config:
        body["generationConfig"] = config
    return body


# -- errors ----------------------------------------------------------------------------

RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def parse_error_body(body: Any) -> dict[str, Any]:
    """Google's ``{"error": {code, message, status, details}}`` as a dict ({} if absent)."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}
    if isinstance(body, list) and body:  # some Google endpoints wrap the error in a list
        body = body[0]
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _details(error: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    details = error.get("details")
    if not isinstance(details, list):
        return []
    return [d for d in details if isinstance(d, dict) and d.get("@type") == kind]


def retry_delay(error: dict[str, Any]) -> float | None:
    """Seconds from ``google.rpc.RetryInfo.retryDelay`` (e.g. ``"37s"``), or None."""
    for info in _details(error, RETRY_INFO):
        match = _DURATION.match(str(info.get("retryDelay", "")))
        if match:
            return float(match.group(1))
    return None


def is_daily_quota(error: dict[str, Any]) -> bool:
    """True for a 429 that will not clear until the quota resets (a per-day quota)."""
    for failure in _details(error, QUOTA_FAILURE):
        for violation in failure.get("violations") or ():
            if isinstance(violation, dict) and "PerDay" in str(violation.get("quotaId", "")):
                return True
    return False


def error_info(error: dict[str, Any]) -> ProviderErrorInfo:
    reasons = [
        d.get("reason") for d in _details(error, ERROR_INFO) if isinstance(d.get("reason"), str)
    ]
    status = error.get("status")
    return ProviderErrorInfo(
        message=str(error.get("message") or "no message"),
        code=status if isinstance(status, str) else None,
        type=reasons[0] if reasons else None,
        quota=is_daily_quota(error),
        retry_delay=retry_delay(error),
    )


def parse_error(status: int, body: bytes, headers: Any) -> ProviderErrorInfo:
    """`ferrule_kit.network.http`'s error parser for Gemini: ``RetryInfo.retryDelay`` is the wait to
    honour, a daily ``QuotaFailure`` is never retried."""
    error = parse_error_body(body)
    if not error.get("message"):
        return parse_generic_error(status, body, headers)
    return error_info(error)


# -- response stream -------------------------------------------------------------------


def stream_error(error: dict[str, Any]) -> ModelError:
    """The typed error for an error record that ends a stream: the class the same failure
    gets as an HTTP reply."""
    code = error.get("code")
    typed = provider_error(PROVIDER, code if isinstance(code, int) else None, error_info(error))
    return type(typed)(
        f"{PROVIDER}: the stream ended with an error: {typed.details['provider_message']}",
        **{**typed.details, "mid_stream": True},
    )


def _new_call_id() -> str:
    return GENERATED_ID_PREFIX + uuid.uuid4().hex[:24]


def _audio_tokens(details: Any) -> int | None:
    """The audio tokens of a ``usageMetadata`` token list by modality (None when none)."""
    counts = [
        d.get("tokenCount") or 0
        for d in details or ()
        if isinstance(d, dict) and d.get("modality") == "AUDIO"
    ]
    return sum(counts) or None


class StreamTranslator:
    """Turns Gemini's stream records into ferrule stream items.

    `feed(chunk)` per SSE record; `close()` at the end of the stream (Gemini ends a
    stream by closing it, without a sentinel) gives the finish item. ``usageMetadata``
    is a running total in every record that has it: the last one wins.
    """

    def __init__(self, new_call_id: Any = _new_call_id) -> None:
        self.finish_reason: str | None = None
        self.finish_message: str | None = None
        self.block_reason: str | None = None
        self.usage_metadata: dict[str, Any] = {}
        self.tool_calls = 0
        self.inline_parts = 0
        self._new_call_id = new_call_id

    def feed(self, chunk: Any) -> list[dict[str, Any]]:
        if not isinstance(chunk, dict):
            raise ProviderProtocolError(
                "Gemini sent a malformed stream record (not a JSON object)", provider=PROVIDER
            )
        if "error" in chunk:
            raise stream_error(parse_error_body(chunk))
        try:
            return self._feed(chunk)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ProviderProtocolError(
                f"Gemini sent a malformed stream record ({type(exc).__name__}: {exc})",
                provider=PROVIDER,
            ) from None

    def _feed(self, chunk: dict[str, Any]) -> list[dict[str, Any]]:
        if isinstance(chunk.get("usageMetadata"), dict):
            self.usage_metadata = chunk["usageMetadata"]
        feedback = chunk.get("promptFeedback") or {}
        if feedback.get("blockReason"):
            self.block_reason = feedback["blockReason"]
        items: list[dict[str, Any]] = []
        for candidate in (chunk.get("candidates") or ())[:1]:
            for part in (candidate.get("content") or {}).get("parts") or ():
                items += self._part(part)
            if candidate.get("finishReason"):
                self.finish_reason = candidate["finishReason"]
                self.finish_message = candidate.get("finishMessage")
        return items

    def _part(self, part: dict[str, Any]) -> list[dict[str, Any]]:
        signature = part.get("thoughtSignature")
        if part.get("thought"):
            text = part.get("text", "")
            if signature:
                return [reasoning_delta(text, signature=f"thought:{signature}")]
            return [reasoning_delta(text)] if text else []
        items = []
        if "functionCall" in part:
            call = part["functionCall"]
            index = self.tool_calls
            self.tool_calls += 1
            if signature:
                items.append(reasoning_delta("", signature=f"functionCall.{index}:{signature}"))
            # Like every backend: a first delta with the id and name, then the arguments
            # (here all of them at once).
            items.append(
                tool_call_delta(index, id=call.get("id") or self._new_call_id(), name=call["name"])
            )
            items.append(tool_call_delta(index, arguments=json.dumps(call.get("args") or {})))
            return items
        if part.get("text"):
            items.append(text_delta(part["text"]))
        if isinstance(part.get("inlineData"), dict):
            items += inline_media(part["inlineData"])
            index, self.inline_parts = self.inline_parts, self.inline_parts + 1
            if signature:  # Gemini 3's image models sign each image they draw
                items.append(reasoning_delta("", signature=f"inlineData.{index}:{signature}"))
            return items
        if signature:
            items.append(reasoning_delta("", signature=f"text:{signature}"))
        return items  # executableCode, ... are not part of the contract

    @property
    def usage(self) -> Usage:
        meta = self.usage_metadata
        thoughts = meta.get("thoughtsTokenCount")
        return Usage(
            input_tokens=(meta.get("promptTokenCount") or 0)
            + (meta.get("toolUsePromptTokenCount") or 0),
            output_tokens=(meta.get("candidatesTokenCount") or 0) + (thoughts or 0),
            reasoning_tokens=thoughts,
            audio_input_tokens=_audio_tokens(meta.get("promptTokensDetails")),
            audio_output_tokens=_audio_tokens(meta.get("candidatesTokensDetails")),
        )

    def close(self) -> dict[str, Any]:
        """The finish item, or a typed error if the stream ended without one."""
        if self.finish_reason in FAILED_FINISH_REASONS:
            raise ModelError(
                f"Gemini stopped with {self.finish_reason}: {self.finish_message or 'no message'}",
                provider=PROVIDER,
                finish_reason=self.finish_reason,
                provider_message=self.finish_message,
            )
        if self.finish_reason is None:
            if self.block_reason is not None:
                return finish("content_filter", self.usage)
            raise StreamInterruptedError(
                "Gemini's stream ended before a finishReason (connection closed mid-reply)",
                provider=PROVIDER,
                status=None,
            )
        reason = FINISH_REASONS.get(self.finish_reason, "stop")
        if reason == "stop" and self.tool_calls:
            reason = "tool_calls"  # Gemini says STOP after function calls
        return finish(reason, self.usage)  # type: ignore[arg-type]
