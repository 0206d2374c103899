"""A job's `state.json`: who runs it, how far it is, how it ended; and whether its runner is
still there (a record saying "running" whose runner is gone is a runner that died)."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any, Final

# The write lock beside state.json.
LOCK: Final = ".state.lock"


class JobState(StrEnum):
    """Where a job is. The last four are final; RUNNER_DIED is never written by the runner:
    it is what a reader concludes from a live state whose runner is gone."""

    STARTING = "starting"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    STOPPED = "stopped"
    RUNNER_DIED = "runner-died"

    @property
    def final(self) -> bool:
        return self not in (JobState.STARTING, JobState.RUNNING)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the job ended: `ok` (verified), else the error's words and fix."""

    ok: bool
    message: str = ""
    fix: str = ""
    cancelled: bool = False
    bytes: int = 0
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Status:
    """The contents of state.json."""

    id: str
    what: str
    request: dict[str, Any]
    started: float
    state: JobState = JobState.STARTING
    pid: int | None = None
    launcher: str = ""
    unit: str = ""
    note: str = ""  # what the user must know about its runner (a logout that ends it)
    done: int = 0
    total: int | None = None
    rate: float = 0.0
    eta: float | None = None
    elapsed: float = 0.0
    last_event: float | None = None
    stop_requested: bool = False
    outcome: Outcome | None = None
    watched: bool = False  # a face showed its end (so it is no longer news)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def live_note(self) -> str:
        """Its note while it runs (a logout cannot stop a job that ended)."""
        return "" if self.state.final else self.note

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "state": self.state.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Status:
        outcome = data.get("outcome")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**{**known, "state": JobState(data["state"]),
                      "outcome": Outcome(**outcome) if isinstance(outcome, dict) else None})

    def seen_by(self, alive: bool) -> Status:
        """This status as a reader tells it: a live state whose runner is gone is
        RUNNER_DIED."""
        if not self.state.final and not alive:
            return replace(self, state=JobState.RUNNER_DIED)
        return self


def write(path: Path, status: Status) -> None:
    """state.json, replaced whole (a reader never sees half of it), under the record's lock."""
    with locked(path):
        _replace(path, status)


def update(path: Path, change: Callable[[Status], Status | None]) -> Status:
    """Read, change and write state.json as one step against every other writer (the runner,
    its launcher, a face marking it watched): `change` returns the new status, or None to
    leave it as it is. The status now."""
    with locked(path):
        current = read(path)
        new = change(current)
        if new is None:
            return current
        _replace(path, new)
        return new


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """The record's write lock (flock on `.state.lock` beside it; each call opens the file
    anew, so threads of one process exclude each other too)."""
    fd = os.open(path.with_name(LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (releases the lock)


def _replace(path: Path, status: Status) -> None:
    """A temporary file of this writer's own in the same directory, then os.replace: a
    reader sees the old file or the new one, and two writers never share a temporary."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(status.to_json(), sort_keys=True))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read(path: Path) -> Status:
    return Status.from_json(json.loads(path.read_text()))


def pid_alive(pid: int | None, job_id: str) -> bool:
    """Whether `pid` is this job's runner (the pid may have been reused by then)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True  # no /proc here: the signal said it is there
    if b"Z" in _proc_state(pid):
        return False  # a zombie waiting for its parent: the runner is gone
    return job_id.encode() in cmdline


def _proc_state(pid: int) -> bytes:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return b""
    return stat.rsplit(b")", 1)[-1].split()[0:1][0] if b")" in stat else b""
