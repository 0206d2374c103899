"""The Qt face of zmigrate: the migration wizard. Everything that imports Qt lives here."""

from __future__ import annotations

import os

# pyqtgraph binds to whichever Qt is imported first and would otherwise try PyQt6 first.
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

import PySide6.QtCore  # noqa: E402,F401  (import order matters: PySide6 before pyqtgraph)
