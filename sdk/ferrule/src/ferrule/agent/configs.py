"""Ailoy 0.2's run settings: `LangModelInferConfig` (sampling, thinking, the document
polyfill), `KnowledgeConfig` (how many documents to retrieve) and `AgentConfig` (both, for
`Agent.run` / `Agent.run_delta`), each with ``from_dict``. Every value is checked when set;
a bad one is an `InvalidInputError` naming its field.

`LangModelInferConfig.infer_options` is the same settings as ferrule's ``infer`` inputs
(``reasoning``, ``temperature``, ``top_p``, ``max_tokens``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, get_args

import attrs
from ferrule_kernel import InvalidInputError
from ferrule_kit.models.lm import ANY_JSON_OBJECT

__all__ = [
    "AgentConfig",
    "DocumentPolyfill",
    "Grammar",
    "KVCacheConfig",
    "KnowledgeConfig",
    "LangModelInferConfig",
]

ThinkEffort = Literal["disable", "enable", "low", "medium", "high"]

#: Qwen3's polyfill for documents (Qwen3 has no document role): the system message gains a
#: "Knowledges" section and the user's question the documents, in these Jinja templates.
_QWEN3_SYSTEM = (
    "{{- text }}\n# Knowledges\nAfter the user's question, a list of documents retrieved from "
    "the knowledge base may appear. Try to answer the user\u2019s question based on the "
    "provided knowledges."
)
_QWEN3_QUERY = (
    "{{- text }}\n"
    "{%- if documents %}\n"
    '    {{- "<documents>\\n" }}\n'
    "    {%- for doc in documents %}\n"
    '    {{- "<document>\\n" }}\n'
    "        {{- doc.text + '\\n' }}\n"
    '    {{- "</document>\\n" }}\n'
    "    {%- endfor %}\n"
    '    {{- "</documents>\\n" }}\n'
    "{%- endif %}"
)
_POLYFILLS = {"Qwen3": (_QWEN3_SYSTEM, _QWEN3_QUERY)}


def _fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise InvalidInputError(
            f"expected a dict, got {type(data).__name__}", field=where or "config"
        )
    known = {f.name for f in attrs.fields(cls)}
    for key in data:
        if key not in known:
            raise InvalidInputError(
                f"unknown setting; {cls.__name__} has {', '.join(sorted(known))}",
                field=f"{where}.{key}" if where else str(key),
            )
    return dict(data)


def _optional(kind: type | tuple[type, ...], name: str) -> Any:
    def check(_instance: Any, _attribute: Any, value: Any) -> None:
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise InvalidInputError(
                f"expected {name}, got {type(value).__name__}", field=_attribute.name
            )

    return check


def _in_range(low: float, high: float | None) -> Any:
    def check(_instance: Any, attribute: Any, value: Any) -> None:
        if value is not None and (value < low or (high is not None and value > high)):
            bound = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise InvalidInputError(f"must be {bound}, got {value}", field=attribute.name)

    return check


def _think_effort(_instance: Any, attribute: Any, value: Any) -> None:
    if value is not None and value not in get_args(ThinkEffort):
        raise InvalidInputError(
            f"must be one of {', '.join(get_args(ThinkEffort))}, got {value!r}",
            field=attribute.name,
        )


@attrs.define
class DocumentPolyfill:
    """How documents reach a model that has no place for them: Jinja templates for the
    system message (``text``: its text) and the user's query (``text`` and
    ``documents``, each with ``.text``). ``DocumentPolyfill.get("Qwen3")`` is Qwen3's."""

    system_message_template: str | None = attrs.field(
        default=None, validator=_optional(str, "a string")
    )
    query_message_template: str | None = attrs.field(
        default=None, validator=_optional(str, "a string")
    )

    @classmethod
    def get(cls, kind: str) -> DocumentPolyfill:
        try:
            system, query = _POLYFILLS[kind]
        except KeyError:
            raise InvalidInputError(
                f"unknown polyfill {kind!r}; known: {', '.join(_POLYFILLS)}",
                field="document_polyfill",
            ) from None
        return cls(system, query)


def _polyfill(value: Any) -> DocumentPolyfill | None:
    if value is None or isinstance(value, DocumentPolyfill):
        return value
    if isinstance(value, str):
        return DocumentPolyfill.get(value)
    if isinstance(value, Mapping):
        return DocumentPolyfill(**_fields(DocumentPolyfill, value, "document_polyfill"))
    raise InvalidInputError(
        f"expected a polyfill's name, a dict or a DocumentPolyfill, got {type(value).__name__}",
        field="document_polyfill",
    )


def _schema_text(_instance: Any, attribute: Any, value: Any) -> None:
    try:
        schema = json.loads(value) if isinstance(value, str) else None
    except ValueError as exc:
        raise InvalidInputError(f"not JSON: {exc}", field=attribute.name) from None
    if not isinstance(schema, dict):
        raise InvalidInputError("expected a JSON schema object, as text", field=attribute.name)


class Grammar:
    """What shape a reply must have (Ailoy's ``LangModelInferConfig.grammar``):
    ``Grammar.Plain()`` (any text), ``Grammar.JSON()`` (a JSON object: ferrule's JSON
    mode) or ``Grammar.JSONSchema(schema)`` (JSON valid against ``schema``, given as JSON
    text: ferrule's ``output_schema``). ``Grammar.Regex`` and ``Grammar.CFG`` exist for
    Ailoy's code to name, and a config given one is refused: ferrule constrains replies
    by JSON schema only."""

    @attrs.frozen
    class Plain:
        pass

    @attrs.frozen
    class JSON:
        pass

    @attrs.frozen
    class JSONSchema:
        schema: str = attrs.field(validator=_schema_text)

    @attrs.frozen
    class Regex:
        regex: str

    @attrs.frozen
    class CFG:
        cfg: str


