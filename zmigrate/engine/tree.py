"""Move a dataset tree: snapshot it, copy it dataset by dataset, catch up, cut over.

A `TreeJob` reads both trees once (one `zfs get -r` per host), plans the run with
`tree_plan.plan_tree` (each dataset's fate: in full with its history, the delta from the newest
common snapshot, skipped, or carried in an encrypted subtree's raw stream), and then runs one
`Job` per stream on the same two SSH control sessions, parents before children. Each dataset is
its own resumable step: an interruption in dataset k of n leaves 1..k-1 complete, and the next
run skips them.

Events: the inner jobs' events pass through (samples, stages, logs, verdicts), their Progress is
turned into whole-tree progress, and `DatasetState` says when a dataset changes state.
"""

from __future__ import annotations

import posixpath
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from . import shell, transports, zfs
from .diagnosis import Verdict
from .errors import CancelledError, InvalidNameError, PreflightError, PreflightReason, ZmigrateError
from .events import (
    DatasetState,
    Failed,
    Finished,
    Observer,
    Progress,
    Sample,
    StageChanged,
    Stalled,
    Summary,
)
from .hosts import Host
from .job import Job, Known, Request, both, default_transport, read_settled, within
from .pipeline import free_port
from .plan import Plan
from .tree_plan import (
    SMALL,
    SNAPSHOT_PREFIX,
    TreeEntry,
    TreePlan,
    TreePlanReady,
    TreeRequest,
    destination_name,
    pick,
    plan_tree,
    snapshot_name,
)
from .tree_schedule import Totals, TreeProgress, carried, schedule
from .units import format_size
from .work import Work

# States of a dataset in a tree, in the order they happen. "received": its stream arrived; the
# tree then checks every received dataset at once (one read per host) and says "verified".
WAITING, SENDING, RECEIVED, VERIFIED, SKIPPED, FAILED = (
    "waiting", "sending", "received", "verified", "skipped", "failed")



