"""Many signal emits must not exhaust True's reference count (PySide6 6.12.0 on Python 3.11)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.gui

CODE = """
import zmigrate.gui
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication([])
class A(QObject):
    changed = Signal(object)
a = A()
a.changed.connect(lambda x: None)
for i in range(200_000):
    a.changed.emit(i)
print("ok")
"""


def test_a_long_transfer_worth_of_emits_does_not_abort_python() -> None:
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                          timeout=120, check=False,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"