def _grammar(_instance: Any, attribute: Any, value: Any) -> None:
    if value is None or isinstance(value, (Grammar.Plain, Grammar.JSON, Grammar.JSONSchema)):
        return
    if isinstance(value, (Grammar.Regex, Grammar.CFG)):
        raise InvalidInputError(
            "ferrule constrains a reply by JSON schema only (Grammar.JSON or "
            "Grammar.JSONSchema); a regular expression or a grammar is not taken",
            field=attribute.name,
        )
    raise InvalidInputError(
        f"expected a Grammar (Plain, JSON or JSONSchema), got {type(value).__name__}",
        field=attribute.name,
    )


@attrs.define
class LangModelInferConfig:
    """How a model infers: ``think_effort`` (``disable``, ``enable``, or ``low`` /
    ``medium`` / ``high`` where the provider takes an effort), ``temperature`` (0 to 2),
    ``top_p`` (0 to 1), ``max_tokens`` (at least 1) and ``document_polyfill`` (a
    `DocumentPolyfill`, or ``"Qwen3"``) and ``grammar`` (a `Grammar`: the reply's shape,
    as ``output_schema``). None leaves the model's default."""

    document_polyfill: DocumentPolyfill | None = attrs.field(default=None, converter=_polyfill)
    think_effort: ThinkEffort | None = attrs.field(default=None, validator=_think_effort)
    temperature: float | None = attrs.field(
        default=None, validator=[_optional((int, float), "a number"), _in_range(0.0, 2.0)]
    )
    top_p: float | None = attrs.field(
        default=None, validator=[_optional((int, float), "a number"), _in_range(0.0, 1.0)]
    )
    max_tokens: int | None = attrs.field(
        default=None, validator=[_optional(int, "an integer"), _in_range(1, None)]
    )
    grammar: Any = attrs.field(default=None, validator=_grammar)

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> LangModelInferConfig:
        return cls(**_fields(cls, config, ""))

    def infer_options(self) -> dict[str, Any]:
        """These settings as ferrule's ``infer`` inputs (the unset ones left out)."""
        options: dict[str, Any] = {}
        if self.think_effort is not None:
            effort = self.think_effort
            options["reasoning"] = {"disable": False, "enable": True}.get(effort, effort)
        for name in ("temperature", "top_p", "max_tokens"):
            value = getattr(self, name)
            if value is not None:
                options[name] = value
        if isinstance(self.grammar, Grammar.JSON):
            options["output_schema"] = dict(ANY_JSON_OBJECT)
        elif isinstance(self.grammar, Grammar.JSONSchema):
            options["output_schema"] = json.loads(self.grammar.schema)
        return options


@attrs.define
class KnowledgeConfig:
    """How knowledge is searched: ``top_k`` documents (at least 1; None: the default)."""

    top_k: int | None = attrs.field(
        default=None, validator=[_optional(int, "an integer"), _in_range(1, None)]
    )

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> KnowledgeConfig:
        return cls(**_fields(cls, config, ""))


@attrs.define
class KVCacheConfig:
    """How a local model's KV cache is sized (Ailoy's ``LangModel.new_local(kv_cache=)``):
    ``context_window_size`` tokens per sequence (llama.cpp's ``n_ctx``) and
    ``prefill_chunk_size`` prompt tokens per decode step (its ``n_batch``). A
    ``sliding_window_size`` is refused where it is given: llama.cpp takes a sliding window
    from the model's own file, not from its caller."""

    context_window_size: int | None = attrs.field(
        default=None, validator=[_optional(int, "an integer"), _in_range(1, None)]
    )
    prefill_chunk_size: int | None = attrs.field(
        default=None, validator=[_optional(int, "an integer"), _in_range(1, None)]
    )
    sliding_window_size: int | None = attrs.field(
        default=None, validator=[_optional(int, "an integer"), _in_range(1, None)]
    )


def _inference(value: Any) -> LangModelInferConfig | None:
    if value is None or isinstance(value, LangModelInferConfig):
        return value
    if isinstance(value, Mapping):
        return LangModelInferConfig(**_fields(LangModelInferConfig, value, "inference"))
    raise InvalidInputError(
        f"expected a LangModelInferConfig or a dict, got {type(value).__name__}", field="inference"
    )


def _knowledge(value: Any) -> KnowledgeConfig | None:
    if value is None or isinstance(value, KnowledgeConfig):
        return value
    if isinstance(value, Mapping):
        return KnowledgeConfig(**_fields(KnowledgeConfig, value, "knowledge"))
    raise InvalidInputError(
        f"expected a KnowledgeConfig or a dict, got {type(value).__name__}", field="knowledge"
    )


@attrs.define
class AgentConfig:
    """A run's settings: ``inference`` (`LangModelInferConfig`) and ``knowledge``
    (`KnowledgeConfig`); None leaves the defaults."""

    inference: LangModelInferConfig | None = attrs.field(default=None, converter=_inference)
    knowledge: KnowledgeConfig | None = attrs.field(default=None, converter=_knowledge)

    @classmethod
    def from_dict(cls, config: Mapping[str, Any]) -> AgentConfig:
        return cls(**_fields(cls, config, ""))
