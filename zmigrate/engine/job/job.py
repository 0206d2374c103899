"""A migration job: preflight, plan, run every step, verify, and clean up on every path.

A Job is driven from any thread: `run()` blocks, `start()` runs it on a thread of its own, and
`cancel()` may be called from another thread. Observers get plain event objects (events.py).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from .. import cmdline, zfs
from ..destination.received_properties import RefusedLines, check_received_properties
from ..errors import CancelledError, PortInUseError, TransferError, ZmigrateError
from ..events import Observer, PlanReady, StageChanged, Summary
from ..hosts import Host
from ..plan import Plan
from ..remedies import Caveat, Remedy
from ..transports.route import SshRoute
from ..verdict.diagnosis import Diagnoser
from ..wire import WireSeen
from ..work import Work
from .checks import (
    Evidence,
    bookmark,
    clean_up_after_failure,
    make_room,
    recheck_destination,
    summary_of,
    verify_guids,
)
from .checks import both as both
from .decide import Decision, decide_job
from .planning import on_port, plan_job
from .preflight import Known as Known
from .preflight import Reading, addresses, read_job, ssh_route
from .preflight import default_transport as default_transport
from .preflight import read_known as read_known
from .preflight import read_settled as read_settled
from .request import Request as Request
from .step import StepResult, StepRunner, check_hashes, free_port, listening_ports

PORT_ATTEMPTS = 3  # listeners started before one binds its port (another process may take it)


@dataclass(frozen=True, slots=True)
class InTree:
    """What a tree tells the job of one of its datasets (tree/running/dataset_job.py): the tree
    checks guids (0 here), readonly=on and mountpoints itself."""

    known: Known  # what the tree read: the preflight reads nothing again
    shown: frozenset[tuple[str, str, str]]  # the keys of the losses the tree's plan showed
    parent_pending: bool  # the destination's parent arrives earlier in this run
    port_movable: bool  # the tree's port is zmigrate's pick, not the user's


class Job(Work):
    """One transfer between two connected hosts (the caller owns and closes the hosts).

    Args:
        src, dst: connected hosts (the same object for a same-host transfer).
        request: what to send where, and how.
        observer: called with every event, on the job's thread.
        src_caps, dst_caps: capabilities if already probed.
        t0: the monotonic time samples count from (default: when the job runs).
        tree: one dataset of a tree's: what the tree read, showed and leaves to itself.
    """

    def __init__(self, src: Host, dst: Host, request: Request, observer: Observer | None = None,
                 *, src_caps: zfs.Capabilities | None = None,
                 dst_caps: zfs.Capabilities | None = None, t0: float | None = None,
                 tree: InTree | None = None) -> None:
        super().__init__(observer, (src, dst))
        self.src, self.dst, self.request = src, dst, request
        self.src_caps, self.dst_caps = src_caps, dst_caps
        self.plan: Plan | None = None
        self._runner: StepRunner | None = None
        self._origin = t0  # a tree's jobs share one time axis
        self.t0 = time.monotonic() if t0 is None else t0
        self.partial_kept = False  # an interruption left a resumable state on the destination
        self._received = 0  # bytes the receiving mbuffer handed to this run's zfs receive
        self._src_sets: list[zfs.Dataset] = []
        self._dst_before: tuple[bool, set[str]] | None = None
        self._given_plan: Plan | None = None
        self.tree = tree
        self.wire_seen = WireSeen()  # the path as both hosts read it (the preflight emits it)
        self.subscribe(self.wire_seen)
        self._refused = RefusedLines()  # properties zfs receive said it did not set
        self.subscribe(self._refused)
        self._decided: tuple[Reading, Decision] | None = None  # what prepare() read, decided
        # A port zmigrate picked may move when another process takes it; the user's may not.
        self.port_movable = request.options.port is None if tree is None else tree.port_movable

    thread_name = "zmigrate-job"

    # -- control ------------------------------------------------------------------------------
    def start(self, plan: Plan | None = None) -> None:
        """Run the job on a thread of its own; with `plan` (from `prepare()`, e.g. shown to the
        user for review), exactly that plan runs instead of planning again."""
        self._given_plan = plan
        self._start_thread()

    def cancel(self) -> None:
        """Ask the job to stop; both ends are killed right away. Safe from any thread."""
        self._cancel.set()
        runner = self._runner
        if runner is not None:
            threading.Thread(target=runner.stop, name="zmigrate-cancel", daemon=True).start()

    # -- the work -----------------------------------------------------------------------------
    def run(self, plan: Plan | None = None) -> Summary:
        """Run the whole job on this thread and return the summary, or raise ZmigrateError.

        With `plan` (from `prepare()`), exactly that plan runs instead of planning again.
        """
        if plan is not None:
            self._given_plan = plan
        self.t0 = time.monotonic() if self._origin is None else self._origin
        return self._finish(self._run)

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("the transfer was cancelled before it started")

    def prepare(self) -> Plan:
        """Read both hosts, decide, plan: each step once, in that order (docs/architecture.md,
        "A job's preparation"); raises PreflightError before anything runs."""
        tree = self.tree
        reading = read_job(self.src, self.dst, self.request, self.emit,
                           caps=(self.src_caps, self.dst_caps),
                           known=tree.known if tree else None, cancelled=self._check_cancel,
                           tree=tree is not None, parent_pending=bool(tree and tree.parent_pending))
        self.src_caps, self.dst_caps = reading.src.caps, reading.dst.caps
        self._src_sets = list(reading.src.datasets)
        existing = reading.existing
        self._dst_before = (existing is not None,
                            {x.name for x in existing.snapshots} if existing else set())
        decision = decide_job(self.src, self.dst, self.request, reading)
        self._decided = (reading, decision)
        return plan_job(reading, decision)

    def _on_another_port(self, plan: Plan) -> Plan:
        """The same plan on a port nothing holds now (another process took the one picked)."""
        assert self._decided is not None and plan.port is not None
        port = free_port(self.dst, used=listening_ports(self.dst) | {plan.port})
        self.emit(StageChanged("starting", f"port {plan.port} was taken on the destination: "
                               f"listening on {port} instead"))
        moved = on_port(*self._decided, plan, port)
        self.plan = moved
        return moved

    def addresses(self) -> tuple[str, str | None]:
        """(address the source connects to, source address as the destination sees it)."""
        assert self.src_caps is not None and self.dst_caps is not None
        return addresses(self.src, self.dst, self.src_caps, self.dst_caps)

    def ssh_route(self) -> SshRoute:
        """How the source's own ssh reaches the destination (job_preflight.ssh_route)."""
        return ssh_route(self.dst.label, self.request.options.ssh_options)

    def _run(self) -> Summary:
        given = self._given_plan
        plan = given if given is not None else self.prepare()
        self.plan = plan
        diagnoser = Diagnoser(self.emit, rate_limit=plan.options.rate_limit)
        self.subscribe(diagnoser)
        self.wire_seen.feed(diagnoser)  # read before the diagnoser was there
        self.emit(PlanReady(plan))
        for w in plan.warnings:
            self.emit(StageChanged("preflight", str(w),
                                   caveat=w if isinstance(w, Caveat) else None))
        self._check_cancel()
        if given is not None or self._dst_before is None:
            existed, before = dst_state(self.dst, self.dst_caps, plan)
        else:
            existed, before = self._dst_before
        recheck_destination(self.dst, self.dst_caps, plan, self.emit,
                            self.tree.shown if self.tree else None)
        if make_room(self.dst, self.dst_caps, plan, self.emit):
            existed, before = dst_state(self.dst, self.dst_caps, plan)
        try:
            results, hashes = self._send(plan)
        except ZmigrateError as exc:
            self._runner = None
            self.partial_kept = clean_up_after_failure(self.dst, self.dst_caps, plan, existed,
                                                       self.emit, Evidence(self._received,
                                                                           str(exc)))
            if self.partial_kept:
                exc.remedies += (Remedy.RESUME,)
            raise
        return self._finish_sent(self.plan or plan, results, hashes, diagnoser)

    def _send(self, plan: Plan) -> tuple[list[StepResult], list[bool | None]]:
        """Every step's stream, in order: (results, each step's hash match)."""
        results: list[StepResult] = []
        hashes: list[bool | None] = []
        done = 0
        if len(plan.steps) > 1:  # the next step's sessions open while this one streams
            self.src.expect_pipelines(1)
            self.dst.expect_pipelines(1)
        for i in range(len(plan.steps)):
            self._check_cancel()
            self.emit(StageChanged("starting", plan.steps[i].title(i, len(plan.steps))))
            plan, result = self._run_step(plan, i, done)
            match = check_hashes(result, plan.destination)
            if plan.stream_hash and match is None:
                # Asked for and not there: the check must run or fail the job, never vanish.
                raise TransferError("the stream hash was asked for, but "
                                    + ("the sender" if result.send_hash is None
                                       else "the receiver") + " reported none",
                                    host=plan.destination,
                                    fix="run it again, or without the hash check")
            hashes.append(match)
            results.append(result)
            done += result.bytes
        return results, hashes

    def _run_step(self, plan: Plan, i: int, done: int) -> tuple[Plan, StepResult]:
        """Step `i` to its end; on a port another process took meanwhile, again on another
        (the plan then changes: it is returned with the result)."""
        for attempt in range(PORT_ATTEMPTS):
            runner = StepRunner(plan, plan.steps[i], i, self.src, self.dst, self.emit, self.t0,
                                self._cancel, done + plan.resumed_from)
            self._runner = runner
            try:
                return plan, runner.run()
            except PortInUseError:
                if attempt == PORT_ATTEMPTS - 1 or self._decided is None \
                        or not self.port_movable:
                    raise
                plan = self._on_another_port(plan)
            finally:
                self._runner = None
                self._received = max(self._received, runner.receive.total)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _finish_sent(self, plan: Plan, results: list[StepResult], hashes: list[bool | None],
                     diagnoser: Diagnoser) -> Summary:
        """After the streams: guids compared, readonly=on, the bookmark; the summary."""
        assert self.dst_caps is not None
        src_guid, dst_guid = (0, 0) if self.tree else verify_guids(
            self.src, self.dst, self.dst_caps, plan, self._src_sets, self.emit,
            readonly=plan.options.readonly)
        if not self.tree:  # a tree checks its datasets' properties by value
            check_received_properties(self.src, self.dst, plan, self._refused.said(),
                                      self._src_sets)
        extra: dict[str, object] = {}
        if plan.resume_token:
            extra["resumed_from"] = plan.resumed_from
        if plan.bookmark:
            extra.update(bookmark(self.src, self.src_caps, plan, self.emit))
        return summary_of(plan, results, hashes, (src_guid, dst_guid),
                          {"verdict": diagnoser.finish().to_json(), **extra})



