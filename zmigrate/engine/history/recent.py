"""The runs of one copy the history remembers: what a final sync's window and going live are
timed and checked against."""

from __future__ import annotations

import os

from .records import JobRecord
from .store import History, HistoryError

RECENT_RUNS = 200  # enough for a tree's datasets over several syncs


def recent_runs(about: str, *, path: str | os.PathLike[str] | None = None) -> list[JobRecord]:
    """The newest RECENT_RUNS jobs whose hosts, snapshot or destination mention `about` (a
    destination root), newest first; [] when the history cannot be read (it only informs)."""
    try:
        with History(path) as history:
            return history.jobs(limit=RECENT_RUNS, filter=about)
    except HistoryError:
        return []