class TreeJob(Work):
    """A tree transfer between two connected hosts (the caller owns and closes them).

    Driven like a `Job`: `subscribe`, `start`/`run`, `cancel` from any thread, `wait`,
    `summary`/`error` at the end. `prepare()` alone gives the plan (for --dry-run and review).
    """

    def __init__(self, src: Host, dst: Host, request: TreeRequest,
                 observer: Observer | None = None) -> None:
        shell.dataset(request.root)
        shell.dataset(request.destination)
        if request.snapshot is not None:
            shell.snap_part(request.snapshot)
        for ex in request.excludes:
            shell.dataset(ex)
        if request.mount_root is not None and not posixpath.isabs(request.mount_root):
            raise InvalidNameError(f"--mount-root {request.mount_root} is not an absolute path")
        super().__init__(observer)
        self.src, self.dst, self.request = src, dst, request
        self.src_caps: zfs.Capabilities | None = None
        self.dst_caps: zfs.Capabilities | None = None
        self.plan: TreePlan | None = None
        self.results: dict[str, str] = {}  # source dataset -> final state
        self.readonly_since: float | None = None
        self._jobs: set[Job] = set()
        self._lock = threading.Lock()  # guards _jobs and _ports (--parallel)
        self._snapshot = request.snapshot or snapshot_name()
        self._known: Known | None = None  # both trees etc., read once for every dataset's job
        self._ports: set[int] = set()  # ports handed to this run's listeners
        self._received: dict[str, tuple[int, Summary]] = {}  # source -> (index, job summary)
        self._guids: dict[str, int] = {}  # destination dataset -> its verified snapshot's guid
        # Copies that became encryption roots of their own (each sent as its own raw stream),
        # with the copy whose key they use on the source: `zfs change-key -i` re-joins them.
        self.own_key_roots: dict[str, str] = {}

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
    def prepare(self) -> TreePlan:
        """Probe both hosts, read both trees (one `zfs get -r` each) and plan; changes nothing."""
        req = self.request
        self.emit(StageChanged("preflight", "probing hosts"))
        if self.dst is self.src:
            src_caps = dst_caps = zfs.probe(self.src)
        else:
            src_caps, dst_caps = both(lambda: zfs.probe(self.src), lambda: zfs.probe(self.dst))
        self.src_caps, self.dst_caps = src_caps, dst_caps
        zfs.require_zfs(self.src, src_caps)
        zfs.require_zfs(self.dst, dst_caps)
        self.emit(StageChanged("preflight", "reading both trees"))
        known = self._read_known()
        src_sets = list(known.src_sets)
        dst_sets = [d for d in known.dst_sets if within(d.name, req.destination)]
        if not src_sets:
            raise PreflightError(f"{req.root} does not exist", host=self.src.label,
                                 fix=f"run `zmigrate list {self.src.label}` to see what there is",
                                 reason=PreflightReason.NO_SOURCE)
        parent = posixpath.dirname(req.destination)
        if parent and not dst_sets and not any(d.name == parent for d in known.dst_sets):
            raise PreflightError(f"the destination's parent {parent} does not exist",
                                 host=self.dst.label,
                                 fix=f"create it first (zfs create -p {parent}) or pick another",
                                 reason=PreflightReason.NO_PARENT)
        unmounted = dst_caps.receive_unmounted
        opts = req.options
        raw_streams = (src_caps.raw_send and dst_caps.raw_send and opts.raw is not False
                       and not opts.decrypt and not opts.replicate)
        plan = plan_tree(self.src, self.dst, req, src_sets, dst_sets,
                         snapshot=self._snapshot, unmounted=unmounted, raw_streams=raw_streams)
        if req.mount_root is None and not unmounted:
            self._check_mountpoints(plan, src_sets)
        elif req.mount_root is not None and not dst_caps.receive_properties:
            # Without receive -o the copy's root lands where its own mountpoint says (or its
            # new parent's) before it is set to the chosen root; its children follow it there.
            self._check_mountpoints(plan, src_sets, only_root=True)
        self.plan = plan
        self._known = known
        return plan

    def _read_known(self) -> Known:
        """Both trees, the destination's parent, its ports, the tcp addresses and the pool's
        resume feature: one read each, all at once, for every dataset's job."""
        assert self.src_caps is not None and self.dst_caps is not None
        return read_settled(self.src, self.dst, self.src_caps, self.dst_caps, self.request.root,
                            self.request.destination, self.request.options, self.emit)

    def _check_mountpoints(self, plan: TreePlan, src_sets: Sequence[zfs.Dataset],
                           only_root: bool = False) -> None:
        """Where this zfs mounts each new dataset (or just the root) on receive: refuse a
        directory in use."""
        assert self.dst_caps is not None
        new = [e for e in plan.to_send if e.action == "full" and e.type == "filesystem"
               and (not only_root or e.source == plan.root)]
        if not new:
            return
        parent = posixpath.dirname(plan.destination) or plan.destination
        r = self.dst.execute(self.dst.privileged(
            ["zfs", "get", "-Hp", "-o", "value", "mountpoint", shell.dataset(parent)]))
        base = r.stdout.strip() if r.ok else ""
        if not base.startswith("/"):
            return  # the parent is not mounted (none, legacy): nothing new mounts either
        local = zfs.local_properties(self.src, plan.root, "mountpoint")
        paths: dict[str, str] = {}
        for e in new:
            mp = local.get(e.source, {}).get("mountpoint")
            if mp is None:
                mp = posixpath.join(base, posixpath.relpath(e.destination, parent))
            if mp.startswith("/"):
                paths[e.destination] = mp
        busy = zfs.busy_directories(self.dst, list(paths.values()))
        clash = [f"{ds} would mount on {mp}" for ds, mp in paths.items() if mp in busy]
        if clash:
            raise PreflightError(
                "the copy would mount over directories the destination already uses: "
                + "; ".join(clash),
                host=self.dst.label,
                fix=("this zfs cannot set the mountpoint as it receives (no zfs receive -o), "
                     "so the copy's root mounts there before it moves under the mount root: "
                     "empty that directory on the destination, or leave the mount root out"
                     if only_root else
                     "pick a destination whose mountpoint is free, or --mount-root PATH to "
                     "mount the copy under a directory of your choice"),
                reason=PreflightReason.MOUNT_COLLISION,
            )

    def dataset_plan(self, entry: TreeEntry) -> Plan:
        """The plan (and so the exact commands) one dataset's job would run."""
        assert self.plan is not None
        plan = self.plan
        job = self._job_for(plan, entry)
        job.parent_pending = entry.source != plan.root
        if plan.snapshot_command and job.known is not None:
            # Planned as if the snapshot to be taken first existed (it will, as the newest):
            # its commands name snapshots, never guids, so they are the ones that will run.
            job.known = replace(job.known, src_sets=tuple(
                _with_new_snapshot(d, plan.snapshot) for d in job.known.src_sets))
        return job.prepare()

    # -- running ------------------------------------------------------------------------------
    def run(self) -> Summary:
        return self._finish(self._run)

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise CancelledError("the transfer was cancelled")

    def _run(self) -> Summary:
        prepared_before = self.plan is not None  # e.g. for Review, maybe long ago
        plan = self.plan or self.prepare()
        self.emit(TreePlanReady(plan))
        for name in plan.vanished:
            self.emit(StageChanged("preflight", f"{name} is gone from the source: kept on the "
                                   "destination, not destroyed"))
        n = len(plan.entries)
        for i, e in enumerate(plan.entries):
            self.emit(DatasetState(e.source, e.destination, SKIPPED if e.action == "skip"
                                   else WAITING, i, n, e.size, detail=e.reason))
        self._check_cancel()
        if plan.readonly_command:
            self.emit(StageChanged("preflight", "final sync: setting readonly=on on the source"))
            self.src.run(plan.readonly_command, timeout=300).check("setting readonly=on")
            self.readonly_since = time.time()
        if plan.snapshot_command:
            self.emit(StageChanged("preflight", f"taking the snapshot @{plan.snapshot}"))
            self.src.run(plan.snapshot_command, timeout=300).check("taking the snapshot")
        if plan.snapshot_command or prepared_before:
            # Once for every dataset (the snapshot just taken included), not once per dataset.
            self.emit(StageChanged("preflight", "reading both trees"))
            self._known = self._read_known()
        totals = Totals()
        t0 = time.monotonic()
        for e in plan.entries:
            if e.action == "skip":
                self.results[e.source] = SKIPPED
        try:
            first_error = self._send_all(plan, totals, t0)
        except ZmigrateError:
            self._settle(plan)
            raise
        if first_error is not None:
            self._settle(plan)
            raise first_error
        self._finish_received(plan)
        elapsed = time.monotonic() - t0
        extra: dict[str, object] = {
            "datasets": dict(self.results),
            "vanished": list(plan.vanished),
            "snapshot": plan.snapshot,
        }
        if self.readonly_since is not None:
            extra["source_readonly_since"] = self.readonly_since
        if self.own_key_roots:
            extra["own_encryption_roots"] = dict(self.own_key_roots)
        root_guid = self._root_guids
        return Summary(
            bytes=totals.done, seconds=elapsed,
            rate=totals.done / totals.seconds if totals.seconds > 0 else 0.0,
            receive_empty_count=totals.empties or None,
            source_guid=root_guid[0], destination_guid=root_guid[1],
            hash_match=None, snapshots_sent=(plan.snapshot,), extra=extra,
        )

    def _send_all(self, plan: TreePlan, totals: Totals, t0: float) -> ZmigrateError | None:
        """Send every dataset to send; returns the first failure of a dataset that others do
        not depend on (the rest still went), raises when nothing more can go."""
        n = len(plan.entries)
        first_error: ZmigrateError | None = None
        progress = TreeProgress(plan, totals, t0)
        outcomes = schedule(plan, self.request.parallel,
                            lambda i, e: self._send_one(plan, i, e, progress), self._cancel)
        for i, e, outcome in outcomes:
            try:
                if isinstance(outcome, BaseException):
                    raise outcome
                summary = outcome
            except CancelledError:
                for k, x in [(i, e), *carried(plan, e)]:
                    self.results[x.source] = FAILED
                    self.emit(DatasetState(x.source, x.destination, FAILED, k, n, x.size,
                                           detail="cancelled"))
                raise
            except ZmigrateError as exc:
                for k, x in [(i, e), *carried(plan, e)]:
                    self.results[x.source] = FAILED
                    self.emit(DatasetState(x.source, x.destination, FAILED, k, n, x.size,
                                           detail=str(exc)))
                if first_error is None:
                    first_error = exc
                if self._cancel.is_set():
                    raise
                # A child cannot be received under a parent that failed to arrive.
                if any(x.source.startswith(e.source + "/") and x.carried_by is None
                       for x in plan.entries):
                    raise
                continue
            self.results[e.source] = RECEIVED
            self._received[e.source] = (i, summary)
            progress.finished(e.source, summary)
            self.emit(DatasetState(e.source, e.destination, RECEIVED, i, n, e.size,
                                   bytes=summary.bytes, rate=summary.rate,
                                   detail="checked with the others at the end"))
            for k, x in carried(plan, e):
                # Its bytes are counted in the stream of the dataset that carried it.
                self.results[x.source] = RECEIVED
                self._received[x.source] = (k, replace(summary, bytes=0, rate=0.0))
                self.emit(DatasetState(x.source, x.destination, RECEIVED, k, n, x.size,
                                       detail=f"arrived in the stream of {e.source}"))
        self._check_cancel()
        return first_error

    def _settle(self, plan: TreePlan) -> None:
        """After an interruption: what did arrive is still checked (and marked verified)."""
        try:
            self._finish_received(plan)
        except ZmigrateError as exc:
            self.emit(StageChanged("verifying", str(exc)))

    def _job_for(self, plan: TreePlan, e: TreeEntry, t0: float | None = None) -> Job:
        req = self.request
        assert self.dst_caps is not None
        # Unmounted where this zfs can (-u); else mounted where inherited, checked free.
        mount = req.mount_root is not None or not self.dst_caps.receive_unmounted
        options = replace(req.options, history=True, send_properties=True, resume=e.resume,
                          mount=mount, replicate=req.options.replicate or e.replicate)
        if req.mount_root is not None and e.source == plan.root \
                and self.dst_caps.receive_properties:
            # Children inherit from the root; a child with a mountpoint of its own keeps it.
            options = replace(options, properties=(*options.properties,
                                                   ("mountpoint", req.mount_root)))
        known = self._known
        if known is not None and options.port is None \
                and transports.carrier(default_transport(self.src, self.dst, options)).listens:
            # A port of its own for each listener, also with several datasets in flight.
            with self._lock:
                port = free_port(self.dst, used=set(known.ports) | self._ports)
                self._ports.add(port)
            options = replace(options, port=port)
        job = Job(self.src, self.dst,
                  Request(f"{e.source}@{plan.snapshot}", e.destination, options),
                  src_caps=self.src_caps, dst_caps=self.dst_caps, t0=t0,
                  known=known, deferred=True)
        job.port_movable = req.options.port is None
        return job

    def _send_one(self, plan: TreePlan, i: int, e: TreeEntry,
                  progress: TreeProgress) -> Summary:
        job = self._job_for(plan, e, progress.t0)
        n = len(plan.entries)

        def relay(event: object) -> None:
            if isinstance(event, Progress):
                self.emit(progress.of(e.source, i, event))
            elif isinstance(event, (Finished, Failed)):
                return  # the tree reports its own end
            elif isinstance(event, (Sample, StageChanged, Stalled, Verdict)):
                self.emit(replace(event, dataset=e.source))
            else:
                self.emit(event)

        job.parent_pending = e.source != plan.root  # it arrives earlier in this run
        job.subscribe(relay)
        with self._lock:
            self._jobs.add(job)
        if self._cancel.is_set():
            job.cancel()
        for k, x in [(i, e), *carried(plan, e)]:
            self.emit(DatasetState(x.source, x.destination, SENDING, k, n, x.size,
                                   detail=x.reason))
        try:
            summary = job.run()
        finally:
            with self._lock:
                self._jobs.discard(job)
            progress.stopped(e.source)
        if e.source == plan.root and e.action == "full":
            self._place_root(plan)
        return summary

    def _place_root(self, plan: TreePlan) -> None:
        """Where this zfs could not receive unmounted (-u) or set the mountpoint (-o), set the
        copy's root mountpoint now, before any child arrives: `none` (children inherit it and
        never mount, so no mountpoint directory modifies a parent) or the chosen root."""
        assert self.dst_caps is not None
        req = self.request
        if req.mount_root is None and self.dst_caps.receive_unmounted:
            return
        if req.mount_root is not None and self.dst_caps.receive_properties:
            return
        value = req.mount_root or "none"
        self.emit(StageChanged("verifying", f"setting mountpoint={value} on {plan.destination}"))
        self.dst.execute(self.dst.privileged(
            ["zfs", "set", f"mountpoint={value}", shell.dataset(plan.destination)]),
            timeout=120).check(f"setting mountpoint={value}")

    def _finish_received(self, plan: TreePlan) -> None:
        """The received datasets, all at once: readonly=on where asked, then the check that
        marks each one verified (or failed, saying what differs)."""
        received = [e for e in plan.entries if e.source in self._received]
        if self.request.options.readonly and received:
            self.emit(StageChanged("verifying", f"setting readonly=on on {len(received)} "
                                   "dataset(s)"))
            line = " && ".join(shell.join(self.dst.privileged(
                ["zfs", "set", "readonly=on", shell.dataset(e.destination)])) for e in received)
            self.dst.run(line, timeout=60 + 10 * len(received)).check("setting readonly=on")
        self.emit(StageChanged("verifying", "checking every dataset on the destination"))
        problems = self._verify(plan)
        n = len(plan.entries)
        for e in received:
            i, summary = self._received[e.source]
            bad = problems.get(e.destination)
            state = FAILED if bad else VERIFIED
            self.results[e.source] = state
            self.emit(DatasetState(e.source, e.destination, state, i, n, e.size,
                                   bytes=summary.bytes, rate=summary.rate,
                                   detail=bad or f"guid {self._guids.get(e.destination, 0)}"))
        if problems:
            raise ZmigrateError("the copy does not match the source: "
                                + "; ".join(f"{d}: {p}" for d, p in problems.items()),
                                host=self.dst.label,
                                fix="run the same command again to send what is missing")

    def _verify(self, plan: TreePlan) -> dict[str, str]:
        """Every sent dataset: its snapshot's guid equal on both sides, the snapshots that were
        to arrive present, and the locally set properties equal (one read per host).
        Returns what differs, by destination dataset."""
        assert self.src_caps is not None and self.dst_caps is not None
        src_caps, dst_caps = self.src_caps, self.dst_caps
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix="zmigrate-verify") as pool:
            src_f = pool.submit(zfs.inventory, self.src, src_caps, plan.root)
            dst_f = pool.submit(zfs.inventory, self.dst, dst_caps, plan.destination)
            src_props_f = pool.submit(zfs.local_properties, self.src, plan.root)
            dst_props_f = pool.submit(lambda: zfs.local_properties(
                self.dst, plan.destination, sources="local,received"))
            src_by = {d.name: d for d in src_f.result()}
            dst_by = {d.name: d for d in dst_f.result()}
            src_props, dst_props = src_props_f.result(), dst_props_f.result()
        problems: dict[str, str] = {}
        guids = (0, 0)
        for e in plan.entries:
            s, d = src_by.get(e.source), dst_by.get(e.destination)
            snap = s.snapshot(plan.snapshot) if s else None
            if snap is None:
                continue  # skipped: no such snapshot on the source
            copy = d.snapshot(plan.snapshot) if d else None
            if copy is None or copy.guid != snap.guid:
                problems[e.destination] = f"@{plan.snapshot} is missing or differs"
                continue
            self._guids[e.destination] = copy.guid
            assert s is not None and d is not None
            key_from = _lost_key_parent(plan, s, d)
            if key_from is not None:
                self.own_key_roots[e.destination] = key_from
            if e.source == plan.root:
                guids = (snap.guid, copy.guid)
            missing = [x.short for x in s.snapshots if x.createtxg <= snap.createtxg
                       and d.snapshot(x.short) is None]
            if e.action == "full" and missing:
                problems[e.destination] = "lacks " + ", ".join("@" + m for m in missing)
                continue
            want = {k: v for k, v in src_props.get(e.source, {}).items()
                    if k not in ("readonly", "mountpoint")}
            got = dst_props.get(e.destination, {})
            differ = [k for k, v in want.items() if got.get(k) != v]
            if differ:
                problems[e.destination] = "properties differ: " + ", ".join(differ)
        self._root_guids = guids
        return problems

    _root_guids: tuple[int, int] = (0, 0)


