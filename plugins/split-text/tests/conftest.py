"""Hypothesis profiles for this plugin's tests, chosen by HYPOTHESIS_PROFILE (nox sets "ci").

Registered under names of their own and applied per test (see `PROFILE` in the test
modules), so they never change the settings of other packages' tests in the same run.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "split-text-ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("split-text-dev", max_examples=60, deadline=None)
