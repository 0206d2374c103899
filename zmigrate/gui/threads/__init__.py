"""What runs on which thread: short calls off the GUI thread (`tasks`: the answer, and every
reference the call held, come back to it), and Python's cycle collection on it (`collector`)."""

from __future__ import annotations

from .collector import collect_on_gui_thread, without_collection
from .tasks import LatestTask, run_task

__all__ = ["LatestTask", "collect_on_gui_thread", "run_task", "without_collection"]
