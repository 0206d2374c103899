"""A face's calls for jobs whose runner is another machine (remote.py holds the SSH session):
check a runner host before anything moves, start the job there, follow its record from the
first event, stop it, and read the state of every remote job this side has a pointer for.
Each call logs in to the runner host and blocks: a window calls them off its own thread."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ZmigrateError
from ..hosts.remembered import SessionLogins
from . import record
from .keep import Keep, again_argv
from .place import valid_id
from .record import Recorded
from .remote import Pointer, Reach, RemoteRunner, RemoteRunnerError, pointers, save_pointer
from .state import Status


def refusal(runner: str, r: Reach) -> RemoteRunnerError:
    """Why `runner` cannot run the job: it cannot log in to `r.host`, and how to fix it."""
    return RemoteRunnerError(
        f"{runner} cannot log in to {r.host}: {r.message}",
        fix=(f"{r.fix}; " if r.fix else "") + f"the runner logs in with {runner}'s own ssh "
        f"config ({r.ssh_config}) and keys: make `ssh {r.host}` work on {runner}, or name "
        f"the host as {runner} knows it")


@dataclass(frozen=True, slots=True)
class RunnerCheck:
    """What a runner host has: its zmigrate, and how it logs in to each of the job's hosts."""

    runner: str
    zmigrate: str
    reach: tuple[Reach, ...]

    @property
    def problem(self) -> RemoteRunnerError | None:
        """The first login the runner host cannot make, as a refusal with its fix."""
        return next((refusal(self.runner, r) for r in self.reach if not r.ok), None)


def _open(runner: str, logins: SessionLogins | None, zmigrate: str = "") -> RemoteRunner:
    """Log in to `runner` as `logins` asks and remembers (None: asking nothing)."""
    how = logins or SessionLogins()
    return RemoteRunner.open(runner, how.prompts, zmigrate, how.memory)


def check(runner: str, hosts: Sequence[tuple[str, bool]],
          logins: SessionLogins | None = None) -> RunnerCheck:
    """Log in to `runner`, find zmigrate there and let it log in to each of `hosts` ((host
    text, sudo)) as the job will (RemoteRunnerError: no login, no zmigrate, too old)."""
    unique = list(dict.fromkeys(hosts))
    rr = _open(runner, logins)
    try:
        return RunnerCheck(runner, rr.zmigrate, tuple(rr.reach(unique)))
    finally:
        rr.close()


def start(runner: str, zmigrate: str, argv: Sequence[str],
          logins: SessionLogins | None = None) -> Pointer:
    """`send ARGV --detach` on `runner` (its zmigrate at `zmigrate`, as `check` found it);
    the job's pointer, kept here."""
    rr = _open(runner, logins, zmigrate)
    try:
        return _started(rr, rr.start(argv))
    finally:
        rr.close()


def _started(rr: RemoteRunner, job: dict[str, Any]) -> Pointer:
    """The pointer of the job `rr` just started (its first status `job`), kept here."""
    p = Pointer(valid_id(str(job["id"])), rr.name, rr.zmigrate, str(job.get("what", "")),
                float(job.get("started") or time.time()))
    save_pointer(p)
    return p


def ask_final(rr: RemoteRunner, job_id: str) -> int:
    """`final-sync ID --no-wait --json` on the runner host: the final sync of its kept job
    asked; the record's sequence number after which its events are the final sync's (a
    refusal there, e.g. a job not kept in sync, is raised with its words and fix)."""
    code, stdout, stderr = rr.run("final-sync", job_id, "--no-wait", "--json", timeout=120)
    for line in stdout.splitlines():
        data = json.loads(line) if line.startswith("{") else {}
        if data.get("event") == "final-sync":
            return int(data["after"])
        if data.get("event") == "error":
            raise RemoteRunnerError(f"{rr.name}: {data.get('message', '')}",
                                    fix=data.get("fix") or None)
    tail = (stderr.strip().splitlines() or ["no output"])[-1]
    raise RemoteRunnerError(f"zmigrate on {rr.name} did not ask for the final sync "
                            f"(status {code}): {tail}",
                            fix=f"`zmigrate final-sync {job_id}` on {rr.name} says why; "
                            "an older zmigrate there: `pipx upgrade zmigrate`")


def final_sync(p: Pointer, logins: SessionLogins | None = None) -> int:
    """Ask job `p`'s runner host for its final sync (see `ask_final`)."""
    rr = _open(p.runner, logins, p.zmigrate)
    try:
        return ask_final(rr, p.id)
    finally:
        rr.close()


