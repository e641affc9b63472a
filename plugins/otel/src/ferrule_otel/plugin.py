"""The entry point: answers the kit's ``ferrule_instrumentation`` hook. Discovery imports
this module only; opentelemetry is imported when an agent or ``ferrule serve`` first asks."""

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
    from .spans import GenAIInstrumentation

    return GenAIInstrumentation()
