"""Python's cycle collector, run on the GUI thread only, and paused while big data is built.

Left to itself, the collector runs on whichever thread allocates when a threshold trips: a
worker thread then deletes Python-owned widgets (a page or a dialog caught in a reference
cycle) off the GUI thread, and Qt's queued clean-up for them later reaches freed memory. So
automatic collection is off, and pyqtgraph's collector collects on a GUI-thread timer.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from typing import TypeVar

from pyqtgraph.util.garbage_collector import GarbageCollector

T = TypeVar("T")
_lock = threading.Lock()
_pauses = 0
_installed: list[GarbageCollector] = []


class _GuiThreadCollector(GarbageCollector):  # type: ignore[misc]
    def check(self) -> None:
        if not _pauses:
            super().check()


def collect_on_gui_thread() -> None:
    """Install the GUI-thread collector once per process (a QApplication must exist)."""
    with _lock:
        if not _installed:
            _installed.append(_GuiThreadCollector(interval=1.0))


def without_collection(work: Callable[[], T]) -> T:
    """`work()` with no cycle collection meanwhile, on any thread: building a big pool's
    inventory (hundreds of thousands of objects) otherwise sets off full passes that hold the
    GIL, and so the window, for ~100 ms each."""
    global _pauses
    with _lock:
        _pauses += 1
        gc.disable()
    try:
        return work()
    finally:
        with _lock:
            _pauses -= 1
            if not _pauses and not _installed:
                gc.enable()
