"""The user's settings for the ``ferrule`` command: the default model and model aliases.

``$FERRULE_CONFIG``, else ``$XDG_CONFIG_HOME/ferrule/config.toml`` (default
``~/.config/ferrule/config.toml``)::

    default_model = "openai:gpt-4o-mini"   # ferrule chat's model when -m is not given

    [aliases]                              # names for -m
    fast = "openai:gpt-4o-mini"
    qwen = "unsloth/Qwen3-4B-GGUF:Q4_K_M"

The CLI reads it; the library does not (a host application's models are its own choice).
API keys are not kept here but in ``keys.json`` beside it (`ferrule_kit.network.keys`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import FerruleError
from ferrule_kit.network.keys import config_dir

#: The variable naming another config file.
CONFIG_VARIABLE = "FERRULE_CONFIG"


def config_path() -> Path:
    configured = os.environ.get(CONFIG_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    return config_dir() / "config.toml"


@attrs.frozen
class Config:
    #: The model when none is named; None: the offline default.
    default_model: str | None = None
    #: Names for model ids.
    aliases: dict[str, str] = attrs.field(factory=dict)

    def model(self, name: str | None) -> str | None:
        """The model id ``name`` stands for (an alias's id, or itself); with no name, the
        default model (None when the file names none)."""
        if name is None:
            name = self.default_model
            if name is None:
                return None
        return self.aliases.get(name, name)


def _toml(text: str) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    return tomllib.loads(text)


def load_config() -> Config:
    """The config file's settings; defaults when there is no file. A file that cannot be
    read, or holds anything else, raises `FerruleError` naming the file and the fault."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if os.environ.get(CONFIG_VARIABLE):
            raise FerruleError(f"config file {path} ({CONFIG_VARIABLE}) does not exist") from None
        return Config()
    except OSError as exc:
        raise FerruleError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        data = _toml(text)
    except ValueError as exc:  # tomllib.TOMLDecodeError
        raise FerruleError(f"config file {path} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"default_model", "aliases"})
    if unknown:
        raise FerruleError(
            f"config file {path}: unknown setting {unknown[0]!r} (known: default_model, aliases)"
        )
    default = data.get("default_model")
    if default is not None and not isinstance(default, str):
        raise FerruleError(f"config file {path}: default_model must be a string")
    aliases = data.get("aliases", {})
    if not isinstance(aliases, dict) or not all(isinstance(v, str) for v in aliases.values()):
        raise FerruleError(f"config file {path}: [aliases] must map names to model id strings")
    return Config(default, aliases)
