"""API keys kept for the user in a file, read by providers after their environment variable.

``ferrule keys set openai`` writes ``$XDG_CONFIG_HOME/ferrule/keys.json`` (default
``~/.config/ferrule/keys.json``): one JSON object, provider name -> key, readable by its
owner only (mode 0600, in a folder of mode 0700). `ferrule_kit.network.http.resolve_api_key` looks
here when no key was given and none of the provider's variables is set. Keys never leave
this module in a message: errors name the file, not its contents.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: The file's name in the configuration folder.
KEYS_FILE = "keys.json"


def config_dir() -> Path:
    """ferrule's folder for the user's settings: ``$XDG_CONFIG_HOME/ferrule``, else
    ``~/.config/ferrule``."""
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "ferrule"


def keys_path() -> Path:
    return config_dir() / KEYS_FILE


def stored_keys() -> dict[str, str]:
    """Every stored key by provider; empty when there is no file.

    Raises `ValueError` (naming the file, never its contents) when it cannot be read as a
    JSON object of strings.
    """
    path = keys_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError(f"{path} is not valid JSON") from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ValueError(f"{path} must hold one JSON object of provider names to keys")
    return data


def stored_key(provider: str) -> str | None:
    """The key stored for ``provider``; None when there is none, or no readable file (a
    provider then reports the key missing, naming where it may come from)."""
    try:
        return stored_keys().get(provider.lower()) or None
    except ValueError:
        return None


def store_key(provider: str, key: str) -> Path:
    """Store (or replace) ``provider``'s key; the file is written whole, then renamed into
    place, never readable by others. Returns its path."""
    keys = stored_keys()
    keys[provider.lower()] = key
    path = keys_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(f".{KEYS_FILE}.{os.getpid()}")
    temporary.unlink(missing_ok=True)  # a leftover would keep its own mode
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(keys, file, indent=2, sort_keys=True)
            file.write("\n")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return path
