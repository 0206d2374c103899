"""A job whose runner is another machine, seen through its record there (`attach --record`
over SSH, engine/runner/elsewhere): the same handle as a local runner's job, so the Transfer
page follows it the same way. Started there first when the wizard hands it over. A lost
session is logged in again (engine/runner/through_losses), the page told meanwhile."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence

from ...engine.errors import ZmigrateError
from ...engine.events import Failed, OutOfTouch
from ...engine.hosts.remembered import SessionLogins
from ...engine.runner import elsewhere
from ...engine.runner.remote import Pointer, RemoteRunnerError
from ...engine.runner.state import JobState
from ...engine.runner.through_losses import FollowingThroughLosses
from .record_job import RecordJob


class RemoteRecordJob(RecordJob):
    """Follows job `pointer` on its runner host on a thread of its own (after sequence number
    `after`, up to the first run's end: a kept-in-sync job goes on after it); with `start`
    ((runner, its zmigrate, send's argv)) and no pointer, starts the job there first. Its
    logins ask and remember through `logins` (the window's), again after a loss."""

    def __init__(self, pointer: Pointer | None,
                 start: tuple[str, str, Sequence[str]] | None = None, after: int = 0,
                 logins: SessionLogins | None = None) -> None:
        super().__init__(pointer.id if pointer is not None else "", after,
                         self._start_there if pointer is None else None)
        self.pointer = pointer
        self.logins = logins or SessionLogins()
        self._to_start = start
        self._following: FollowingThroughLosses | None = None

    def _follow(self) -> None:
        try:
            self._start_first()
            assert self.pointer is not None
            self._following = following = FollowingThroughLosses(
                self.pointer, self._touch, self.logins, after=self.after)
            if self._detached.is_set():
                return
            with contextlib.closing(following.records()) as records:
                for rec in records:
                    if rec.seq > self.after:
                        self._emit(rec.event)
                    if self.ended:  # its end said: the session to the runner host ends
                        break
            if not self._detached.is_set() and self.summary is None and self.error is None:
                self._emit(Failed(self._no_end(following.status)))
        except (OSError, ZmigrateError, ValueError) as exc:
            if not self._detached.is_set():
                self._emit(Failed(exc if isinstance(exc, ZmigrateError)
                                  else ZmigrateError(f"the job's record cannot be read: {exc}")))
        finally:
            self._ended.set()

    def _start_there(self) -> str:
        """Start the job on the runner host (`start`): its id."""
        assert self._to_start is not None
        self.pointer = elsewhere.start(*self._to_start, self.logins)
        return self.pointer.id

    def _no_end(self, status: object) -> ZmigrateError:
        """The record ended without an outcome: the runner there died, or said nothing."""
        assert self.pointer is not None
        p = self.pointer
        if getattr(status, "state", None) is JobState.RUNNER_DIED:
            return ZmigrateError(f"the job's runner on {p.runner} is gone without an outcome",
                                 fix=f"`zmigrate jobs --runner {p.runner}` names what it left "
                                 "on the hosts; sending again resumes")
        return RemoteRunnerError(f"{p.runner} said nothing of job {p.id}",
                                 fix=f"`zmigrate jobs --runner {p.runner}` lists its jobs")

    def _touch(self, e: OutOfTouch) -> None:
        self._emit(e)
        if e.back and self._stop_asked.is_set() and not self.ended:
            self.cancel()  # a stop asked while out of touch did not reach the runner host

    def cancel(self) -> None:
        """Ask the runner host to stop the job (both ends); the record's end follows."""
        self._stop_asked.set()
        p = self.pointer
        if p is not None:
            threading.Thread(target=_stop_quietly, args=(p, self.logins), daemon=True).start()

    def detach(self) -> None:
        """Stop following (the window closes): the SSH session ends, the job goes on."""
        super().detach()
        if self._following is not None:
            self._following.close()


def _stop_quietly(p: Pointer, logins: SessionLogins) -> None:
    try:
        elsewhere.stop(p, logins)
    except ZmigrateError:
        pass  # the record's end (or the lost runner) says what happened
