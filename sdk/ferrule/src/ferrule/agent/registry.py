"""Agno's component registry on `Agent`, declined: ``agent.save(db=...)`` (the agent's
configuration stored as a numbered version in the db's components tables),
``Agent.load(id, db=...)`` (an agent rebuilt from such a version) and
``agent.delete(db=..., hard_delete=...)`` (its versions removed). ferrule keeps no
components tables: an agent's configuration is `Agent.to_dict`'s data, kept wherever the
host keeps configuration and read back by `Agent.from_dict`. Each refusal says so
(docs/coming-from-agno.md lists it).

`LoadMethod` keeps the two meanings of ``load`` apart by how it is reached, never by its
arguments: ``agent.load()`` on an agent is Ailoy's (define the model now),
``Agent.load(...)`` on the class is Agno's registry load, refused."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NoReturn, overload

from ferrule_kernel import InvalidInputError

#: What a registry call is told to do instead.
FERRULE_WAY = (
    "ferrule has no component registry: keep `agent.to_dict()` wherever you keep"
    " configuration and rebuild the agent with `Agent.from_dict(data)`"
)


def refused(call: str, field: str) -> InvalidInputError:
    """The error a registry call gets: ``call`` is what was called, ``field`` the
    argument that asks for the registry."""
    return InvalidInputError(f"{call}: {FERRULE_WAY}", field=field)


def save(
    self: Any,
    *,
    db: Any = None,
    stage: str = "published",
    label: str | None = None,
    notes: str | None = None,
) -> NoReturn:
    """Agno's ``save`` (the agent's configuration as a new version in the db's component
    registry): refused; ferrule's way is `Agent.to_dict` (see `registry`)."""
    raise refused("Agent.save", "db")


def load_from_registry(
    id: str,
    *,
    db: Any,
    registry: Any = None,
    label: str | None = None,
    version: int | None = None,
    strict: bool = False,
) -> NoReturn:
    """Agno's ``Agent.load(id, db=...)`` (an agent rebuilt from a stored version): refused;
    ferrule's way is `Agent.from_dict` (see `registry`)."""
    raise refused("Agent.load", "id")


def refuse_registry_delete(db: Any, hard_delete: bool) -> None:
    """Refuse ``agent.delete(db=..., hard_delete=True)``: Agno's removal of the agent's
    stored versions (ferrule's `Agent.delete` frees what the agent holds)."""
    if db is not None or hard_delete:
        raise refused("Agent.delete", "db" if db is not None else "hard_delete")


class LoadMethod:
    """``load`` on an agent: ``agent.load()`` (its model defined now); on the class:
    Agno's registry load, refused (`load_from_registry`)."""

    def __init__(self, load: Callable[[Any], None]) -> None:
        self.load = load
        self.__doc__ = load.__doc__

    @overload
    def __get__(self, agent: None, owner: type[Any] | None = None) -> Callable[..., NoReturn]: ...
    @overload
    def __get__(self, agent: object, owner: type[Any] | None = None) -> Callable[[], None]: ...
    def __get__(
        self, agent: object | None, owner: type[Any] | None = None
    ) -> Callable[..., NoReturn] | Callable[[], None]:
        if agent is None:
            return load_from_registry
        return functools.partial(self.load, agent)
