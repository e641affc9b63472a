"""An agent's configuration as data, Agno's ``Agent.to_dict`` / ``Agent.from_dict``:
`agent_config` writes every option that differs from its default and can be written as
JSON (models as Agno's ``{"name", "id", "provider"}``, tools as their name, description and
parameters, the db by its id, knowledge by its name, schemas by their class's name);
`agent_options` reads such a dict back into ``Agent(**options)``'s options, finding what
cannot be written (tools' code, live models, dbs, knowledge, schemas) in a `Registry`;
a model the registry lacks is given to `Agent` by its ``"provider:model_id"`` name.

Nothing in the dict names code to import: a tool, db, knowledge or schema is only ever one
the caller registered. With ``strict=True`` a reference the registry cannot resolve is an
`InvalidInputError` naming the field; otherwise it is left out, with a warning in the log."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs
from ferrule_kernel import InvalidInputError, get_logger

from .settings import OPTION_GROUPS, AgentSettings, agent_id_for

log = get_logger("ferrule.agent")

#: Options holding a model (written as Agno's model dict, read back as a model).
MODEL_OPTIONS = ("reasoning_model", "parser_model", "output_model", "followup_model")
#: Options written by reference (the registry resolves them) below, or not at all (Agno
#: writes no fallback models, and skips the events' enums).
SKIPPED = ("db", "knowledge", "input_schema", "output_schema", "fallback_models", "events_to_skip")

#: ferrule's model classes by their Agno name, to the ``provider`` `model_of` takes.
_MODEL_NAMES = {
    "OpenAIChat": "openai",
    "OpenAIResponses": "openai-responses",
    "Claude": "anthropic",
    "Gemini": "google",
    "xAI": "xai",
    "Ollama": "ollama",
    "VLLM": "vllm",
    "LlamaCpp": "llama_cpp",
}


@attrs.define(kw_only=True)
class Registry:
    """What `Agent.from_dict` may bind a dict's references to (Agno's ``Registry``):
    ``tools`` (functions, `Tool` objects, toolsets) found by name, live ``models`` found by
    id and provider, ``dbs`` by id, ``knowledge`` by name and ``schemas`` (pydantic
    classes) by class name."""

    tools: list[Any] = attrs.Factory(list)
    models: list[Any] = attrs.Factory(list)
    dbs: list[Any] = attrs.Factory(list)
    knowledge: list[Any] = attrs.Factory(list)
    schemas: list[type] = attrs.Factory(list)

    def get_tool(self, name: str) -> Any:
        """The registered tool named ``name`` (a function by its ``__name__``), or None."""
        for tool in self.tools:
            if getattr(tool, "name", None) == name or getattr(tool, "__name__", None) == name:
                return tool
        return None

    def get_model(self, model_id: str, provider: str | None = None) -> Any:
        """The registered model of this id (and provider, when given), or None."""
        for model in self.models:
            if getattr(model, "id", None) != model_id:
                continue
            if provider is None or model.to_dict().get("provider") == provider:
                return model
        return None

    def get_db(self, db_id: str) -> Any:
        """The registered db of this id, or None."""
        return next((db for db in self.dbs if getattr(db, "id", None) == db_id), None)

    def get_knowledge(self, name: str) -> Any:
        """The registered knowledge of this name, or None."""
        return next((k for k in self.knowledge if getattr(k, "name", None) == name), None)

    def get_schema(self, name: str) -> type | None:
        """The registered schema class of this name, or None."""
        return next((s for s in self.schemas if s.__name__ == name), None)


def _is_data(value: Any) -> bool:
    """Whether ``value`` is plain JSON data (what a dict of the agent can hold as it is)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _model_dict(model: Any) -> dict[str, Any] | str | None:
    to_dict = getattr(model, "to_dict", None)
    if callable(to_dict):
        written = to_dict()
        return written if isinstance(written, dict) and written.get("id") else None
    return model if isinstance(model, str) else None


def _tool_dict(tool: Any) -> dict[str, Any] | None:
    if not isinstance(getattr(tool, "name", None), str):
        return None  # a toolset (an MCP server): its tools are found at run time
    return {
        "name": tool.name,
        "description": getattr(tool, "description", None),
        "parameters": getattr(tool, "parameters", None),
        "requires_confirmation": bool(getattr(tool, "requires_confirmation", False)),
    }


