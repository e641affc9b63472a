"""Input validation (a strict cattrs converter) and JSON schemas of attrs input classes.

cattrs' default converter coerces (``str(5)`` for a ``str`` field); at a request
boundary that hides mistakes, so this converter checks types instead and refuses
unknown fields. `structure_input` turns every failure into one `InvalidInputError`
listing each bad field by path (``$.options.temperature``).

A field whose key on the wire differs from its attribute name says so itself, in its
attrs metadata: ``contents: list[Part] = attrs.field(metadata={"wire_key": "content"})``.
Error paths (`field_errors`) and JSON schemas (`json_schema`) then name ``content``, the
key the caller sent. Renaming the key is the converter's job: the class's structure and
unstructure hooks use cattrs' ``override(rename="content")`` for that field.

cattrs costs more to import than the rest of a cold start, so it is imported when first
needed: `structure_input` checks a *flat* class (every field a string, integer, number,
boolean, any JSON value, or one of those or None; no wire keys) itself, with the same
results and the same errors as the default converter (a hypothesis test holds the two
together), and the default converter (`default_converter`, also ``validation.converter``)
is made on first use.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Union

import attrs

from .errors import InvalidInputError

if TYPE_CHECKING:
    import cattrs

_JSON_TYPE_NAMES = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    dict: "object",
    list: "array",
    tuple: "array",
}


def type_name(value: Any) -> str:
    """The JSON name of a value's type (``"string"``, ``"integer"``, ``"array"``, ...; a
    Python class name for anything else), for messages such as ``expected object, got
    string``."""
    return _JSON_TYPE_NAMES.get(type(value), type(value).__name__)


def _strict(expected: str, check: typing.Callable[[Any], bool], cast=None):
    def hook(value: Any, _type: Any) -> Any:
        if not check(value):
            raise TypeError(f"expected {expected}, got {type_name(value)}")
        return cast(value) if cast is not None else value

    return hook


def make_converter() -> cattrs.Converter:
    """A converter that validates instead of coercing; copy it to add hooks of your own."""
    import cattrs
    import cattrs.cols
    from cattrs.gen import make_dict_structure_fn

    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(str, _strict("string", lambda v: isinstance(v, str)))
    converter.register_structure_hook(bool, _strict("boolean", lambda v: isinstance(v, bool)))
    converter.register_structure_hook(
        int, _strict("integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
    )
    converter.register_structure_hook(
        float,
        _strict("number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), float),
    )
    converter.register_structure_hook(Any, lambda value, _type: value)
    converter.register_structure_hook_func(lambda t: typing.get_origin(t) is Literal, _literal)
    converter.register_structure_hook_factory(
        _is_list,
        lambda t, c: type_checked((list, tuple), "array", cattrs.cols.list_structure_factory(t, c)),
    )
    converter.register_structure_hook_factory(
        _is_mapping,
        lambda t, c: type_checked(Mapping, "object", cattrs.cols.mapping_structure_factory(t, c)),
    )
    converter.register_structure_hook_factory(
        attrs.has,
        lambda t, c: type_checked(
            Mapping,
            "object",
            make_dict_structure_fn(
                t, c, _cattrs_forbid_extra_keys=True, _cattrs_detailed_validation=True
            ),
        ),
    )
    return converter


def _is_list(tp: Any) -> bool:
    return typing.get_origin(tp) in (list, Sequence, typing.Sequence) or tp is list


def _is_mapping(tp: Any) -> bool:
    return typing.get_origin(tp) in (dict, Mapping, typing.Mapping) or tp is dict


def type_checked(kinds: Any, expected: str, structure: typing.Callable[[Any, Any], Any]):
    """Wrap the cattrs structure hook ``structure`` so that a value that is not an instance
    of ``kinds`` (or is a string) fails with ``expected <expected>, got <type>`` first.

    For hooks registered on a `make_converter` converter: cattrs' own hooks would iterate
    a string as a list, or call ``.keys()`` on it as a mapping.
    """

    def hook(value: Any, tp: Any) -> Any:
        if not isinstance(value, kinds) or isinstance(value, str):
            raise TypeError(f"expected {expected}, got {type_name(value)}")
        return structure(value, tp)

    return hook


def _literal(value: Any, tp: Any) -> Any:
    allowed = typing.get_args(tp)
    if value not in allowed or type(value) not in {type(a) for a in allowed}:
        raise ValueError(f"expected one of {', '.join(repr(a) for a in allowed)}, got {value!r}")
    return value


_default: cattrs.Converter | None = None


def default_converter() -> cattrs.Converter:
    """The kernel's converter (`make_converter`'s), made on first use: what structures a
    request whose spec names no converter of its own, and unstructures attrs outputs."""
    global _default
    if _default is None:
        _default = make_converter()
    return _default


def __getattr__(name: str) -> Any:
    if name == "converter":  # the module attribute it always was, made on first use
        return default_converter()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _wire_key(field: attrs.Attribute[Any]) -> str:
    """The key ``field`` has on the wire: its ``wire_key`` metadata, else its name."""
    return field.metadata.get("wire_key", field.name)


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return "required field missing"
    if isinstance(exc, InvalidInputError):
        return exc.message
    text = str(exc)
    return text if text else type(exc).__name__


def _join(path: str, field: str) -> str:
    if field.startswith("$"):  # already absolute
        return field
    if not path.startswith("$"):  # relative to a relative path
        return f"{path}{field}" if field.startswith("[") else f"{path}.{field}"
    return f"{path}{field}" if field.startswith("[") else f"{path}.{field}"


def key_path(path: str, key: str) -> str:
    """``$.name`` for a plain key; ``$["odd.key"]`` (JSON-quoted) for any other."""
    if key.isidentifier():
        return f"{path}.{key}"
    import json

    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


def field_errors(exc: BaseException, path: str = "$") -> list[dict[str, str]]:
    """Flatten a validation error into ``[{"path": ..., "message": ...}]``, one entry per
    bad field.

    ``exc`` is what structuring raised: a cattrs validation error (nested as deep as the
    input), an `InvalidInputError` (its ``errors`` paths are taken relative to ``path``),
    or any other exception (one entry at ``path``). ``path`` is where the structured
    value sits in the request (``"$"`` at the top, ``"$.messages[0]"`` deeper). Paths name
    wire keys: a field's ``wire_key`` metadata, else its attribute name.
    """
    if isinstance(exc, InvalidInputError):
        if exc.errors:
            return [  # other keys of an entry (``refused``) travel with it
                {**e, "path": _join(path, e["path"]) if e["path"] != "$" else path}
                for e in exc.errors
            ]
        return [{"path": path, "message": exc.message}]
    cattrs = sys.modules.get("cattrs")  # without it loaded, no cattrs error can exist
    if cattrs is not None and isinstance(exc, cattrs.IterableValidationError):
        errors = []
        items, without = exc.group_exceptions()
        for sub, item in items:
            errors.extend(field_errors(sub, f"{path}[{item.index!r}]"))
        for sub in without:
            errors.extend(field_errors(sub, path))
        return errors
    if cattrs is not None and isinstance(exc, cattrs.ClassValidationError):
        errors = []
        attributes, without = exc.group_exceptions()
        fields = attrs.fields_dict(exc.cl) if attrs.has(exc.cl) else {}
        for sub, attribute in attributes:
            field = fields.get(attribute.name)
            key = _wire_key(field) if field is not None else attribute.name
            errors.extend(field_errors(sub, f"{path}.{key}"))
        for sub in without:
            errors.extend(field_errors(sub, path))
        return errors
    if cattrs is not None and isinstance(exc, cattrs.errors.ForbiddenExtraKeysError):
        return [
            {"path": key_path(path, key), "message": "unknown field"}
            for key in sorted(exc.extra_fields)
        ]
    return [{"path": path, "message": _message(exc)}]


# Structure hooks by (converter, class): looking one up costs more than a small class's
# structuring. Register hooks before a converter's first use (as module-level code does).
_HOOKS: dict[tuple[cattrs.Converter, type], typing.Callable[[Any, Any], Any]] = {}

#: How a flat class's field types are checked: type -> (check, what the error expects).
#: The same checks, in the same words, as `make_converter`'s hooks.
_FLAT_CHECKS: dict[Any, tuple[typing.Callable[[Any], bool], str]] = {
    str: (lambda v: isinstance(v, str), "string"),
    bool: (lambda v: isinstance(v, bool), "boolean"),
    int: (lambda v: isinstance(v, int) and not isinstance(v, bool), "integer"),
    float: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "number"),
}

#: A flat field: (wire key = init argument, required, optional (None allowed), check or
#: None for any value, expected, cast to float).
_FlatField = tuple[str, bool, bool, typing.Callable[[Any], bool] | None, str, bool]

# Class -> its flat fields, or None when it is not flat (the converter structures it).
_FLAT: dict[type, tuple[tuple[_FlatField, ...], frozenset[str]] | None] = {}


def _flat_field(field: attrs.Attribute[Any]) -> _FlatField | None:
    if not field.init or field.alias != field.name or "wire_key" in field.metadata:
        return None
    tp = field.type
    optional = False
    if typing.get_origin(tp) is Union or (
        hasattr(types, "UnionType") and isinstance(tp, types.UnionType)
    ):
        args = typing.get_args(tp)
        if len(args) != 2 or type(None) not in args:
            return None
        optional = True
        tp = args[0] if args[1] is type(None) else args[1]
    required = field.default is attrs.NOTHING
    if tp is Any:
        return (field.name, required, optional, None, "", False)
    found = _FLAT_CHECKS.get(tp)
    if found is None:
        return None
    return (field.name, required, optional, found[0], found[1], tp is float)


def _flat(cls: type) -> tuple[tuple[_FlatField, ...], frozenset[str]] | None:
    try:
        return _FLAT[cls]
    except KeyError:
        pass
    found: tuple[tuple[_FlatField, ...], frozenset[str]] | None = None
    if attrs.has(cls):
        try:
            attrs.resolve_types(cls)
        except Exception:  # let the converter say what is wrong with it
            fields = None
        else:
            fields = [_flat_field(f) for f in attrs.fields(cls)]
        if fields is not None and all(f is not None for f in fields):
            flat = typing.cast("tuple[_FlatField, ...]", tuple(fields))
            found = (flat, frozenset(f[0] for f in flat))
    _FLAT[cls] = found
    return found


def _structure_flat(
    data: Mapping[str, Any], cls: type, flat: tuple[tuple[_FlatField, ...], frozenset[str]]
) -> Any:
    """``cls`` from ``data``: what the default converter's structure hook does for a flat
    class, errors included (per field in field order, then unknown keys, sorted)."""
    fields, known = flat
    kwargs: dict[str, Any] = {}
    errors: list[dict[str, str]] | None = None
    present = 0
    for name, required, optional, check, expected, to_float in fields:
        if name not in data:
            if required:
                errors = errors or []
                errors.append({"path": f"$.{name}", "message": "required field missing"})
            continue
        present += 1
        value = data[name]
        if check is None or (optional and value is None):
            kwargs[name] = value
        elif check(value):
            kwargs[name] = float(value) if to_float else value
        else:
            errors = errors or []
            message = f"expected {expected}, got {type_name(value)}"
            errors.append({"path": f"$.{name}", "message": message})
    if len(data) > present:
        errors = errors or []
        unknown = sorted(key for key in data if key not in known)
        errors.extend({"path": key_path("$", key), "message": "unknown field"} for key in unknown)
    if errors:
        raise InvalidInputError("flat", errors=errors)
    return cls(**kwargs)


def structure_input(
    data: Any, cls: type, *, target: str, conv: cattrs.Converter | None = None
) -> Any:
    """Structure request input ``data`` into ``cls`` or raise `InvalidInputError` naming each
    bad field. ``conv`` None is the kernel's converter (`default_converter`). An attrs
    ``cls`` takes a JSON object; any other type (``list[Item]``, ``Item | None``, ``bool``)
    takes what the converter structures as that type."""
    if type(data) is not dict and not isinstance(data, Mapping) and attrs.has(cls):
        raise InvalidInputError(
            f"invalid input for {target}: $: expected object, got {type_name(data)}",
            errors=[{"path": "$", "message": f"expected object, got {type_name(data)}"}],
            target=target,
        )
    if conv is None:
        flat = _flat(cls)
        if flat is not None:
            try:
                return _structure_flat(data, cls, flat)
            except (InvalidInputError, TypeError, ValueError) as exc:
                errors = field_errors(exc)
            summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
            raise InvalidInputError(
                f"invalid input for {target}: {summary}", errors=errors, target=target
            )
        conv = default_converter()
    hook = _HOOKS.get((conv, cls))
    if hook is None:
        hook = _HOOKS[(conv, cls)] = conv.get_structure_hook(cls)
    import cattrs

    try:
        return hook(data, cls)
    except (cattrs.BaseValidationError, InvalidInputError, TypeError, ValueError) as exc:
        # TypeError/ValueError: raised by an attrs validator or __attrs_post_init__
        errors = field_errors(exc)
    summary = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
    raise InvalidInputError(f"invalid input for {target}: {summary}", errors=errors, target=target)


def json_schema(tp: Any) -> dict[str, Any]:
    """JSON Schema of an attrs class, a TypedDict or a type annotation made of
    JSON-compatible parts."""
    if tp is Any or tp is object:
        return {}
    if attrs.has(tp):
        attrs.resolve_types(tp)
        properties: dict[str, Any] = {}
        required = []
        for field in attrs.fields(tp):
            prop = json_schema(field.type if field.type is not None else Any)
            if "description" in field.metadata:
                prop = {**prop, "description": field.metadata["description"]}
            if field.default is attrs.NOTHING:
                required.append(_wire_key(field))
            elif not isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
                default = field.default
                if isinstance(default, (str, int, float, bool, type(None))):
                    prop = {**prop, "default": default}
            properties[_wire_key(field)] = prop
        schema: dict[str, Any] = {
            "type": "object",
            "title": tp.__name__,
            "properties": properties,
            "additionalProperties": False,
        }
        if required:
            schema["required"] = required
        doc = (tp.__doc__ or "").strip()
        if doc and not doc.startswith(tp.__name__ + "("):  # attrs' generated repr-like doc
            schema["description"] = doc.split("\n\n")[0]
        return schema
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        schema = {
            "type": "object",
            "title": tp.__name__,
            "properties": {key: json_schema(hint) for key, hint in hints.items()},
            "additionalProperties": False,
        }
        required = [key for key in hints if key in tp.__required_keys__]
        if required:
            schema["required"] = required
        return schema
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        return {"enum": list(args)}
    if origin is Union or (hasattr(types, "UnionType") and isinstance(tp, types.UnionType)):
        options = [json_schema(a) for a in args]
        return {"anyOf": options}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if tp in _JSON_TYPE_NAMES:
        return {"type": _JSON_TYPE_NAMES[tp]}
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return {"type": "array", "prefixItems": [json_schema(a) for a in args]}
        return {"type": "array", "items": json_schema(args[0]) if args else {}}
    if origin in (dict, Mapping, typing.Mapping):
        return {"type": "object", "additionalProperties": json_schema(args[1]) if args else {}}
    return {}


def text_limit(
    most: int, *, empty: bool = True
) -> typing.Callable[[Any, attrs.Attribute[Any], Any], None]:
    """An attrs validator: a string of at most ``most`` characters and, with
    ``empty=False``, not blank (white space only); a None value passes, for optional
    fields. The error names the field, as `in_range`'s does:
    ``query: str = attrs.field(validator=text_limit(500, empty=False))`` refuses 600
    characters with ``query is 600 characters long; the limit is 500``."""

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None:
            return
        key = _wire_key(attribute)
        if not empty and not value.strip():
            raise InvalidInputError(f"{key} must not be empty", field=key)
        if len(value) > most:
            raise InvalidInputError(
                f"{key} is {len(value)} characters long; the limit is {most}", field=key
            )

    return check


def in_range(
    low: float | None = None, high: float | None = None
) -> typing.Callable[[Any, attrs.Attribute[Any], Any], None]:
    """An attrs validator: the value lies in ``[low, high]`` (a None bound is open; NaN lies
    nowhere); a None value passes, for optional fields.

    ``temperature: float | None = attrs.field(default=None, validator=in_range(0.0, 2.0))``
    refuses 5 with ``must be between 0.0 and 2.0, got 5``. The error names the field
    relative to its class, so `field_errors` reports it under the path of the class
    (``$.turns[0].delay`` for a nested one).
    """
    if low is None and high is None:
        raise ValueError("in_range needs a low or a high bound")
    if high is None:
        bound = f"at least {low}"
    elif low is None:
        bound = f"at most {high}"
    else:
        bound = f"between {low} and {high}"

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None:
            return
        # written as "not inside" so that NaN, which compares false to everything, is refused
        if not ((low is None or value >= low) and (high is None or value <= high)):
            raise InvalidInputError(f"must be {bound}, got {value}", field=_wire_key(attribute))

    return check
