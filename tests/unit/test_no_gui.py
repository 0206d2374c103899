"""A CLI-only install (no `gui` extra: no PySide6, pyqtgraph) runs the command line and
says how to get the wizard, instead of a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# A Python where the GUI packages cannot be imported, as after `pip install zmigrate`.
HIDE_QT = (
    "import sys\n"
    "for name in ('PySide6', 'shiboken6', 'pyqtgraph'):\n"
    "    sys.modules[name] = None\n"
    "from zmigrate.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDE_QT, *args], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("args", [(), ("gui",), ("--self-test",)])
def test_the_wizard_without_qt_says_how_to_get_it(args: tuple[str, ...]) -> None:
    proc = _run(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert "PySide6, pyqtgraph missing" in proc.stderr
    assert "pipx install 'zmigrate[gui]'" in proc.stderr
    assert ".deb" in proc.stderr


def test_the_command_line_works_without_qt() -> None:
    for args in (("--version",), ("list", "--help"), ("send", "--help"), ("doctor", "--help"),
                 ("history", "--help")):
        proc = _run(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr


def test_history_runs_without_qt(tmp_path: Path) -> None:
    code = f"import os\nos.environ['XDG_DATA_HOME'] = {str(tmp_path)!r}\n" + HIDE_QT
    proc = subprocess.run([sys.executable, "-c", code, "history"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