def dst_state(dst: Host, dst_caps: zfs.Capabilities | None, plan: Plan) -> tuple[bool, set[str]]:
    """Whether the destination dataset exists, and its snapshots (one round trip)."""
    assert dst_caps is not None
    ds = zfs.dataset_info(dst, dst_caps, plan.destination_dataset)
    return ds is not None, {s.name for s in ds.snapshots} if ds else set()


def partial_receive(src: Host, dst: Host, destination: str, *,
                    src_caps: zfs.Capabilities | None = None,
                    dst_caps: zfs.Capabilities | None = None) -> zfs.ResumeInfo | None:
    """The interrupted receive into `destination` on `dst`, decoded on `src`; None if none.

    For the GUI's destination page: offer Resume (Options(resume=True)) or Discard
    (`discard_partial`). Raises ZmigrateError if the token cannot be decoded on `src`.
    """
    dst_caps = dst_caps or zfs.probe(dst)
    token = zfs.partial_receive(dst, dst_caps, destination)
    if token is None:
        return None
    return zfs.resume_info(src, token)


def discard_partial(dst: Host, destination: str, *,
                    dst_caps: zfs.Capabilities | None = None) -> None:
    """Drop the interrupted receive into `destination` on `dst` (`zfs receive -A`)."""
    dst_caps = dst_caps or zfs.probe(dst)
    zfs.discard_partial(dst, cmdline.dataset(destination), dst_caps.user if not dst_caps.root
                        else None)
