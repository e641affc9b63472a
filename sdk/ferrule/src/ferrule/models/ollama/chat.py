"""Ollama under Agno's name (``from ferrule.models.ollama.chat import Ollama``).

`Ollama` is an `OpenAILike` model on Ollama's OpenAI-compatible endpoint, ``{host}/v1``:
``host`` when given, else ``$OLLAMA_HOST`` (Ollama's own variable; ``0.0.0.0:11434`` and
other forms without a scheme are read as ``http://``), else ``http://localhost:11434``.
Only ``api_key`` (else ``$OLLAMA_API_KEY``: an Ollama Cloud key) is sent.

Agno's Ollama keywords: ``options`` (Ollama's model options: ``temperature``, ``top_p``,
``top_k``, ``seed``, ``stop``, ``num_predict``, ``presence_penalty``,
``frequency_penalty``; others are refused, naming them) and ``format`` (``"json"``, or a JSON
schema every reply follows). `OpenAIChat`'s keywords work too.
"""

from __future__ import annotations

import os
from typing import Any

import attrs
from ferrule_kernel import InvalidInputError
from typing_extensions import Unpack

from ..openai.chat import ChatParams, chat_params
from ..openai.like import OpenAILike
from ..params import AgnoParam, agno_signature, declined

__all__ = ["Ollama", "ollama_base_url"]

DEFAULT_HOST = "http://localhost:11434"
#: Ollama's option names -> the request field each is (OpenAI's name).
OPTIONS = {
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "seed": "seed",
    "stop": "stop",
    "num_predict": "max_tokens",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
}


def ollama_base_url(host: str | None) -> str:
    host = (host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")
    if "://" not in host:
        host = "http://" + host
    return host if host.endswith("/v1") else host + "/v1"


class OllamaParams(ChatParams, total=False):
    format: Any
    keep_alive: float | str | None
    host: str | None


OLLAMA_PARAMS: tuple[AgnoParam, ...] = (
    *chat_params("Ollama", "Ollama", supports_native_structured_outputs=True),
    AgnoParam("format"),
    declined(
        "keep_alive",
        "Ollama's OpenAI-compatible API keeps the model as the server is set to (OLLAMA_KEEP_ALIVE)",
    ),
    AgnoParam("host"),
)


def _from_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InvalidInputError(
            f"Ollama's OpenAI-compatible API takes no option {unknown[0]!r}; it takes "
            f"{', '.join(OPTIONS)} (set the others in the model's Modelfile)",
            field=f"options.{unknown[0]}",
        )
    return {OPTIONS[k]: v for k, v in options.items()}


@attrs.frozen(init=False)
class Ollama(OpenAILike):
    """``Ollama(id="qwen3:0.6b", options={"temperature": 0.2})``."""

    AGNO_PARAMS = OLLAMA_PARAMS

    def __init__(self, id: str = "llama3.1", **params: Unpack[OllamaParams]) -> None:
        given: dict[str, Any] = dict(params)
        given["base_url"] = ollama_base_url(given.get("host"))
        if given.get("api_key") is None and os.environ.get("OLLAMA_API_KEY"):
            given["api_key"] = os.environ["OLLAMA_API_KEY"]
        options = given.pop("options", None) or {}
        mapped = _from_options(dict(options))
        extra = dict(given.get("extra_body") or {})
        for key in ("top_k",):
            if key in mapped:
                extra[key] = mapped.pop(key)
        fmt = given.get("format")
        if fmt == "json":
            extra["response_format"] = {"type": "json_object"}
        elif isinstance(fmt, dict):
            schema = {"name": "output", "schema": fmt}
            extra["response_format"] = {"type": "json_schema", "json_schema": schema}
        elif fmt is not None:
            raise InvalidInputError("format is 'json' or a JSON schema", field="format")
        if extra:
            given["extra_body"] = extra
        for key, value in mapped.items():
            given.setdefault(key, value)
        self._init_chat(id, given)
        object.__setattr__(self, "agno_settings", {**self.agno_settings, "options": options})

    def get_request_params(self, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # type: ignore[override]
        """The fields every request carries besides the messages (with ``tools``)."""
        return super().get_request_params(tools=tools)


Ollama.__init__.__signature__ = agno_signature(OLLAMA_PARAMS, "llama3.1")  # type: ignore[attr-defined]
