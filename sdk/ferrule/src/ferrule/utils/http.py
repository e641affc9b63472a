"""Agno's ``agno.utils.http``: `set_default_sync_client`, refused: Agno's model SDKs share an
``httpx`` client a program may replace; ferrule's providers speak HTTP through their own
client, one per model component (`ferrule_kit.network.http`: its timeouts, retries and headers set
on the model: ``timeout``, ``max_retries``, ``default_headers``...)."""

from __future__ import annotations

from typing import Any

from ferrule_kernel import InvalidInputError

__all__ = ["NO_SHARED_CLIENT", "set_default_sync_client"]

NO_SHARED_CLIENT = (
    "set_default_sync_client: ferrule's providers use their own HTTP client per model "
    "component; set timeout, max_retries or default_headers on the model instead"
)


def set_default_sync_client(client: Any) -> None:
    """Refused (see the module docstring)."""
    raise InvalidInputError(NO_SHARED_CLIENT, field="client")
