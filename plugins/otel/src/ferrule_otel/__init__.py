"""ferrule-otel: OpenTelemetry spans for ferrule's agent runs, model calls and tool calls,
after the GenAI semantic conventions (`ferrule_otel.spans`).

Installed, it instruments every agent and ``ferrule serve`` in the process through the
kit's ``ferrule_instrumentation`` hook (`ferrule_otel.plugin`); the spans go to whatever
tracer provider the host configured with the OpenTelemetry SDK, and cost next to nothing
when there is none. Message content is recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true`` (or ``SPAN_ONLY`` /
``SPAN_AND_EVENT``); ``OTEL_SDK_DISABLED=true`` switches the plugin off.
"""
