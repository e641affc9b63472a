"""Which HTTP status each error kind is answered with, on every route of ``ferrule serve``:
one table, looked up by kind family.

A `FerruleError` is answered with the status of the first class in its MRO whose ``kind``
the table lists, so a subclass takes its family's status unless it has a row of its own:
every `InvalidInputError` (``dimension_mismatch`` of a vector store, ``host_policy``, a
plugin's own) is a 4xx, every `ModelError` of a provider whose cause is the request is
too, and a kind no row covers is a 500. Two dialects read it: ferrule's kernel protocol
(``/ferrule/v1``, where bad input is ``422``) and the OpenAI-shaped routes (``/v1``, where
OpenAI answers ``400`` and names an error ``type``; the Anthropic routes map the status to
Anthropic's type).
"""

from __future__ import annotations

import attrs
from ferrule_kernel import FerruleError

__all__ = ["STATUSES", "Status", "status_of"]


@attrs.frozen
class Status:
    #: The status on the kernel protocol's routes.
    ferrule: int
    #: The status on the OpenAI-shaped routes, and OpenAI's error ``type`` there.
    openai: int
    openai_type: str = "invalid_request_error"


_BAD_REQUEST = Status(422, 400)
_NOT_FOUND = Status(404, 404)

#: Error kind (and with it, every subclass of its class) -> its status.
STATUSES: dict[str, Status] = {
    # the request itself: every subclass of invalid input is the client's to fix
    "invalid_input": _BAD_REQUEST,
    "unsupported_content": Status(422, 422),
    "request_too_large": Status(413, 413),
    "unsupported_media_type": Status(415, 415),
    "request_timeout": Status(408, 408),
    "input_check": _BAD_REQUEST,  # a guardrail refused the input
    "unsupported_operation": _BAD_REQUEST,  # a method this store does not offer
    # who may ask
    "unauthorized": Status(401, 401),
    "cross_origin_refused": Status(403, 403),
    "misdirected_request": Status(421, 421),
    # what it names
    "unknown_operator": _NOT_FOUND,
    "unknown_component_type": _NOT_FOUND,
    "unknown_component": _NOT_FOUND,
    "unknown_method": _NOT_FOUND,
    "unknown_model": _NOT_FOUND,
    "unknown_run": _NOT_FOUND,
    "session_not_found": _NOT_FOUND,
    "duplicate_component": Status(409, 409),
    "storage_conflict": Status(409, 409),
    # a provider's answer, where the request is the cause
    "provider_bad_request": Status(400, 400),
    "model_not_found": _NOT_FOUND,
    "rate_limited": Status(429, 429, "rate_limit_error"),
    "quota_exceeded": Status(429, 429, "insufficient_quota"),
}

_SERVER_ERROR = Status(500, 500, "server_error")


def status_of(error: FerruleError | type[FerruleError]) -> Status:
    """The status of ``error`` (or of its class): its family's row, else a 500."""
    cls = error if isinstance(error, type) else type(error)
    for family in cls.__mro__:
        row = STATUSES.get(getattr(family, "kind", ""))
        if row is not None and issubclass(family, FerruleError):
            return row
    return _SERVER_ERROR
