"""Logging is quiet by default; one switch turns debug on."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import ferrule_kernel
from ferrule_kernel import configure_logging, get_logger
log = get_logger("test")
log.debug("hidden_by_default")
configure_logging(debug=True)
log.debug("shown_when_switched_on", detail=1)
try:
    raise ValueError("boom")
except ValueError:
    log.exception("with_traceback")
"""


def test_debug_switch_and_exception_logging():
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "hidden_by_default" not in done.stderr
    assert "shown_when_switched_on" in done.stderr and "detail=1" in done.stderr
    assert "with_traceback" in done.stderr and "ValueError: boom" in done.stderr
    assert done.stdout == ""


def test_environment_variable_switches_debug_on():
    code = "from ferrule_kernel import get_logger; get_logger('t').debug('from_env')"
    env = {"FERRULE_DEBUG": "1", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert "from_env" in done.stderr, done.stderr
