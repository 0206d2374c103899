"""A final sync's read-only window for a tree job (`final_sync_window`: the one place that
decides whether one applies), timed on the history's runs; the source's readonly before its
first final sync, kept in the history (`remember_readonly`)."""

from __future__ import annotations

import time

from ..history import History, HistoryError, golive_log, recent_runs
from ..tree import TreeJob
from .readonly_window import Window, past_runs, predict


def final_sync_window(job: TreeJob) -> Window | None:
    """The read-only window a face shows before `job` runs: for a final sync (`--final`: the
    source is set read-only before its snapshot), how long it stays so, timed on the history;
    None for any other run. Prepares the job first if it was not (remote: off a GUI thread)."""
    if not job.request.final:
        return None
    if job.plan is None:
        job.prepare()
    return readonly_window_of(job)


def readonly_window_of(job: TreeJob) -> Window:
    """How long `job` (prepared: its plan read) would keep its source read-only, from the
    earlier runs of the same tree in the history (none readable: the window says so)."""
    records = recent_runs(job.request.destination)
    assert job.plan is not None and job.known is not None, "prepare() first"
    return predict(job.plan, job.known.src_sets, job.known.dst_sets,
                   past_runs(records, job.plan))


def remember_readonly(job: TreeJob) -> TreeJob:
    """`job`, keeping the source's readonly as it was before its FIRST final sync in the
    history: a retried final sync reads its predecessor's readonly=on, not the user's."""
    job.readonly_memory = _remember
    return job


def _remember(host: str, now: dict[str, str | None]) -> dict[str, str | None]:
    try:
        with History() as history:
            return golive_log.remember_readonly(history, host, now, time.time())
    except HistoryError:
        return now  # no history: this run's own reading, as before