def agent_config(agent: Any) -> dict[str, Any]:
    """``agent``'s configuration (see the module docstring); options left at their default
    and those that are code (hooks, callables) are not written, as Agno's."""
    config: dict[str, Any] = {}
    model = _model_dict(agent.model)
    if model is not None:
        config["model"] = model
    defaults = AgentSettings().options()  # each option as a default agent resolves it
    for name in OPTION_GROUPS:
        value = getattr(agent, name)
        if name == "id":  # not one made from the name, nor a new one for no name
            given = agent.settings.identity.id is not None
            if given or (agent.name and value != agent_id_for(agent.name)):
                config["id"] = value
        elif name == "session_id":  # a new one per agent unless given
            if agent.settings.session.session_id is not None:
                config["session_id"] = value
        elif name in MODEL_OPTIONS:
            written = _model_dict(value) if value is not None else None
            if written is not None:
                config[name] = written
        elif name in SKIPPED or value is None or value == defaults[name]:
            continue
        elif _is_data(value) and not (value == {} or value == []):
            config[name] = value
    if isinstance(agent.tools, list):
        tools = [written for tool in agent.tools if (written := _tool_dict(tool)) is not None]
        if tools:
            config["tools"] = tools
    db_id = getattr(agent.db, "id", None)
    if isinstance(db_id, str):
        config["db"] = {"id": db_id}
    knowledge_name = getattr(agent.knowledge, "name", None)
    if isinstance(knowledge_name, str):
        config["knowledge"] = {"name": knowledge_name}
    for name in ("input_schema", "output_schema"):
        schema = getattr(agent, name)
        if isinstance(schema, type):
            config[name] = schema.__name__
        elif isinstance(schema, dict):
            config[name] = schema
    return config


def _model_of(written: Any, registry: Registry | None, field: str) -> Any:
    """A model from its dict: the registry's live one when it has it, else its
    ``"provider:model_id"`` name, which `Agent` makes a model of (a name stays as it is)."""
    if isinstance(written, str):
        return written
    if not isinstance(written, Mapping) or not isinstance(written.get("id"), str):
        raise InvalidInputError(
            "a model is written as {'id', 'provider', 'name'} or 'provider:model_id'", field=field
        )
    provider = written.get("provider")
    if registry is not None:
        live = registry.get_model(written["id"], provider)
        if live is not None:
            return live
    key = _MODEL_NAMES.get(str(written.get("name"))) or str(provider or "").lower()
    if not key:
        raise InvalidInputError(f"model {written['id']!r} names no provider", field=field)
    return f"{key}:{written['id']}"


class _References:
    """Resolving a dict's references in a registry: strict ones raise, others are dropped."""

    def __init__(self, registry: Registry | None, strict: bool, label: str) -> None:
        self.registry, self.strict, self.label = registry, strict, label

    def resolve(self, field: str, key: str, find: Callable[[Registry, str], Any]) -> Any:
        found = find(self.registry, key) if self.registry is not None else None
        if found is None:
            message = f"{self.label}: {field} {key!r} is not in the registry"
            if self.strict:
                raise InvalidInputError(message, field=field)
            log.warning("agent.from_dict.unresolved", field=field, reference=key)
        return found


def agent_options(
    data: Mapping[str, Any], registry: Registry | None = None, strict: bool = False
) -> dict[str, Any]:
    """``Agent(**options)``'s options from a dict `agent_config` wrote (or Agno's
    ``to_dict``): see the module docstring. A key that is no option of `Agent` is an
    `InvalidInputError` naming it, as is a malformed model."""
    if not isinstance(data, Mapping):
        raise InvalidInputError("an agent's configuration is a dict", field="data")
    config = {k: v for k, v in data.items() if k not in ("team_id", "workflow_id")}
    unknown = sorted(set(config) - set(OPTION_GROUPS) - {"model", "tools"})
    if unknown:
        raise InvalidInputError(
            f"not an option of Agent: {', '.join(unknown)}", field=f"data.{unknown[0]}"
        )
    refs = _References(registry, strict, f"agent {data.get('id') or data.get('name')!r}")
    for name in ("model", *MODEL_OPTIONS):
        if config.get(name) is not None:
            config[name] = _model_of(config[name], registry, name)
    if "tools" in config:
        tools = []
        for entry in config["tools"] or []:
            tool_name = entry.get("name") if isinstance(entry, Mapping) else entry
            if not isinstance(tool_name, str):
                raise InvalidInputError("a tool is written with its name", field="tools")
            tool = refs.resolve("tools", tool_name, Registry.get_tool)
            if tool is not None:
                tools.append(tool)
        config["tools"] = tools
    lookups: dict[str, tuple[str, Callable[[Registry, str], Any]]] = {
        "db": ("id", Registry.get_db),
        "knowledge": ("name", Registry.get_knowledge),
    }
    for name, (key, find) in lookups.items():
        written = config.get(name)
        if isinstance(written, Mapping):
            found = refs.resolve(name, str(written.get(key)), find)
            config[name] = found
            if found is None:
                del config[name]
    for name in ("input_schema", "output_schema"):
        if isinstance(config.get(name), str):
            found = refs.resolve(name, config[name], Registry.get_schema)
            config[name] = found
            if found is None:
                del config[name]
    return config


A = TypeVar("A")


def agent_from_dict(
    cls: type[A], data: Mapping[str, Any], registry: Registry | None = None, strict: bool = False
) -> A:
    """An agent of class ``cls`` built from a dict its ``to_dict`` (or Agno's) wrote:
    models made again from ``"provider:model_id"`` (or found live in ``registry``), tools,
    db, knowledge and schemas found in ``registry`` (see the module docstring; with
    ``strict``, one it lacks is an `InvalidInputError` naming the field)."""
    return cls(**agent_options(data, registry, strict))
