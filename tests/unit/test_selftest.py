"""`zmigrate --self-test` (from source; packaging/build.sh runs it on the frozen app)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)


def test_self_test_opens_a_window_and_draws_a_plot() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-m", "zmigrate", "--self-test"], env=env,
                          capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "self-test ok"
    assert "platform offscreen" in lines
    assert any(line.startswith("plot: ") and "curve drawn" in line for line in lines)
    assert "Traceback" not in proc.stderr


def test_version() -> None:
    from zmigrate import __version__

    proc = subprocess.run([sys.executable, "-m", "zmigrate", "--version"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"zmigrate {__version__}"
