"""Typed errors of the terminal operator (registered so they cross the wire as themselves)."""

from __future__ import annotations

from ferrule_kernel import FerruleError, register_error_kind


@register_error_kind
class TerminalError(FerruleError):
    """The command could not be started (no such program or working directory), or the
    host's settings refuse it (``details["reason"]``: ``start``, ``not_allowed``,
    ``disabled``, ``configuration``)."""

    kind = "terminal_error"