def _lost_key_parent(plan: TreePlan, s: zfs.Dataset, d: zfs.Dataset) -> str | None:
    """The copy whose key `d` should use, when `d` became an encryption root of its own
    while the source `s` uses an ancestor's key that was copied too; else None."""
    root = s.encryption_root
    if root is None or root == s.name or not within(root, plan.root):
        return None
    if d.encryption_root != d.name:
        return None
    return destination_name(root, plan.root, plan.destination)


def _with_new_snapshot(ds: zfs.Dataset, short: str) -> zfs.Dataset:
    """`ds` as it will be once `ds@short` is taken (newest, guid not yet known: 0)."""
    if ds.snapshot(short) is not None:
        return ds
    txg = max((x.createtxg for x in ds.snapshots), default=0) + 1
    snap = zfs.Snapshot(f"{ds.name}@{short}", 0, int(time.time()), txg, 0, ds.referenced)
    return replace(ds, snapshots=[*ds.snapshots, snap])


def describe_summary(plan: TreePlan, summary: Summary) -> str:
    """The CLI's closing lines for a tree."""
    states: dict[str, str] = summary.extra.get("datasets", {})
    sent = sum(1 for s in states.values() if s == VERIFIED)
    skipped = sum(1 for s in states.values() if s == SKIPPED)
    text = (f"done: {sent} dataset(s) sent and verified, {skipped} already there; "
            f"{format_size(summary.bytes)} in {summary.seconds:.1f} s; the copy is "
            f"{plan.destination_host}:{plan.destination} at @{plan.snapshot}")
    since = summary.extra.get("source_readonly_since")
    if since is not None:
        text += ("\nfinal sync: the source has been read-only since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(float(since)))}, so the "
                 "copy is exactly the source at that snapshot (zfs set readonly=off to undo)")
    if plan.vanished:
        text += "\ngone from the source, kept on the destination: " + ", ".join(plan.vanished)
    text += own_roots_advice(summary.extra.get("own_encryption_roots", {}), "\n")
    return text


