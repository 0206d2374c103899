"""Python's cycle collector, run on the GUI thread only.

Left to itself, the collector runs on whichever thread allocates when a threshold trips: a
worker thread then deletes Python-owned widgets (a page or a dialog caught in a reference
cycle) off the GUI thread. Qt's queued clean-up for those widgets later reaches freed memory;
seen as a segfault in the Fusion style's progress-bar animation (Qt 6.11). pyqtgraph's
collector turns automatic collection off and collects on a GUI-thread timer instead.
"""

from __future__ import annotations

from pyqtgraph.util.garbage_collector import GarbageCollector

_installed: list[GarbageCollector] = []


def collect_on_gui_thread() -> None:
    """Install the GUI-thread collector once per process (a QApplication must exist)."""
    if not _installed:
        _installed.append(GarbageCollector(interval=1.0))
