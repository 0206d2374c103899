"""A job a runner owns, seen through its record (engine/runner): the handle JobBridge drives,
so the Transfer page follows it as it follows a job of this process, from the first event,
whether it started a second ago or long before this window opened."""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...engine import runner
from ...engine.errors import ZmigrateError
from ...engine.events import (
    Event,
    Failed,
    Finished,
    Observer,
    PlanReady,
    Summary,
    TreePlanReady,
)
from ...engine.runner.state import JobState


class RecordJob:
    """Follows job `job_id`'s record on a thread of its own (after sequence number `after`) and
    tells its observers each event, up to the first run's end (a kept-in-sync job goes on
    after it: its catch-ups are read from its state); `cancel` asks the runner to stop the
    job, `detach` only stops following it. With `start` (and no id yet), that thread starts
    the job first: a runner's start asks the user's systemd and logind, which the window's
    thread does not wait for."""

    def __init__(self, job_id: str, after: int = 0,
                 start: Callable[[], str] | None = None) -> None:
        self.job_id = job_id
        self.after = after
        self._starter = start
        self._stop_asked = threading.Event()
        self.summary: Summary | None = None
        self.error: ZmigrateError | None = None
        self.plan_event: PlanReady | TreePlanReady | None = None
        self._observers: list[Observer] = []
        self._ended = threading.Event()
        self._detached = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def ended(self) -> bool:
        """The run followed said its end."""
        return self.summary is not None or self.error is not None

    @property
    def done(self) -> bool:
        return self._ended.is_set()

    def subscribe(self, observer: Observer) -> None:
        self._observers.append(observer)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._follow, daemon=True,
                                        name=f"zmigrate-follow-{self.job_id}")
        self._thread.start()

    def _follow(self) -> None:
        try:
            self._start_first()
            directory = runner.job_dir(self.job_id)
            stop = self._detached.is_set
            for rec in runner.follow(directory, self._alive, stop=lambda: stop() or self.ended):
                if rec.seq > self.after and not self.ended:
                    self._emit(rec.event)
            if not self._detached.is_set() and self.summary is None and self.error is None:
                s = runner.status(self.job_id)
                if s.state is JobState.RUNNER_DIED:
                    self._emit(Failed(ZmigrateError(
                        f"the job's runner (pid {s.pid}) is gone without an outcome",
                        fix=f"`zmigrate jobs` names what it left on the hosts; its log is "
                        f"{directory}/runner.log; sending again resumes")))
        except (OSError, ZmigrateError, ValueError) as exc:
            self._emit(Failed(exc if isinstance(exc, ZmigrateError)
                              else ZmigrateError(f"the job's record cannot be read: {exc}")))
        finally:
            self._ended.set()

    def _start_first(self) -> None:
        """Start the job (on this thread) where it has no id yet; a stop asked meanwhile is
        asked of it now."""
        if self._starter is not None and not self.job_id:
            self.job_id = self._starter()
            if self._stop_asked.is_set():
                self.cancel()

    def _alive(self) -> bool:
        return runner.status(self.job_id).state is not JobState.RUNNER_DIED

    def _emit(self, event: Event) -> None:
        match event:
            case Finished():
                self.summary = event.summary
            case Failed():
                self.error = event.error
            case PlanReady() | TreePlanReady():
                if self.plan_event is None:
                    self.plan_event = event
        for observer in list(self._observers):
            observer(event)

    def cancel(self) -> None:
        """Ask the runner to stop the job (both ends); the record's end follows. Asked before
        the job started, it is asked as soon as it has."""
        self._stop_asked.set()
        if self.job_id:
            threading.Thread(target=_stop_quietly, args=(self.job_id,), daemon=True).start()

    def detach(self) -> None:
        """Stop following (the window closes); the job goes on in its runner."""
        self._detached.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._ended.wait(timeout)

    def runner_note(self) -> str:
        """What the user must know of the job's runner (a logout that stops it), from its
        state here; '' where there is none (a job on a runner host has no state here, a job
        starting has none yet)."""
        if not self.job_id:
            return ""
        try:
            return runner.status(self.job_id).note
        except (OSError, ValueError, KeyError, runner.JobNotFoundError):
            return ""


def _stop_quietly(job_id: str) -> None:
    try:
        runner.stop(job_id)
    except ZmigrateError:
        pass  # gone already (its record removed): the record's end says what happened
