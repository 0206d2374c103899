"""The engine imports no Qt: every module outside zmigrate/gui runs headless."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import zmigrate

PACKAGE = Path(zmigrate.__file__).parent
# selftest is the packagers' smoke test of the GUI: it is the one non-gui module that loads Qt.
FACES_WITH_QT = {"selftest"}


def engine_modules() -> list[str]:
    return sorted(f"zmigrate.{p.stem}" for p in PACKAGE.glob("*.py")
                  if p.stem not in FACES_WITH_QT | {"__main__"})


def test_every_engine_module_imports_without_qt() -> None:
    modules = engine_modules()
    assert {"zmigrate.job", "zmigrate.pipeline", "zmigrate.cli", "zmigrate.doctor",
            "zmigrate.history", "zmigrate.samples", "zmigrate.diagnosis"} <= set(modules)
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', "
        "'shiboken6', 'superqt') or m.startswith('zmigrate.gui'))\n"
        "assert not qt, qt\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


def test_no_shell_true_outside_tests_and_bench() -> None:
    """Commands are argv lists or lines built by shell.join; never a shell=True of our own."""
    offenders = [str(p) for p in PACKAGE.rglob("*.py")
                 if "generated" not in p.parts and "shell=True" in p.read_text()]
    assert offenders == []
