"""Connecting this process to a Ray cluster."""

from __future__ import annotations

import os
import threading
from typing import Any

from .errors import PlacementError

#: The Ray address used when none is given to `connect`: ``ray://host:10001`` (Ray
#: Client), ``host:6379`` or ``auto`` (a cluster this machine belongs to). Unset, Ray's
#: own ``RAY_ADDRESS`` applies, and without it Ray starts a cluster of this machine alone.
ADDRESS_VARIABLE = "FERRULE_RAY_ADDRESS"

#: How many times a Ray Client connection is tried when Ray's per-client server dies as it
#: starts (ray-project/ray#63202: the proxier forks it while gRPC threads run, and the child
#: sometimes dies at once). Each try starts a new server; any other failure is not retried.
CLIENT_SERVER_START_TRIES = 3

_lock = threading.Lock()


def connect(address: str | None = None, **init_options: Any) -> None:
    """Connect this process to the Ray cluster at ``address`` (see `ADDRESS_VARIABLE`);
    a no-op when already connected. ``init_options`` go to ``ray.init`` (``namespace``,
    ``runtime_env``, ...). Ray's own logging setup is left off: the host configures
    logging."""
    import ray

    with _lock:
        if ray.is_initialized():
            return
        target = address or os.environ.get(ADDRESS_VARIABLE) or None
        init_options.setdefault("configure_logging", False)
        init_options.setdefault("log_to_driver", False)
        try:
            _init(ray, target, init_options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise PlacementError(
                f"could not connect to the Ray cluster at {target or 'RAY_ADDRESS'}: {exc}",
                address=target,
            ) from None


def _init(ray: Any, target: str | None, init_options: dict[str, Any]) -> None:
    for tries_left in reversed(range(CLIENT_SERVER_START_TRIES)):
        try:
            ray.init(address=target, **init_options)
            return
        except ConnectionAbortedError as exc:
            # Ray Client's "Initialization failure from server": a failed connect has
            # already disconnected, so the next try starts clean
            if not tries_left or "Initialization failure from server" not in str(exc):
                raise


def disconnect() -> None:
    """Disconnect this process from its Ray cluster (the cluster keeps running)."""
    import ray

    with _lock:
        if ray.is_initialized():
            ray.shutdown()
