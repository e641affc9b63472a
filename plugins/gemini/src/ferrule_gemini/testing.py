"""A loopback Gemini for tests: what a valid ``streamGenerateContent`` request looks like,
checked the way the API checks it, and replies in Gemini's streaming wire format.

`request_problems` lists everything wrong with a request (path, query, headers and JSON
body) per Google's documentation (protocols.md §3.4): the endpoint and ``alt=sse``, the
key in ``x-goog-api-key`` and never in the URL, roles ``user`` / ``model``, one datum per
part, function calls answered by as many function responses with the same names, the
``Schema`` subset in function declarations and ``responseSchema``, the generation config
and its thinking switch. `validator` makes it a `ferrule_kit.testing.loopback` validator, so a
malformed request is answered 400 and fails the test. `reply_records` builds the records
of a reply (thought summaries, text split across records, whole function-call parts,
thought signatures, a finish reason, running usage) and `stream_reply` streams them in
Gemini's framing (``data:`` lines, CRLF, no event names, no end sentinel).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ferrule_kit.testing.loopback import Action, Pause, RecordedRequest, Reply, sse
from ferrule_kit.testing.wire_checks import is_base64, named_entry, turns

# The Interactions API's loopback (`ferrule_gemini.interactions_testing`), named here too.
from .interactions_testing import InteractionsServer as InteractionsServer
from .interactions_testing import call_step as call_step
from .interactions_testing import image_step as image_step
from .interactions_testing import text_step as text_step
from .interactions_testing import thought_step as thought_step

PATH = re.compile(r"^/v1beta/models/(?P<model>[A-Za-z0-9._-]+):streamGenerateContent$")
BODY_KEYS = frozenset(
    {
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "generationConfig",
        "safetySettings",
        "cachedContent",
    }
)
DATA_KEYS = frozenset(
    {
        "text",
        "inlineData",
        "fileData",
        "functionCall",
        "functionResponse",
        "executableCode",
        "codeExecutionResult",
    }
)
PART_KEYS = DATA_KEYS | {"thought", "thoughtSignature", "videoMetadata"}
FUNCTION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$")
#: The keys a function declaration may have.
DECLARATION_KEYS = frozenset({"name", "description", "parameters", "response"})
TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
SCHEMA_KEYS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
GENERATION_KEYS = frozenset(
    {
        "temperature",
        "topP",
        "topK",
        "maxOutputTokens",
        "stopSequences",
        "candidateCount",
        "responseMimeType",
        "responseSchema",
        "thinkingConfig",
        "presencePenalty",
        "frequencyPenalty",
        "seed",
        "responseModalities",
        "speechConfig",
    }
)
MODALITIES = frozenset({"TEXT", "IMAGE", "AUDIO"})
SPEECH_KEYS = frozenset({"voiceConfig", "multiSpeakerVoiceConfig", "languageCode"})
THINKING_LEVELS = frozenset({"minimal", "low", "medium", "high"})
SKIP_SIGNATURE = "skip_thought_signature_validator"
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
QUOTA_FAILURE = "type.googleapis.com/google.rpc.QuotaFailure"


# -- replies ---------------------------------------------------------------------------


def error_body(
    code: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


def rate_limited(retry_delay: str | None = "0.05s", *, daily: bool = False) -> dict[str, Any]:
    """A 429 body as Gemini sends it: a QuotaFailure (per minute, or per day) and a RetryInfo."""
    quota = (
        "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
        if daily
        else "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
    )
    details: list[dict[str, Any]] = [
        {
            "@type": QUOTA_FAILURE,
            "violations": [
                {
                    "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                    "quotaId": quota,
                }
            ],
        }
    ]
    if retry_delay is not None:
        details.append({"@type": RETRY_INFO, "retryDelay": retry_delay})
    return error_body(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
        details,
    )


def _record(
    parts: list[dict[str, Any]], finish: str | None, usage: dict[str, int] | None, model: str
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    record: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": model,
        "responseId": "loopback",
    }
    if usage is not None:
        record["usageMetadata"] = usage
    return record


def reply_records(
    *,
    text: Sequence[str] = (),
    reasoning: Sequence[str] = (),
    tool_calls: Sequence[tuple[str, Any]] = (),
    signature: str | None = None,
    finish_reason: str = "STOP",
    prompt_tokens: int = 12,
    model: str = "gemini-loopback",
) -> list[dict[str, Any]]:
    """The records of one streamed reply: each thought summary and each text piece in a
    record of its own, every function call (``(name, args)``) whole in the last record, and
    ``signature`` (base64) on the first function call, or else on a final empty text part,
    as Gemini places them. Every record carries the running ``usageMetadata``."""
    records: list[dict[str, Any]] = []
    thoughts = 0
    candidates = 0

    def usage() -> dict[str, int]:
        out = {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": candidates,
            "totalTokenCount": prompt_tokens + candidates + thoughts,
        }
        if thoughts:
            out["thoughtsTokenCount"] = thoughts
        return out

    for piece in reasoning:
        thoughts += 3
        records.append(_record([{"text": piece, "thought": True}], None, usage(), model))
    for piece in text:
        candidates += 2
        records.append(_record([{"text": piece}], None, usage(), model))
    last: list[dict[str, Any]] = [
        {"functionCall": {"name": name, "args": args}} for name, args in tool_calls
    ]
    if signature is not None:
        if last:
            last[0]["thoughtSignature"] = signature
        else:
            last.append({"text": "", "thoughtSignature": signature})
    candidates += 5 * len(tool_calls) + 1
    records.append(_record(last, finish_reason, usage(), model))
    return records


def media_records(
    inline: Sequence[tuple[str, bytes]],
    *,
    text: Sequence[str] = (),
    signature: str | None = None,
    model: str = "gemini-loopback",
) -> list[dict[str, Any]]:
    """The records of a reply with media (``responseModalities``): each text piece, then
    each ``(mimeType, bytes)`` as an ``inlineData`` part of its own record (base64), with
    ``signature`` on each (as Gemini 3's image models sign their images); the last record
    ends the reply."""
    import base64

    records = [_record([{"text": piece}], None, None, model) for piece in text]
    for mime_type, data in inline:
        part: dict[str, Any] = {
            "inlineData": {"mimeType": mime_type, "data": base64.b64encode(data).decode("ascii")}
        }
        if signature is not None:
            part["thoughtSignature"] = signature
        records.append(_record([part], None, None, model))
    usage = {"promptTokenCount": 9, "candidatesTokenCount": 7, "totalTokenCount": 16}
    records.append(_record([], "STOP", usage, model))
    return records


def stream_reply(records: Iterable[Mapping[str, Any] | Action], *, delay: float = 0.0) -> Reply:
    """A scripted SSE reply of these records (raw bytes, pauses and resets pass through)."""
    actions: list[Any] = []
    for item in records:
        if actions and delay:
            actions.append(Pause(delay))
        actions.append(sse(dict(item), newline="\r\n") if isinstance(item, Mapping) else item)
    return Reply.sse(actions)


def error_reply(status: int, body: Mapping[str, Any]) -> Reply:
    return Reply.json(dict(body), status=status)


# -- requests --------------------------------------------------------------------------


def schema_problems(schema: Any, where: str, *, top_level_object: bool = False) -> list[str]:
    """Problems of a Gemini ``Schema`` (the OpenAPI 3.0 subset Gemini accepts)."""
    if not isinstance(schema, dict):
        return [f"{where}: must be an object"]
    out = [f"{where}.{key}: unknown field in Schema" for key in sorted(set(schema) - SCHEMA_KEYS)]
    kind = schema.get("type")
    if kind is not None and kind not in TYPES:
        out.append(f"{where}.type: must be one of {sorted(TYPES)}")
    if "enum" in schema and (
        not isinstance(schema["enum"], list) or not all(isinstance(v, str) for v in schema["enum"])
    ):
        out.append(f"{where}.enum: must be a list of strings")
    if "enum" in schema and kind != "STRING":
        out.append(f"{where}.enum: only allowed for STRING type")
    properties = schema.get("properties")
    if properties is not None:
        if not isinstance(properties, dict):
            out.append(f"{where}.properties: must be an object")
            properties = {}
        for name, prop in properties.items():
            out += schema_problems(prop, f"{where}.properties.{name}")
    if top_level_object and kind == "OBJECT" and not properties:
        out.append(f"{where}.properties: should be non-empty for OBJECT type")
    required = schema.get("required")
    if required is not None:
        missing = (
            [r for r in required if r not in (properties or {})]
            if isinstance(required, list)
            else ["?"]
        )
        if missing:
            out.append(f"{where}.required: names properties that do not exist: {missing}")
    if "items" in schema:
        out += schema_problems(schema["items"], f"{where}.items")
    if "anyOf" in schema:
        if not isinstance(schema["anyOf"], list) or not schema["anyOf"]:
            out.append(f"{where}.anyOf: must be a non-empty list")
        else:
            for i, member in enumerate(schema["anyOf"]):
                out += schema_problems(member, f"{where}.anyOf[{i}]")
    return out


def _part_problems(part: Any, role: str, where: str) -> list[str]:
    if not isinstance(part, dict):
        return [f"{where}: must be an object"]
    out = [f"{where}.{key}: unknown field in Part" for key in sorted(set(part) - PART_KEYS)]
    data = [k for k in part if k in DATA_KEYS]
    if len(data) != 1:
        return [*out, f"{where}: a part holds exactly one of {sorted(DATA_KEYS)}, got {data}"]
    kind = data[0]
    if "thoughtSignature" in part and not (
        is_base64(part["thoughtSignature"]) or part["thoughtSignature"] == SKIP_SIGNATURE
    ):
        out.append(f"{where}.thoughtSignature: must be base64 bytes (or {SKIP_SIGNATURE})")
    if "thought" in part and (role != "model" or not isinstance(part["thought"], bool)):
        out.append(f"{where}.thought: a boolean, on model parts only")
    if kind == "text" and not isinstance(part["text"], str):
        out.append(f"{where}.text: must be a string")
    elif kind == "inlineData":
        blob = part["inlineData"]
        if (
            not isinstance(blob, dict)
            or not isinstance(blob.get("mimeType"), str)
            or not is_base64(blob.get("data"))
        ):
            out.append(f"{where}.inlineData: needs mimeType and base64 data")
    elif kind == "functionCall":
        call = part["functionCall"]
        if role != "model":
            out.append(f"{where}.functionCall: only model turns hold function calls")
        if not isinstance(call, dict) or not FUNCTION_NAME.match(str(call.get("name", ""))):
            out.append(f"{where}.functionCall.name: required, matching {FUNCTION_NAME.pattern}")
        elif "args" in call and not isinstance(call["args"], dict):
            out.append(f"{where}.functionCall.args: must be an object")
    elif kind == "functionResponse":
        response = part["functionResponse"]
        if role != "user":
            out.append(f"{where}.functionResponse: function responses go in user turns")
        if not isinstance(response, dict) or not isinstance(response.get("name"), str):
            out.append(f"{where}.functionResponse.name: required string")
        elif not isinstance(response.get("response"), dict):
            out.append(f"{where}.functionResponse.response: must be an object (a Struct)")
    return out


def _contents_problems(contents: Any) -> list[str]:
    out: list[str] = []
    expected_responses: Counter[str] = Counter()
    for _, where, role, parts in turns(contents, "contents", "parts", ("user", "model"), out):
        if not isinstance(parts, list) or not parts:
            out.append(f"{where}.parts: required, a non-empty array")
            continue
        for j, part in enumerate(parts):
            out += _part_problems(part, role, f"{where}.parts[{j}]")
        named = [p for p in parts if isinstance(p, dict)]
        if role == "model":
            expected_responses = Counter(
                p["functionCall"].get("name")
                for p in named
                if isinstance(p.get("functionCall"), dict)
            )
        else:
            got = Counter(
                p["functionResponse"].get("name")
                for p in named
                if isinstance(p.get("functionResponse"), dict)
            )
            if got != expected_responses and (got or expected_responses):
                out.append(
                    f"{where}: the number of function response parts must equal the number of "
                    f"function call parts of the previous model turn, by name "
                    f"(calls {dict(expected_responses)}, responses {dict(got)})"
                )
            expected_responses = Counter()
    return out


def _tools_problems(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return ["tools: must be an array"]
    out, names = [], set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("functionDeclarations"), list):
            out.append(f"tools[{i}]: expected {{functionDeclarations: [...]}}")
            continue
        for j, declaration in enumerate(tool["functionDeclarations"]):
            where = f"tools[{i}].functionDeclarations[{j}]"
            if not named_entry(
                declaration,
                where,
                DECLARATION_KEYS,
                FUNCTION_NAME,
                names,
                out,
                duplicate="duplicate function name",
            ):
                continue
            if "parameters" in declaration:
                out += schema_problems(
                    declaration["parameters"], f"{where}.parameters", top_level_object=True
                )
    return out


def _generation_problems(config: Any) -> list[str]:
    if not isinstance(config, dict):
        return ["generationConfig: must be an object"]
    out = [f"generationConfig.{k}: unknown field" for k in sorted(set(config) - GENERATION_KEYS)]
    for key, low, high in (("temperature", 0, 2), ("topP", 0, 1)):
        value = config.get(key)
        if value is not None and (not isinstance(value, (int, float)) or not low <= value <= high):
            out.append(f"generationConfig.{key}: must be from {low} to {high}")
    tokens = config.get("maxOutputTokens")
    if tokens is not None and (not isinstance(tokens, int) or tokens < 1):
        out.append("generationConfig.maxOutputTokens: a positive integer")
    stops = config.get("stopSequences")
    if stops is not None and (
        not isinstance(stops, list) or len(stops) > 5 or not all(isinstance(s, str) for s in stops)
    ):
        out.append("generationConfig.stopSequences: up to 5 strings")
    modalities = config.get("responseModalities")
    if modalities is not None and (
        not isinstance(modalities, list) or not modalities or set(modalities) - MODALITIES
    ):
        out.append(f"generationConfig.responseModalities: a list of {sorted(MODALITIES)}")
    speech = config.get("speechConfig")
    if speech is not None and (not isinstance(speech, dict) or set(speech) - SPEECH_KEYS):
        out.append(f"generationConfig.speechConfig: an object of {sorted(SPEECH_KEYS)}")
    if "responseSchema" in config:
        if config.get("responseMimeType") != "application/json":
            out.append("generationConfig.responseSchema: needs responseMimeType application/json")
        out += schema_problems(config["responseSchema"], "generationConfig.responseSchema")
    thinking = config.get("thinkingConfig")
    if thinking is not None:
        if not isinstance(thinking, dict) or set(thinking) - {
            "thinkingBudget",
            "includeThoughts",
            "thinkingLevel",
        }:
            out.append(
                "generationConfig.thinkingConfig: thinkingBudget, includeThoughts, thinkingLevel only"
            )
        else:
            if "thinkingBudget" in thinking and "thinkingLevel" in thinking:
                out.append(
                    "generationConfig.thinkingConfig: thinkingBudget and thinkingLevel are mutually exclusive"
                )
            budget = thinking.get("thinkingBudget")
            if budget is not None and (not isinstance(budget, int) or budget < -1):
                out.append(
                    "generationConfig.thinkingConfig.thinkingBudget: an integer, -1 (dynamic) or more"
                )
            if "thinkingLevel" in thinking and thinking["thinkingLevel"] not in THINKING_LEVELS:
                out.append(
                    f"generationConfig.thinkingConfig.thinkingLevel: one of {sorted(THINKING_LEVELS)}"
                )
            if "includeThoughts" in thinking and not isinstance(thinking["includeThoughts"], bool):
                out.append("generationConfig.thinkingConfig.includeThoughts: a boolean")
    return out


def request_problems(
    path: str,
    query: Mapping[str, str],
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    body: Any,
) -> list[str]:
    """Everything Gemini would refuse in this request (empty when it is valid)."""
    headers = {
        k.lower(): v for k, v in (headers.items() if isinstance(headers, Mapping) else headers)
    }
    out = []
    if not PATH.match(path):
        out.append(f"path: expected /v1beta/models/<model>:streamGenerateContent, got {path}")
    if dict(query) != {"alt": "sse"}:
        out.append(
            f"query: expected exactly alt=sse (the key belongs in a header), got {sorted(query)}"
        )
    if not headers.get("x-goog-api-key"):
        out.append("header x-goog-api-key: required")
    if not headers.get("content-type", "").startswith("application/json"):
        out.append("header content-type: must be application/json")
    if not isinstance(body, dict):
        return [*out, "body: must be a JSON object"]
    out += [f"body: unknown field {k!r}" for k in sorted(set(body) - BODY_KEYS)]
    system = body.get("systemInstruction")
    if system is not None:
        parts = system.get("parts") if isinstance(system, dict) else None
        if (
            not isinstance(parts, list)
            or not parts
            or any(
                not isinstance(p, dict) or set(p) != {"text"} or not isinstance(p["text"], str)
                for p in parts
            )
        ):
            out.append("systemInstruction: {parts: [{text}]} with text parts only")
    out += _contents_problems(body.get("contents"))
    if "tools" in body:
        out += _tools_problems(body["tools"])
    if "generationConfig" in body:
        out += _generation_problems(body["generationConfig"])
    return out


def validator(record: RecordedRequest) -> list[str]:
    """`request_problems` as a `ferrule_kit.testing.loopback` validator."""
    if record.method != "POST":
        return [f"{record.method} {record.path}: expected POST"]
    try:
        body = record.json
    except ValueError as exc:
        return [f"body: not JSON ({exc})"]
    return request_problems(record.path, record.query, record.headers, body)