def again(p: Pointer, final: bool, keep_every: str | None = None,
          logins: SessionLogins | None = None) -> tuple[Pointer, int]:
    """Done's Sync again / Final sync / Keep in sync on job `p`, on its runner host: a
    kept-in-sync job's own final sync (asked there), else a new job of the same tree there
    (a new snapshot; `--final`, or kept in sync every `keep_every`). The job to follow, and
    the sequence number to follow it after."""
    rr = _open(p.runner, logins, p.zmigrate)
    try:
        status = next((s for s in remote_jobs(rr) if s.id == p.id), None)
        if status is None:
            raise RemoteRunnerError(f"{p.runner} has no record of job {p.id}: it cannot be "
                                    "repeated from here",
                                    fix="start it again from the first page")
        keep = Keep.of(status)
        if keep is not None and not status.state.final and (final or keep.final):
            return p, ask_final(rr, p.id)
        argv = again_argv(list(status.request.get("argv", [])),
                          status.request.get("source"), final=final, keep_every=keep_every)
        return _started(rr, rr.start(argv)), 0
    finally:
        rr.close()


def job_status(p: Pointer, logins: SessionLogins | None = None) -> Status | None:
    """Job `p` as its runner host has it now (None: it has no record of it)."""
    rr = _open(p.runner, logins, p.zmigrate)
    try:
        return next((s for s in remote_jobs(rr) if s.id == p.id), None)
    finally:
        rr.close()


def stop(p: Pointer, logins: SessionLogins | None = None) -> None:
    """`stop ID` on the runner host (it stops both ends there)."""
    rr = _open(p.runner, logins, p.zmigrate)
    try:
        code, _out, err = rr.run("stop", p.id, timeout=300)
    finally:
        rr.close()
    if code not in (0, 1):
        raise RemoteRunnerError(f"{p.runner} could not stop job {p.id}: "
                                f"{(err.strip().splitlines() or ['no output'])[-1]}")


class Following:
    """Job `p`'s record as its runner host has it (`attach --record` there), from the first
    event, or from the one after sequence number `after` (`--after`: a zmigrate there too
    old for it says nothing, and the whole record is read instead); `close` (from any
    thread) ends the following, not the job. What `logins` remembers for the runner host is
    not asked again."""

    def __init__(self, p: Pointer, logins: SessionLogins | None = None, after: int = 0,
                 on_login: Callable[[], None] | None = None) -> None:
        self.pointer = p
        self.on_login = on_login  # told once the runner host let us in
        self.logins = logins
        self.after = after
        self.logged_in = False  # the runner host let us in
        self.status: Status | None = None  # the job's status, once the record has ended
        self._rr: RemoteRunner | None = None
        self._closed = threading.Event()

    def records(self) -> Generator[Recorded, None, None]:
        p = self.pointer
        rr = self._rr = _open(p.runner, self.logins, p.zmigrate)
        self.logged_in = True
        try:
            if self.on_login is not None:
                self.on_login()
            if self._closed.is_set():
                return
            if self.after > 0:
                yield from self._read(rr, "--after", str(self.after))
                if self.status is not None:  # (every answer ends with the job's status)
                    return
            yield from self._read(rr)
        except RemoteRunnerError:
            if not self._closed.is_set():
                raise
        finally:
            rr.close()

    def _read(self, rr: RemoteRunner, *after: str) -> Generator[Recorded, None, None]:
        """The record's events from `attach --record` there (ARGS `after`); its status
        line kept as `status`."""
        for line in rr.stream("attach", "--record", self.pointer.id, *after):
            data = json.loads(line) if line.startswith("{") else {}
            if "kind" in data:
                yield record.decode(line)
            elif data.get("event") == "job":
                self.status = Status.from_json(data)

    def close(self) -> None:
        self._closed.set()
        if self._rr is not None:
            self._rr.close()


@dataclass(frozen=True, slots=True)
class Seen:
    """A remote job as its runner host has it; `status` None: the host did not answer
    (`problem` says why)."""

    pointer: Pointer
    status: Status | None
    problem: str = ""


def remote_jobs(rr: RemoteRunner) -> list[Status]:
    """`jobs --json --no-scan` on the runner host."""
    code, stdout, stderr = rr.run("jobs", "--json", "--no-scan", timeout=120)
    if code != 0:
        raise RemoteRunnerError(f"`zmigrate jobs` on {rr.name} failed: "
                                f"{(stderr.strip().splitlines() or ['no output'])[-1]}")
    rows = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [Status.from_json(d) for d in rows if d.get("event") == "job"]


def survey(logins: SessionLogins | None = None) -> list[Seen]:
    """The remote jobs this side started that are news: running, or ended and not yet shown
    (one login per runner host; a host that does not answer: each of its jobs, unreachable).
    A job its runner host has no record of is left out. `logins`: how to ask, and what the
    user answered this session (a survey on a timer asks nothing new: `quiet()`)."""
    by_runner: dict[str, list[Pointer]] = {}
    for p in pointers():
        by_runner.setdefault(p.runner, []).append(p)
    out: list[Seen] = []
    for name, known in by_runner.items():
        try:
            rr = _open(name, logins, known[0].zmigrate)
            try:
                rows = {s.id: s for s in remote_jobs(rr)}
            finally:
                rr.close()
        except (ZmigrateError, ValueError, KeyError) as exc:
            out += [Seen(p, None, getattr(exc, "message", str(exc))) for p in known]
            continue
        out += [Seen(p, rows[p.id]) for p in known
                if p.id in rows and (not rows[p.id].state.final or not rows[p.id].watched)]
    return out
