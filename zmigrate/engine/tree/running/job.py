"""Move a dataset tree: snapshot it, copy it dataset by dataset, catch up, cut over.

A `TreeJob` reads both trees once (one `zfs get -r` per host), plans the run with
`planning.plan.plan_tree` (each dataset's fate: in full with its history, the delta from the
newest common snapshot, skipped, or carried in an encrypted subtree's raw stream), and then runs
one `Job` per stream on the same two SSH control sessions, parents before children. Each dataset
is its own resumable step: an interruption in dataset k of n leaves 1..k-1 complete, and the
next run skips them.

The pieces, in this room: `schedule` (which dataset goes when, the tree's progress),
`dataset_job` (one dataset as its own `Job`), `states` (each dataset's state, said as it
changes), `arrival` (the copy's root placed as it arrives), `verification` (the whole copy after)
and `summary` (what the run adds up to); the plan is `planning`'s, the checks before the run
`preflight`'s.

Events: the inner jobs' events pass through (samples, stages, logs, verdicts), their Progress is
turned into whole-tree progress, and `DatasetState` says when a dataset changes state."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from ... import zfs
from ...destination.received_properties import RefusedLines
from ...errors import CancelledError, PreflightError, PreflightReason, ZmigrateError
from ...events import Observer, StageChanged, Summary
from ...hosts import Host
from ...job import Job, Known, read_settled
from ...job.preflight import probe_both
from ...plan import Plan, check_tools
from ...wire import WireSeen
from ...work import Work
from ..planning.entry import TreeEntry
from ..planning.plan import (
    TreePlan,
    TreePlanReady,
    TreeRequest,
    snapshot_name,
)
from ..planning.unchanged import leave_empty
from ..preflight.preparation import TreeReading, decide_tree, read_after_trees
from .ahead import Ahead, take_snapshot
from .arrival import hold_readonly, place_root
from .dataset_job import (
    Ports,
    dataset_job,
    expect_streams,
    known_ahead,
    relay,
)
from .phases import Phases
from .schedule import Totals, TreeProgress, auto_width, depends_on, schedule
from .states import DatasetStates
from .summary import tree_summary
from .verification import SourceSide, TreeCheck, finish_received

# (source host, {dataset: its local readonly now, None: not local}) -> the values to keep.
ReadonlyMemory = Callable[[str, dict[str, str | None]], dict[str, str | None]]


def readonly_before(src: Host, plan: TreePlan,
                    memory: ReadonlyMemory | None) -> dict[str, dict[str, str]]:
    """The source's local readonly before this final sync; where an earlier final sync (maybe
    one that failed) set it on already, the earliest record: `memory` keeps it (the history,
    golive/final_sync.py, which tree/ cannot import); None: this run's own reading."""
    now = zfs.local_properties(src, plan.root, "readonly")
    if memory is None:
        return now
    names = sorted({e.source for e in plan.entries} | set(now))
    kept = memory(src.label, {n: now.get(n, {}).get("readonly") for n in names})
    return {n: {"readonly": v} for n, v in kept.items() if v is not None}


def tree_width(request: TreeRequest, *caps: zfs.Capabilities | None) -> int:
    """Datasets in flight at once: as asked, or by both hosts' memory (after prepare)."""
    if request.parallel is not None:
        return request.parallel
    known = [c for c in caps if c is not None]
    return auto_width([c.mem_available for c in known] or [None], request.options.buffer_size)


def held_to(shown: frozenset[tuple[str, str, str]] | None, plan: TreePlan,
            dst_label: str) -> None:
    """Planned again at run (after Review, maybe long ago): stop before anything changes if
    the plan destroys more than the one shown (`shown`: the keys of the first plan's list,
    TreeJob.shown: Review's, or the run's own, said before it runs) - a snapshot or child
    taken on the copy since, a file in a dataset judged empty - naming what (CHANGED)."""
    grew = [x for x in plan.destroys if shown is not None and x.key not in shown]
    if not grew:
        return
    raise PreflightError(
        "the destination changed after the plan was shown, and the tree would also destroy: "
        + ", ".join(f"{x.name} ({x.detail})" for x in grew),
        host=dst_label, reason=PreflightReason.CHANGED,
        fix="nothing was destroyed or changed; review the plan again (run again, or go back "
        "to Review) and agree to what it destroys now",
        figures={"destroys": ", ".join(x.name for x in grew)})


