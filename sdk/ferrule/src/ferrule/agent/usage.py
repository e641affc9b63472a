"""`UsageLimits`: bounds on what one run may spend on its model, pydantic-ai's way.

A run given limits (``Agent(..., usage_limits=...)``, or per call: ``agent.run(...,
usage_limits=...)``) checks them before each model request and after each response; the
first one crossed stops the run with `UsageLimitExceeded`. A reply is checked once it has
arrived whole: its text has been streamed already when its output tokens cross a limit.
Requests count the model calls that answered (a `FallbackModel`'s failed attempts are not
requests); tokens are the models' own counts (`RunMetrics`), over the whole run, across
a pause and its continuation.
"""

from __future__ import annotations

import attrs
from ferrule_kernel import in_range

from ..metrics import RunMetrics
from .run_errors import UsageLimitExceeded


@attrs.frozen
class UsageLimits:
    """Limits on one run: model requests (50 by default, as pydantic-ai), and input,
    output and total tokens (None: no limit)."""

    request_limit: int | None = attrs.field(default=50, validator=in_range(0))
    input_tokens_limit: int | None = attrs.field(default=None, validator=in_range(0))
    output_tokens_limit: int | None = attrs.field(default=None, validator=in_range(0))
    total_tokens_limit: int | None = attrs.field(default=None, validator=in_range(0))

    def check_before_request(self, metrics: RunMetrics) -> None:
        """Raise `UsageLimitExceeded` when the run may not make one more request."""
        requests = len(metrics.model_calls)
        if self.request_limit is not None and requests >= self.request_limit:
            raise UsageLimitExceeded(
                f"the next model request would exceed the request_limit of {self.request_limit}",
                limit="request_limit",
                maximum=self.request_limit,
                value=requests + 1,
            )
        self.check_tokens(metrics)

    def check_tokens(self, metrics: RunMetrics) -> None:
        """Raise `UsageLimitExceeded` when the run's tokens so far cross a limit."""
        input_tokens, output_tokens = metrics.input_tokens, metrics.output_tokens
        for name, maximum, value in (
            ("input_tokens", self.input_tokens_limit, input_tokens),
            ("output_tokens", self.output_tokens_limit, output_tokens),
            ("total_tokens", self.total_tokens_limit, input_tokens + output_tokens),
        ):
            if maximum is not None and value > maximum:
                raise UsageLimitExceeded(
                    f"the run exceeded its {name}_limit of {maximum} ({name}={value})",
                    limit=f"{name}_limit",
                    maximum=maximum,
                    value=value,
                )
