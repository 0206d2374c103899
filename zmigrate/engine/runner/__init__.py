"""Jobs that outlive their face: a runner process owns the transfer and keeps a record of it
(its request, its events, its state) that any face follows, now or after a restart.

- `launch.start(what, request)`: the record and its detached runner (systemd-run --user, or
  setsid);
- `record.Writer`: the runner's observer, writing the record;
- `control`: the list of jobs, one job's status, stopping one;
- `record.follow` / `record.Follower`: a job's events from the first, as they come.
"""

from __future__ import annotations

from .control import (
    alive,
    jobs,
    mark_announced,
    mark_watched,
    status,
    stop,
    unannounced,
    unwatched,
)
from .launch import RunnerStartError, start
from .place import JOBS_DIR_ENV, JobNotFoundError, job_dir, jobs_root, known
from .record import Follower, Recorded, Writer, follow, read_events
from .state import JobState, Outcome, Status

__all__ = [
    "JOBS_DIR_ENV", "Follower", "JobNotFoundError", "JobState", "Outcome", "Recorded",
    "RunnerStartError", "Status", "Writer", "alive", "follow", "job_dir", "jobs", "jobs_root",
    "known", "mark_announced", "mark_watched", "read_events", "start", "status", "stop",
    "unannounced", "unwatched",
]
