"""Who is asking: code in this process, or a client over the network.

The kernel serves both the same way, but they are not trusted alike. Code in this
process can import and open whatever it likes anyway, so a field that names code to
import or a file on this machine is fine from it; from a network client (`ferrule
serve`) the same field would let anyone who reaches the server run code or read files.

A request is *trusted* only when its caller says so (``trusted=True`` on the kernel's
requests, which the in-process `Runtime` passes); anything else, `ferrule serve`
included, is not. While the kernel validates a request's input or attributes,
`caller_is_trusted` tells attrs validators which it is, and `local_only` refuses a field
from an untrusted caller.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import attrs

from .errors import InvalidInputError

_TRUSTED: ContextVar[bool] = ContextVar("ferrule_trusted_caller", default=False)


def caller_is_trusted() -> bool:
    """True while the kernel validates a request from code in this process (the in-process
    `Runtime`); False for a network client, and outside validation."""
    return _TRUSTED.get()


@contextmanager
def validating(trusted: bool) -> Iterator[None]:
    """The kernel validates a request of a caller that is (or is not) trusted."""
    token = _TRUSTED.set(trusted)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


#: The ``refused`` key of an `InvalidInputError` entry that only trust refused: the input is
#: well formed, but an untrusted caller may not ask it (the server's own callers may).
REFUSED_UNTRUSTED = "untrusted"


def untrusted_refusal(message: str, field: str) -> InvalidInputError:
    """The error refusing ``field`` to an untrusted caller: its entry says ``refused``."""
    entry = {"path": field, "message": message, "refused": REFUSED_UNTRUSTED}
    return InvalidInputError(message, errors=[entry])


def refused_for_trust(error: InvalidInputError) -> bool:
    """Whether trust alone refused ``error``'s input (every entry is such a refusal)."""
    entries = error.errors
    return bool(entries) and all(e.get("refused") == REFUSED_UNTRUSTED for e in entries)


def refuse_untrusted(field: str, what: str) -> None:
    """Raise `InvalidInputError` at ``field`` unless the caller is trusted; ``what`` says
    what the field names (``"code to import"``, ``"a file on the server"``)."""
    if not _TRUSTED.get():
        raise untrusted_refusal(
            f"names {what}, which is accepted from code in the server's own process only, "
            "never over the network",
            field,
        )


def local_only(what: str) -> Any:
    """An attrs validator: a field (when not None) that names ``what`` (code to import, a
    server path, a URL the server fetches) is refused from an untrusted caller.

    ``function: str | None = attrs.field(default=None, validator=local_only("code to import"))``
    """

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is not None:
            refuse_untrusted(attribute.metadata.get("wire_key", attribute.name), what)

    return check
