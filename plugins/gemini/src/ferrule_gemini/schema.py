"""JSON schema to the subset of it Gemini accepts (its OpenAPI-3.0 ``Schema``): what
``functionDeclarations[].parameters`` and ``generationConfig.responseSchema`` carry.

`to_gemini_schema` converts a schema (local ``$ref``s inlined, ``oneOf`` / ``allOf`` /
``const`` / type lists rewritten, keys Gemini refuses dropped); `function_declaration` is a
tool as Gemini declares it.
"""

from __future__ import annotations

from typing import Any

#: Keys of Gemini's ``Schema`` kept as they are. Everything else is dropped, notably
#: ``additionalProperties``, ``$schema``, ``$id``, ``$comment``, ``exclusiveMinimum`` /
#: ``exclusiveMaximum``, ``multipleOf``, ``uniqueItems``, ``patternProperties``, ``not``,
#: ``if`` / ``then`` / ``else``, ``dependencies``, ``readOnly`` / ``writeOnly`` and
#: ``contentEncoding``: Gemini refuses unknown keys, so a schema using them still works,
#: with those constraints left to the tool's own validation.
KEPT_SCHEMA_KEYS = frozenset(
    {
        "description",
        "title",
        "nullable",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "default",
        "example",
        "propertyOrdering",
    }
)
GEMINI_TYPES = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"})
#: Formats Gemini accepts, per type; others (email, uri, uuid, ...) are dropped.
FORMATS = {
    "STRING": {"enum", "date-time"},
    "INTEGER": {"int32", "int64"},
    "NUMBER": {"float", "double"},
}
#: How deep a recursive ``$ref`` is expanded before it becomes a plain object.
MAX_REF_DEPTH = 3


def to_gemini_schema(schema: Any) -> dict[str, Any]:
    """Convert a JSON schema to Gemini's OpenAPI-3.0 subset.

    Local ``$ref``s (``#/$defs/...``, ``#/definitions/...``) are inlined (recursive ones
    up to `MAX_REF_DEPTH`); ``oneOf`` becomes ``anyOf``; a single ``allOf`` member is
    merged in; ``const`` becomes a one-value ``enum``; ``type: [T, "null"]`` becomes
    ``type: T, nullable: true``; ``enum`` is kept only on strings (Gemini's enums are
    strings; other enums are dropped); the first of ``examples`` becomes ``example``; ``required`` names only
    listed properties. See `KEPT_SCHEMA_KEYS` for what is dropped.
    """
    if not isinstance(schema, dict):
        return {}
    definitions = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    return _convert(schema, definitions, ())


def _resolve(ref: str, definitions: dict[str, Any]) -> Any:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return definitions.get(ref[len(prefix) :])
    return None


def _convert(
    schema: dict[str, Any], definitions: dict[str, Any], seen: tuple[str, ...]
) -> dict[str, Any]:
    if "$ref" in schema:
        ref = schema["$ref"]
        target = _resolve(ref, definitions) if isinstance(ref, str) else None
        if not isinstance(target, dict) or seen.count(ref) >= MAX_REF_DEPTH:
            return {"type": "OBJECT"}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return _convert(merged, definitions, (*seen, ref))
    out: dict[str, Any] = {k: v for k, v in schema.items() if k in KEPT_SCHEMA_KEYS}
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        for member in all_of:
            if isinstance(member, dict):
                part = _convert(member, definitions, seen)
                for key, value in part.items():
                    if key == "properties":
                        out.setdefault("properties", {}).update(value)
                    elif key == "required":
                        out["required"] = sorted({*out.get("required", []), *value})
                    else:
                        out.setdefault(key, value)
    any_of = schema.get("anyOf", schema.get("oneOf"))
    if isinstance(any_of, list) and any_of:
        members = [m for m in any_of if isinstance(m, dict)]
        non_null = [m for m in members if m.get("type") != "null"]
        if len(non_null) < len(members):
            out["nullable"] = True
        if len(non_null) == 1:
            out.update(_convert(non_null[0], definitions, seen))
        elif non_null:
            out["anyOf"] = [_convert(m, definitions, seen) for m in non_null]
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            out["nullable"] = True
        if len(kinds) == 1:
            kind = kinds[0]
        elif kinds:
            out["anyOf"] = [_convert({**schema, "type": k}, definitions, seen) for k in kinds]
            kind = None
        else:
            kind = "null"
    if isinstance(kind, str) and kind.upper() in GEMINI_TYPES:
        out["type"] = kind.upper()
    enum = [schema["const"]] if "const" in schema else schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        if out.setdefault("type", "STRING") == "STRING":
            out["enum"] = list(enum)
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS.get(out.get("type", ""), ()):
        out["format"] = fmt
    if "example" not in out and isinstance(schema.get("examples"), list) and schema["examples"]:
        out["example"] = schema["examples"][0]
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        converted = {
            name: _convert(prop, definitions, seen)
            for name, prop in properties.items()
            if isinstance(prop, dict)
        }
        out["properties"] = {**out.get("properties", {}), **converted}
        out.setdefault("type", "OBJECT")
    required = schema.get("required")
    if isinstance(required, list):
        names = out.get("properties", {})
        out["required"] = sorted({*out.get("required", []), *(r for r in required if r in names)})
    if not out.get("required"):
        out.pop("required", None)
    items = schema.get("items")
    if isinstance(items, dict):
        out["items"] = _convert(items, definitions, seen)
        out.setdefault("type", "ARRAY")
    return out


def function_declaration(function: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": function.name}
    if function.description:
        out["description"] = function.description
    parameters = to_gemini_schema(function.parameters)
    if parameters.get("properties"):  # Gemini refuses an OBJECT with empty properties
        out["parameters"] = parameters
    return out
