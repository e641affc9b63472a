"""`Delegated`: a method of `Agent` that is one of its collaborators' (``agent.get_session``
is ``agent``'s `sessions.AgentSessions`'s ``get_session``), so that its signature and
docstring are written once, where the work is, and type checkers see them exactly."""

from __future__ import annotations

from collections.abc import Callable
from types import MethodType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, overload

P = ParamSpec("P")
R = TypeVar("R")


class Delegated(Generic[P, R]):
    """``Delegated(sessions_of, AgentSessions.get_session)`` in a class body: on an
    instance, the bound ``get_session`` of ``sessions_of(instance)``; on the class, the
    collaborator's function (for `help` and `inspect.signature`)."""

    def __init__(
        self, collaborator: Callable[[Any], object], method: Callable[Concatenate[Any, P], R]
    ) -> None:
        self.collaborator = collaborator
        self.method = method
        self.__doc__ = method.__doc__

    @overload
    def __get__(self, owner: None, kind: type) -> Callable[Concatenate[Any, P], R]: ...
    @overload
    def __get__(self, owner: object, kind: type) -> Callable[P, R]: ...
    def __get__(self, owner: object, kind: type) -> Any:
        if owner is None:
            return self.method
        return MethodType(self.method, self.collaborator(owner))
