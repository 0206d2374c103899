"""The Qt face of zmigrate: the migration wizard. Everything that imports Qt lives here."""

from __future__ import annotations

import ctypes
import os
import sys

# pyqtgraph binds to whichever Qt is imported first and would otherwise try PyQt6 first.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import PySide6  # noqa: E402
import PySide6.QtCore  # noqa: E402,F401  (import order matters: PySide6 before pyqtgraph)


def _pin_singletons() -> None:
    """Keep True, False and None alive whatever PySide6 does to their reference counts.

    PySide6 6.12.0's `SignalInstance.emit()` returns True without taking a reference, so every
    emit (ours, pyqtgraph's) drops one reference to True. Before Python 3.12 made these objects
    immortal, a few thousand emits free True and the interpreter aborts ("bool_dealloc"); a
    transfer emits that many within minutes. Adding a huge count does what 3.12 does.
    """
    # pyproject excludes 6.12.0; this guards a distribution's or user's own install of it.
    if sys.version_info >= (3, 12) or PySide6.__version__ != "6.12.0":
        return
    for obj in (True, False, None):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 40


_pin_singletons()
__all__ = ["PySide6"]
