"""A model's response cache on disk (Agno's ``cache_response``, ``cache_ttl``,
``cache_dir``): each model request a run makes is answered from a file when the same
request was answered before, within the time to live, so that a program run again
during development makes no call to the provider.

A request is keyed by what decides the reply: the component type and model id, and the
whole request (the messages as sent, the tools, the output schema, the sampling
settings), as canonical JSON hashed with SHA-256; never the key or the endpoint. The
reply is kept as the items its stream gave (text, reasoning, tool calls, finish), one
JSON file per key under ``cache_dir`` (default ``$XDG_CACHE_HOME/ferrule/model_responses``,
i.e. ``~/.cache/ferrule/model_responses``), and replayed item by item, so a cached reply
streams as a live one does; its usage is left out (no tokens were spent). Only a reply
that streamed to its end and reads as a message (its tool calls' arguments JSON) is
kept. A file that cannot be read, or is older than ``cache_ttl`` seconds, is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import AsyncGenerator, Mapping
from pathlib import Path
from typing import Any

import attrs
from ferrule_kernel import get_logger

__all__ = ["ResponseCache", "default_cache_dir"]

log = get_logger("ferrule.agent")

_FORMAT = 1


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ferrule/model_responses`` (``~/.cache/ferrule/model_responses``)."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ferrule" / "model_responses"


@attrs.frozen
class ResponseCache:
    """Where a model's replies are kept (``folder``) and for how long (``ttl`` seconds;
    None: for good)."""

    folder: Path
    ttl: float | None = None

    @classmethod
    def of(cls, settings: Mapping[str, Any]) -> ResponseCache | None:
        """The cache an Agno model's settings ask for (None without ``cache_response``)."""
        if not settings.get("cache_response"):
            return None
        folder = settings.get("cache_dir")
        path = Path(folder).expanduser() if folder else default_cache_dir()
        return cls(path, settings.get("cache_ttl"))

    def key(self, model: Mapping[str, Any], request: Mapping[str, Any]) -> str:
        """The key of ``request`` to the model ``model`` names (its component type and
        id)."""
        text = json.dumps(
            {"format": _FORMAT, "model": model, "request": request},
            sort_keys=True,
            ensure_ascii=False,
            default=str,
        )
        return hashlib.sha256(text.encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> list[dict[str, Any]] | None:
        """The stream items kept under ``key``; None when none are, or they expired."""
        try:
            with self.path(key).open(encoding="utf-8") as file:
                kept = json.load(file)
            created, items = float(kept["created"]), kept["items"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if self.ttl is not None and time.time() - created > self.ttl:
            return None
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            return None
        return items

    def put(self, key: str, items: list[dict[str, Any]]) -> None:
        """Keep ``items`` under ``key`` (written whole, then moved into place, so that a
        reader never sees half a file). A cache that cannot be written is logged and
        skipped: the run has its reply either way."""
        kept = [{k: v for k, v in item.items() if k != "usage"} for item in items]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump({"created": time.time(), "items": kept}, file, ensure_ascii=False)
            os.replace(temporary, self.path(key))
        except (OSError, TypeError, ValueError) as exc:
            log.warning("response_cache_not_written", folder=str(self.folder), error=str(exc))

    async def replay(self, items: list[dict[str, Any]]) -> AsyncGenerator[dict[str, Any], None]:
        """The kept items as a stream."""
        for item in items:
            yield item

    async def record(
        self, key: str, stream: AsyncGenerator[dict[str, Any], None]
    ) -> AsyncGenerator[dict[str, Any], None]:
        """``stream`` passed through (and closed with this one), kept under ``key`` once
        it ended and its items read as a message."""
        from ferrule_kit.models.lm import MessageAccumulator

        items: list[dict[str, Any]] = []
        try:
            async for item in stream:
                items.append(item)
                yield item
        finally:
            await stream.aclose()
        folded = MessageAccumulator()
        for item in items:
            folded.add(item)
        try:
            folded.message()
        except Exception:  # a malformed reply is not kept: asking again may mend it
            return
        self.put(key, items)
