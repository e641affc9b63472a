"""Failure translation: what a plugin raised becomes the typed error that ends its request.

The kernel keeps serving whatever a plugin raises: `request_failure` decides, in the thread
where the plugin's code ran, whether the exception interrupts the request (a Ctrl-C of the
caller's own, a cancellation) or is the plugin's failure, and makes the latter one
`PluginError` whose text is scrubbed of anything that looks like a secret.
"""

from __future__ import annotations

from .errors import FerruleError, PluginError, interrupts_request
from .log import get_logger
from .scrubbing import scrub_secrets

log = get_logger("ferrule.kernel")


def plugin_error(label: str, provider: str, exc: BaseException) -> FerruleError:
    """The typed error a plugin's exception ends its request with; the exception becomes
    its cause. A `FerruleError` the plugin raised is passed on as it is. Any other
    exception's text goes to clients, so what looks like a secret in it is scrubbed."""
    if isinstance(exc, FerruleError):
        return exc
    try:
        text = str(exc)
    except Exception:  # an exception whose own __str__ fails must not escape this path
        text = "<unprintable>"
    what = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    error = PluginError(
        scrub_secrets(f"{label} failed in plugin {provider!r}: {what}"),
        plugin=provider,
        target=label,
        exception_type=type(exc).__name__,
    )
    error.__cause__ = exc
    return error


def request_failure(label: str, provider: str, exc: BaseException) -> BaseException:
    """What ends a request whose plugin code raised ``exc`` in this thread: ``exc`` itself
    when it interrupts the request (`interrupts_request`), else one typed error. Every
    other `BaseException` (`SystemExit`, `KeyboardInterrupt` in a worker thread, a stray
    `GeneratorExit` or `CancelledError`) is the plugin's failure: let through, it would
    stop the event loop or the thread that serves every other request."""
    if interrupts_request(exc):
        return exc
    log.debug("request_failed", target=label, plugin=provider, error=repr(exc))
    return plugin_error(label, provider, exc)


__all__ = ["plugin_error", "request_failure"]