def own_roots_advice(own: dict[str, str], sep: str) -> str:
    """`own_roots_lines`, each after `sep` ("" for none)."""
    return "".join(sep + line for line in own_roots_lines(own))


def own_roots_lines(own: dict[str, str]) -> list[str]:
    """What to run so copies that became encryption roots of their own use their parent's key
    again, as on the source (needs the keys loaded, so zmigrate cannot do it for the user)."""
    if not own:
        return []
    return [f"encrypted: {len(own)} dataset(s) of the copy are encryption roots of their own "
            "(each arrived in its own raw stream) while on the source they use an ancestor's "
            "key. Once the keys are loaded (zfs load-key -r), re-join them:",
            *(f"  zfs change-key -i {shell.join([ds])}   # use {parent}'s key"
              for ds, parent in sorted(own.items()))]


# The plan's names too, so `engine.tree` stays the one import for a tree's callers.
__all__ = [
    "FAILED", "RECEIVED", "SENDING", "SKIPPED", "SMALL", "SNAPSHOT_PREFIX", "VERIFIED", "WAITING",
    "TreeEntry", "TreeJob", "TreePlan", "TreePlanReady", "TreeRequest", "describe_summary",
    "destination_name", "own_roots_advice", "own_roots_lines", "pick", "plan_tree", "snapshot_name",
]
