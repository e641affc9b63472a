"""Agno's ``agno.run.cancellation_management``: `BaseRunCancellationManager` (what a
cancellation manager does; subclass it and install yours with
``ferrule.run.cancel.set_cancellation_manager``) and `InMemoryRunCancellationManager`
(ferrule's default). Agno's ``RedisRunCancellationManager`` needs a Redis service, which
ferrule does not ship: it is refused, naming the way to keep cancellations elsewhere."""

from __future__ import annotations

from typing import Any, NoReturn

from ferrule_kernel import InvalidInputError

from .base import BaseRunCancellationManager
from .in_memory_cancellation_manager import InMemoryRunCancellationManager

__all__ = [
    "BaseRunCancellationManager",
    "InMemoryRunCancellationManager",
    "RedisRunCancellationManager",
]


class RedisRunCancellationManager:
    """Refused: Agno's manager over a Redis service."""

    def __new__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        raise InvalidInputError(
            "ferrule ships no Redis cancellation manager: to share cancellations between "
            "processes, subclass BaseRunCancellationManager over your own store (a file, "
            "a database, your Redis client) and install it with set_cancellation_manager",
            field="RedisRunCancellationManager",
        )
