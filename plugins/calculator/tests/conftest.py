"""Hypothesis profiles for this plugin's tests, chosen by HYPOTHESIS_PROFILE (nox sets "ci").

Registered under names of their own and applied per test (see `PROFILE` in the test
module), so they never change the settings of other packages' tests in the same run.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "calculator-ci",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("calculator-dev", max_examples=100, deadline=None)
