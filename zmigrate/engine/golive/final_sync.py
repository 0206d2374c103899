"""A final sync's read-only window for a prepared tree job, timed on the history's runs."""

from __future__ import annotations

from ..history import recent_runs
from ..tree import TreeJob
from .readonly_window import Window, past_runs, predict


def readonly_window_of(job: TreeJob) -> Window:
    """How long `job` (prepared: its plan read) would keep its source read-only, from the
    earlier runs of the same tree in the history (none readable: the window says so)."""
    records = recent_runs(job.request.destination)
    assert job.plan is not None and job.known is not None, "prepare() first"
    return predict(job.plan, job.known.src_sets, job.known.dst_sets,
                   past_runs(records, job.plan))