def set_readonly(src: Host, plan: TreePlan, emit: Observer, phases: Phases) -> None:
    """A final sync's `readonly=on` on every picked source dataset (said first, timed)."""
    assert plan.readonly_command is not None
    with phases.timed("readonly", plan.readonly_command):
        emit(StageChanged("preflight", "final sync: setting readonly=on on the source"))
        src.run(plan.readonly_command, timeout=300).check("setting readonly=on")


def arrived_in_full(dst: Host, dst_caps: zfs.Capabilities | None, request: TreeRequest,
                    plan: TreePlan, e: TreeEntry, emit: Observer) -> None:
    """After `e` arrived: the copy's root placed, a full copy held read-only where asked
    (an incremental's copy has it from its first run)."""
    if e.source == plan.root and e.action == "full":
        assert dst_caps is not None
        place_root(dst, dst_caps, request.mount_root, plan.destination, emit)
    if e.action == "full":
        hold_readonly(dst, request.mount_root, request.options.readonly, e.destination, emit)


class TreeJob(Work):
    """A tree transfer between two connected hosts (the caller owns and closes them).

    Driven like a `Job`: `subscribe`, `start`/`run`, `cancel` from any thread, `wait`,
    `summary`/`error` at the end. `prepare()` alone gives the plan (for --dry-run and review).
    """

    def __init__(self, src: Host, dst: Host, request: TreeRequest,
                 observer: Observer | None = None) -> None:
        request.validate()
        super().__init__(observer, (src, dst))
        self.src, self.dst, self.request = src, dst, request
        self.src_caps: zfs.Capabilities | None = None
        self.dst_caps: zfs.Capabilities | None = None
        self.wire_seen = WireSeen()  # the wire its preflight read, for each dataset's verdicts
        self.subscribe(self.wire_seen)
        self._refused = RefusedLines()  # properties zfs receive said it did not set
        self.subscribe(self._refused)
        self.plan: TreePlan | None = None
        self.readonly_since: float | None = None
        self.readonly_before: dict[str, dict[str, str]] = {}  # dataset -> {readonly: on}
        self.readonly_memory: ReadonlyMemory | None = None  # see readonly_before
        self._jobs: set[Job] = set()
        self._source_side: SourceSide | None = None  # the check's source half, read early
        self._lock = threading.Lock()  # guards _jobs (--parallel)
        self._snapshot = request.snapshot or snapshot_name()
        self.known: Known | None = None  # both trees etc., read once for every dataset's job
        self._ports = Ports()
        self.checked = TreeCheck()  # the last check of what arrived
        self._planned: Callable[[list[zfs.Dataset]], TreePlan] | None = None  # by prepare()
        self._ahead: Ahead | None = None  # the snapshot and measuring done while reading
        self.shown: frozenset[tuple[str, str, str]] | None = None  # see held_to
        self.phases = Phases()  # where this run's time went: the final sync's window's figures

    thread_name = "zmigrate-tree"

    def start(self) -> None:
        self._start_thread()

    def cancel(self) -> None:
        self._cancel.set()
        with self._lock:
            jobs = list(self._jobs)
        for job in jobs:
            job.cancel()

    # -- planning -----------------------------------------------------------------------------
    def prepare(self, *, ahead: bool = False) -> TreePlan:
        """Read both hosts (`_read`), then decide every dataset's fate (`decide_tree`):
        docs/architecture.md, "A job's preparation". Changes nothing (unless `ahead`, for a
        run: a zfs-fuse catch-up's snapshot is taken and measured while the copy is read,
        tree_ahead). Each dataset's own plan is its job's (`dataset_plan`, and at run)."""
        reading = self._read(ahead)
        assert self.src_caps is not None and self.dst_caps is not None
        decided = decide_tree(self.src, self.dst, self.request, reading,
                              (self.src_caps, self.dst_caps), self._snapshot)
        self._snapshot, self._planned = decided.snapshot, decided.planned
        plan = self.plan = decided.plan
        self.known = reading.known
        if self.shown is None:
            self.shown = frozenset(x.key for x in plan.destroys)
        return plan

    def _read(self, ahead: bool) -> TreeReading:
        """The read step: both hosts probed, both trees read (one `zfs get -r` each), then
        what depends on them (preparation.read_after_trees)."""
        req = self.request
        self.emit(StageChanged("preflight", "probing hosts"))
        # (Planned again at run, e.g. after Review: the hosts are not probed twice.)
        src_caps, dst_caps = probe_both(self.src, self.dst, self.src_caps, self.dst_caps)
        self.src_caps, self.dst_caps = src_caps, dst_caps
        # zfs (nothing more can be read without it) and the transport's tools, before any
        # snapshot is taken
        check_tools(self.src, src_caps, self.dst, dst_caps, req.options)
        self.emit(StageChanged("preflight", "reading both trees"))
        if ahead:
            self._ahead = Ahead(self.src, src_caps, req, self._snapshot, self.emit,
                                self.phases)
        known = self._read_known(self._ahead if ahead else None)
        return read_after_trees(self.src, self.dst, (src_caps, dst_caps), req, known)

    @property
    def width(self) -> int:
        return tree_width(self.request, self.src_caps, self.dst_caps)

    def _read_known(self, ahead: Ahead | None = None) -> Known:
        """Both trees, the destination's parent, its ports, the tcp addresses and the pool's
        resume feature: one read each, all at once, for every dataset's job (and `ahead`)."""
        assert self.src_caps is not None and self.dst_caps is not None
        with self.phases.timed("read"):
            return read_settled(self.src, self.dst, self.src_caps, self.dst_caps,
                                self.request.root, self.request.destination,
                                self.request.options, self.emit, ahead)

    def dataset_plan(self, entry: TreeEntry) -> Plan:
        """The plan (and so the exact commands) one dataset's job would run."""
        assert self.plan is not None and self.known is not None
        return self._job_for(self.plan, entry, known=known_ahead(self.known, self.plan)).prepare()

    # -- running ------------------------------------------------------------------------------
    def run(self) -> Summary:
        return self._finish(self._run)

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("the transfer was cancelled")

    def _run(self) -> Summary:
        if self.plan is not None and (self.plan.unchanged or self.plan.measures_empty):
            self.plan = None  # "unchanged" may no longer be true: planned again, now
        prepared_before = self.plan is not None  # e.g. for Review, maybe long ago
        try:
            plan = self.plan or self.prepare(ahead=True)
            held_to(self.shown, plan, self.dst.label)
        except BaseException:
            if self._ahead is not None:
                self._ahead.take_back()
            raise
        expect_streams(self.src, self.dst, self.width, plan)
        ahead = self._ahead if self._ahead is not None and self._ahead.owns(plan) else None
        taken = plan.measures_empty or ahead is not None  # the snapshot exists by now
        if plan.measures_empty:  # (a zfs without `written`) what changed, once it is taken
            if ahead is None:
                self._take_snapshot(plan)
            assert self.known is not None and self._planned is not None
            plan = leave_empty(self.src, plan, self.known.src_sets, self._planned, self.emit,
                               ahead.empty if ahead is not None else None)
        self.emit(TreePlanReady(plan))
        for name in plan.vanished:
            self.emit(StageChanged("preflight", f"{name} is gone from the source: kept on the "
                                   "destination, not destroyed"))
        self.states = DatasetStates(plan, self.emit)
        self.states.announce()
        self._check_cancel()
        window_from = time.monotonic()  # the source's first change: the window's clock
        if plan.readonly_command:
            # As it was before, for go-live to restore (golive/); then the cut-over.
            self.readonly_before = readonly_before(self.src, plan, self.readonly_memory)
            window_from = time.monotonic()  # (that read changed nothing: from readonly=on)
            set_readonly(self.src, plan, self.emit, self.phases)
            self.readonly_since = time.time()
        if plan.snapshot_command and not taken:
            self._take_snapshot(plan)
        if prepared_before:
            # Once for every dataset (the snapshot just taken included), not once per dataset.
            self.emit(StageChanged("preflight", "reading both trees"))
            self.known = self._read_known()
        elif self.known is not None:
            # Read a moment ago: only the snapshot just taken is new, and the jobs plan by its
            # name (its guid is read when the copy is checked), so no second read of both trees.
            self.known = known_ahead(self.known, plan)
        assert self.src_caps is not None
        self._source_side = SourceSide(self.src, self.src_caps, plan)
        totals = Totals()
        t0 = time.monotonic()
        try:
            with self.phases.timed("send"):
                first_error = self._send_all(plan, totals, t0)
        except ZmigrateError:
            self._settle(plan)
            raise
        if first_error is not None:
            self._settle(plan)
            raise first_error
        with self.phases.timed("check"):
            self._finish_received(plan)
        end = time.monotonic()
        return tree_summary(plan, totals, end - t0, self.states.results,
                            self.readonly_since, self.checked, window=end - window_from,
                            readonly_before=self.readonly_before, phases=self.phases)

    def _take_snapshot(self, plan: TreePlan) -> None:
        assert plan.snapshot_command is not None
        with self.phases.timed("snapshot", plan.snapshot_command):
            take_snapshot(self.src, plan.snapshot_command, plan.snapshot, self.emit)

    def _send_all(self, plan: TreePlan, totals: Totals, t0: float) -> ZmigrateError | None:
        """Send every dataset to send; returns the first failure of a dataset that others do
        not depend on (the rest still went), raises when nothing more can go."""
        first_error: ZmigrateError | None = None
        progress = TreeProgress(plan, totals, t0)
        outcomes = schedule(plan, self.width,
                            lambda i, e: self._send_one(plan, i, e, progress), self._cancel)
        for i, e, outcome in outcomes:
            if isinstance(outcome, CancelledError):
                self.states.failed(i, e, "cancelled")
                raise outcome
            if isinstance(outcome, ZmigrateError):
                self.states.failed(i, e, str(outcome))
                first_error = first_error or outcome
                # A child cannot be received under a parent that failed to arrive, nor a
                # clone from an origin that did not.
                if self._cancel.is_set() or any(
                        depends_on(x, e) and x.carried_by is None for x in plan.entries):
                    raise outcome
                continue
            if isinstance(outcome, BaseException):
                raise outcome
            progress.finished(e.source, outcome)
            self.states.arrived(i, e, outcome)
        self._check_cancel()
        return first_error

    def _settle(self, plan: TreePlan) -> None:
        """After an interruption: what did arrive is still checked (and marked verified)."""
        try:
            self._finish_received(plan)
        except ZmigrateError as exc:
            self.emit(StageChanged("verifying", str(exc)))

    def _job_for(self, plan: TreePlan, e: TreeEntry, t0: float | None = None,
                 known: Known | None = None) -> Job:
        """`e`'s job, reading `known` (default: the tree's)."""
        known = known or self.known
        assert self.src_caps is not None and self.dst_caps is not None and known is not None
        return dataset_job(self.src, self.dst, self.request, (self.src_caps, self.dst_caps),
                           known, self._ports, plan, e, t0, shown=self.shown)

    def _send_one(self, plan: TreePlan, i: int, e: TreeEntry,
                  progress: TreeProgress) -> Summary:
        job = self._job_for(plan, e, progress.t0)
        job.wire_seen(self.wire_seen.wire)
        job.subscribe(relay(self.emit, progress, i, e.source))
        with self._lock:
            self._jobs.add(job)
        if self._cancel.is_set():
            job.cancel()
        self.states.sending(i, e)
        try:
            summary = job.run()
        finally:
            with self._lock:
                self._jobs.discard(job)
            progress.stopped(e.source)
        arrived_in_full(self.dst, self.dst_caps, self.request, plan, e, self.emit)
        return summary

    def _finish_received(self, plan: TreePlan) -> None:
        """The received datasets, all at once: each one checked (marked verified, or failed
        saying what differs), readonly=on where asked."""
        assert self.src_caps is not None and self.dst_caps is not None
        self.checked = finish_received(
            self.src, self.dst, (self.src_caps, self.dst_caps), plan,
            self.states.arrived_entries(), readonly=self.request.options.readonly,
            source=self._source_side, emit=self.emit, own=self.request.options.receive_sets)
        self.states.checked(self.checked)
        self.checked.raise_problems(self.dst.label, self._refused.said())


