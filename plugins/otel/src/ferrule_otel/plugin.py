"""The entry point: answers the kit's ``ferrule_instrumentation`` hook. Discovery imports
this module only; OpenTelemetry is imported once the process uses it (`ondemand`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ferrule_kernel import hookimpl

if TYPE_CHECKING:
    from ferrule_kit.instrumentation import Instrumentation


@hookimpl
def ferrule_instrumentation() -> Instrumentation | None:
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    from .ondemand import OnDemandInstrumentation

    return OnDemandInstrumentation()
