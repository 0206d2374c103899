"""Reading and steering jobs from any face: the list, one job's status as a reader sees it
(a runner that is gone without an end is RUNNER_DIED), stopping one."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from pathlib import Path

from ..events import Failed, Finished
from . import record, state
from .place import all_ids, job_dir
from .state import JobState, Status

# A starting job whose runner has not said its pid yet (a systemd unit) is given this long.
START_GRACE = 60.0


def alive(s: Status, now: float | None = None) -> bool:
    """Whether the job's runner is there."""
    if s.pid is None and s.state is JobState.STARTING:
        return (now or time.time()) - s.started < START_GRACE
    return state.pid_alive(s.pid, s.id)


def status(job_id: str) -> Status:
    """One job's status, as a reader sees it."""
    s = state.read(job_dir(job_id) / record.STATE)
    return s.seen_by(alive(s))


def jobs() -> list[Status]:
    """Every job with a record, newest first, as a reader sees them."""
    out = []
    for job_id in reversed(all_ids()):
        try:
            out.append(status(job_id))
        except (OSError, ValueError, KeyError):
            continue  # a record being written or damaged is left out of the list
    return out


def unwatched() -> list[Status]:
    """Jobs a face should show on its first page: running, or ended without being shown."""
    return [s for s in jobs() if not s.state.final or not s.watched]


ANNOUNCED = "announced"  # its presence: a face told the user this ended job's outcome


def unannounced() -> list[Status]:
    """Ended jobs nobody watched whose outcome no face has announced yet."""
    out = []
    for s in unwatched():
        if s.state.final and not (job_dir(s.id) / ANNOUNCED).exists():
            out.append(s)
    return out


def mark_announced(job_id: str) -> None:
    """A face announced this ended job's outcome (a file of its own: state.json is the
    runner's, and a dead runner's may still be read as it was left)."""
    (job_dir(job_id) / ANNOUNCED).touch()


def mark_watched(job_id: str) -> None:
    """A face showed this ended job's end: it is no longer news."""
    state.update(job_dir(job_id) / record.STATE,
                 lambda s: replace(s, watched=True) if s.state.final else None)


def stop(job_id: str, wait: float = 120.0) -> Status:
    """Ask the runner to stop the job (SIGTERM: it cancels the job, both ends stopped, the
    resume token kept) and wait until it says it ended or is gone."""
    s = status(job_id)
    if s.state.final or s.pid is None:
        return s
    os.kill(s.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        s = status(job_id)
        if s.state.final:
            return s
        time.sleep(0.2)
    return s


def final_sync_after(job_id: str, asked_before: bool) -> int:
    """The sequence number after which a kept-in-sync job's record holds its final sync:
    the newest now (asked now), or the first copy's end (`asked_before`: it runs already,
    recorded whole after the first copy's end; the catch-ups between are `Synced` lines)."""
    records = record.read_events(job_dir(job_id))
    if asked_before:
        return next((r.seq for r in records if isinstance(r.event, Finished | Failed)), 0)
    return max((r.seq for r in records), default=0)


def directory(job_id: str) -> Path:
    return job_dir(job_id)
