"""Runs a Job on its engine thread and re-emits its events as Qt signals on the GUI thread."""

from __future__ import annotations

import threading
from typing import assert_never

from PySide6.QtCore import QObject, Signal

from zmigrate.engine.readings.samples import SampleStore

from ..engine.events import (
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    LogLine,
    OutOfTouch,
    PlanReady,
    Progress,
    Resent,
    Sample,
    StageChanged,
    StageResult,
    StageStarted,
    Stalled,
    Synced,
    TreePlanReady,
    Verdict,
    Wire,
)
from ..engine.job import Job
from ..engine.plan import Plan
from ..engine.tree import TreeJob
from . import words
from .jobs.record_job import RecordJob


class JobBridge(QObject):
    """The GUI's only handle on a running job; one per transfer, living as long as its page.

    Samples go straight into `store` (thread-safe) for the plots to pull; the events the pages
    follow are re-emitted as signals, queued to the GUI thread.

    Signals:
        stage_changed(stage, detail, dataset), log_line(LogLine), progress(Progress),
        verdict(diagnosis.Verdict): for a tree, only of the dataset the plots follow;
        verdict_cleared(): a tree's plots now follow another dataset, so the verdict shown is
            not about it; finished(Summary), failed(Failed),
        dataset_state(DatasetState): a tree job's dataset changed state,
        wire(Wire): both hosts' links and the path's ceiling, once read (`seen_wire` has it
            if it came before the page connected),
        out_of_touch(OutOfTouch): the session to a remote job's runner host was lost (each
            try to log in again) or is back,
        resent(Resent), end_cpu(EndCpu): the way's readings, for a tree only of the dataset
            the plots follow
    """

    stage_changed = Signal(str, str, str)
    log_line = Signal(object)
    progress = Signal(object)
    verdict = Signal(object)
    verdict_cleared = Signal()
    finished = Signal(object)
    failed = Signal(object)
    dataset_state = Signal(object)
    wire = Signal(object)
    out_of_touch = Signal(object)
    resent = Signal(object)
    end_cpu = Signal(object)

    def __init__(self, job: Job | TreeJob | RecordJob, store: SampleStore,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.job = job
        self.store = store
        self.started = False
        # A tree's datasets in flight at once (--parallel) each report samples: the plots
        # follow one of them until it ends, then the next, so their series never interleave.
        self._lock = threading.Lock()
        self._following: str | None = None
        self._sending: set[str] = set()
        job.subscribe(self.on_event)

    def start(self, plan: Plan | None = None) -> None:
        """Start the job on its own thread; with `plan` (the one Review showed), exactly that
        plan runs: same port, same log names, same commands."""
        self.started = True
        if isinstance(self.job, TreeJob | RecordJob):
            self.job.start()  # runs the tree plan its prepare() made (the one Review showed)
        else:
            self.job.start(plan=plan)

    def seen_wire(self) -> Wire | None:
        """The wire the job's preflight read so far (None: not yet, or no link crossed)."""
        seen = getattr(self.job, "wire_seen", None)
        return seen.wire if seen is not None else None

    def cancel(self) -> None:
        """Ask the job to stop; `failed` follows once both ends are stopped."""
        self.job.cancel()

    def _follows(self, sample: Sample) -> bool:
        """Whether `sample` belongs to the dataset the plots follow (picking the next one when
        the followed dataset is no longer sending)."""
        if not sample.dataset:
            return True
        with self._lock:
            switched = self._following is not None and self._following != sample.dataset \
                and self._following not in self._sending
            if self._following is None or switched:
                self._following = sample.dataset
            follows = self._following == sample.dataset
        if switched:
            self.verdict_cleared.emit()
        return follows

    def on_event(self, event: Event) -> None:
        """Observer: called on the job's thread (or by tests replaying a trace)."""
        match event:
            case Sample():
                if self._follows(event):
                    self.store.add(event)
            case Progress():
                self.progress.emit(event)
            case LogLine():
                self.log_line.emit(event)
            case DatasetState():
                self._dataset_state(event)
            case StageChanged():
                detail = words.caveat(event.caveat) if event.caveat else event.detail
                self.stage_changed.emit(event.stage, detail, event.dataset)
            case Finished():
                self.finished.emit(event.summary)
            case Failed():
                self.failed.emit(event)
            case Verdict():
                if self._ours(event.dataset):
                    self.verdict.emit(event)
            case Resent():
                if self._ours(event.dataset):
                    self.resent.emit(event)
            case EndCpu():
                if self._ours(event.dataset):
                    self.end_cpu.emit(event)
            case Wire():
                self.wire.emit(event)
            case OutOfTouch():
                self.out_of_touch.emit(event)
            case (PlanReady() | TreePlanReady() | Stalled() | StageStarted() | StageResult()
                  | Synced()):
                pass  # the plan is Review's, a stall arrives as its verdict, the doctor's own;
                # a kept-in-sync job's catch-ups are read from its state (Done, first page)
            case _:
                assert_never(event)

    def _ours(self, dataset: str) -> bool:
        """Whether an event of `dataset` ("": the job's own) is about what the plots follow."""
        with self._lock:
            return not dataset or dataset == self._following

    def _dataset_state(self, event: DatasetState) -> None:
        # The tree's datasets share its clock (Job t0): the plots run on across them, their
        # live edge the dataset being sent, and Done keeps the whole run.
        with self._lock:
            if event.state == "sending":
                self._sending.add(event.dataset)
            else:
                self._sending.discard(event.dataset)
        self.dataset_state.emit(event)
