"""Repository-wide test settings: hypothesis profiles (HYPOTHESIS_PROFILE=ci under nox),
and a settings folder of the tests' own, so that the user's ferrule settings (stored API
keys, config.toml, chat history) never reach a test.

Each package's tests also run with only that package's own test extra installed
(tests/test_plugin_shape.py), and most plugins' extras leave hypothesis out: the
profiles are set wherever it is installed.

The fixture `ctrl_c_raises` gives a test Python's own SIGINT handler, whatever the suite
inherited (see its docstring).
"""

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator

import pytest

try:
    from hypothesis import HealthCheck, settings
except ImportError:
    pass
else:
    settings.register_profile(
        "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.register_profile("dev", max_examples=50, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

_settings_home = tempfile.mkdtemp(prefix="ferrule-tests-")


def pytest_configure(config: object) -> None:
    # Set in the environment, so subprocesses (CLI tests) inherit them too.
    os.environ["XDG_CONFIG_HOME"] = os.path.join(_settings_home, "config")
    os.environ["XDG_STATE_HOME"] = os.path.join(_settings_home, "state")
    os.environ.pop("FERRULE_CONFIG", None)


def pytest_unconfigure(config: object) -> None:
    shutil.rmtree(_settings_home, ignore_errors=True)


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """Python's default SIGINT handler for the test (a Ctrl-C raises KeyboardInterrupt in
    the main thread), as in a terminal. A suite started by ``nohup`` or as a script's
    background job inherits SIGINT ignored, and Python then installs no handler: the
    tests of what a Ctrl-C does would test nothing there. Only the main thread may set a
    handler, which is where pytest runs tests."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
