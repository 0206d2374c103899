"""One dataset of a tree as its own `Job`: the options the tree gives it, a port of its own."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import assert_never

from ... import transports, zfs
from ...events import (
    DatasetState,
    EndCpu,
    Event,
    Failed,
    Finished,
    LogLine,
    Observer,
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
from ...hosts import Host
from ...job import InTree, Job, Known, Request, default_transport
from ...job.step import free_port
from ...plan import Options
from ..planning.entry import SMALL, TreeEntry
from ..planning.plan import TreePlan, TreeRequest, destination_name, held
from .schedule import TreeProgress, stream_size, streams


class Ports:
    """The ports handed to this run's listeners: each its own, also with several in flight."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._taken: set[int] = set()

    def take(self, dst: Host, known: Known) -> int:
        with self._lock:
            port = free_port(dst, used=set(known.ports) | self._taken)
            self._taken.add(port)
        return port


SHARE_PROPERTIES = ("sharenfs", "sharesmb")


def dataset_options(request: TreeRequest, dst_caps: zfs.Capabilities, plan: TreePlan,
                    e: TreeEntry, *, sudo: bool = False) -> Options:
    """The tree's options as one dataset's job takes them (`sudo`: the destination's login
    runs zfs through sudo)."""
    # Unmounted where this zfs can (-u); else mounted where inherited, checked free.
    mount = request.mount_root is not None or not dst_caps.receive_unmounted
    options = replace(request.options, history=True, send_properties=True, resume=e.resume,
                      mount=mount, replicate=request.options.replicate or e.replicate)
    if stream_size(plan, e) < SMALL:
        # A small stream never fills more, and several run at once (schedule.auto_width
        # counts them at this size): a buffer mbuffer touches whole at start would not fit.
        options = replace(options, buffer_size=min(options.buffer_size, SMALL))
    if request.mount_root is not None and e.source == plan.root and dst_caps.receive_properties:
        # Children inherit from the root; a child with a mountpoint of its own keeps it.
        options = replace(options, properties=(*options.properties,
                                               ("mountpoint", request.mount_root)))
    if held(request, dst_caps, sudo) and e.type == "filesystem" \
            and e.action == "full" and not e.resume and not options.replicate:
        # Never mounted by itself before it goes live (plan.held). (A replication stream's
        # -o would reach its children as inherited, which canmount is not.)
        options = replace(options, properties=(*options.properties, ("canmount", "noauto")))
    if dst_caps.receive_properties:
        # Shared only once live (go-live sets them as on the source): a copy shared as it
        # arrives would export a half-copied dataset, or a path twice. What goes back to its
        # source leaves the source's canmount alone (the copy's own is `held`'s noauto).
        left_out = SHARE_PROPERTIES + (() if request.until_live else ("canmount",))
        options = replace(options, exclude_properties=(*options.exclude_properties,
                                                       *left_out))
    if e.origin is not None and not e.resume:
        # (A resumed clone's token already names its origin's copy.)
        options = replace(options, origin=e.origin)
        if dst_caps.receive_properties:
            # Name the origin's copy: a pool may hold another copy with the same guid.
            ds, _, snap = e.origin.partition("@")
            copy = destination_name(ds, request.root, request.destination) + "@" + snap
            options = replace(options, properties=(*options.properties, ("origin", copy)))
    return options


def dataset_job(src: Host, dst: Host, request: TreeRequest,
                caps: tuple[zfs.Capabilities, zfs.Capabilities], known: Known,
                ports: Ports, plan: TreePlan, e: TreeEntry, t0: float | None = None,
                shown: frozenset[tuple[str, str, str]] | None = None) -> Job:
    """The job that sends `e` at the tree's snapshot, on the tree's two sessions; it destroys
    nothing beyond `shown` (the keys of what the plan the user saw destroys; None: `plan`'s)."""
    options = dataset_options(request, caps[1], plan, e, sudo=dst.sudo)
    if options.port is None \
            and transports.carrier(default_transport(src, dst, options, caps)).listens:
        options = replace(options, port=ports.take(dst, known))
    tree = InTree(known, shown if shown is not None else frozenset(x.key for x in plan.destroys),
                  parent_pending=e.source != plan.root,  # it arrives earlier in this run
                  port_movable=request.options.port is None)
    return Job(src, dst, Request(f"{e.source}@{plan.snapshot}", e.destination, options),
               src_caps=caps[0], dst_caps=caps[1], t0=t0, tree=tree)


def expect_streams(src: Host, dst: Host, width: int, plan: TreePlan) -> None:
    """Sessions for the first datasets that go side by side, opened on both hosts while the
    tree is snapshotted and measured: each would wait for its own (0.1-0.3 s on loopback,
    more on a busy host) as it starts; and the next ones' while they run. At most 4 a host:
    sshd allows 10 by default."""
    count = len(streams(plan))
    if count > 1:
        first = min(width, count, 4)
        src.expect_pipelines(first)
        dst.expect_pipelines(first)


def with_new_snapshot(ds: zfs.Dataset, short: str) -> zfs.Dataset:
    """`ds` as it will be once `ds@short` is taken (newest, guid not yet known: 0)."""
    if ds.snapshot(short) is not None:
        return ds
    txg = max((x.createtxg for x in ds.snapshots), default=0) + 1
    snap = zfs.Snapshot(f"{ds.name}@{short}", 0, int(time.time()), txg, 0, ds.referenced)
    return replace(ds, snapshots=[*ds.snapshots, snap])


def as_if_snapshot_taken(known: Known, plan: TreePlan) -> Known:
    """Both trees as they will be once `plan`'s snapshot is taken: every source dataset but the
    unchanged ones (none is taken there) has it as its newest. Jobs plan by snapshot names,
    never guids, so the commands planned on this are the ones that will run."""
    left = {e.source for e in plan.unchanged}
    return replace(known, src_sets=tuple(
        d if d.name in left else with_new_snapshot(d, plan.snapshot) for d in known.src_sets))


def relay(emit: Observer, progress: TreeProgress, i: int, source: str) -> Observer:
    """What one dataset's job says, as the tree says it: its progress as the tree's, its
    samples, stages and verdicts named by the dataset, its end left to the tree."""
    def passed_on(event: Event) -> None:
        match event:
            case Progress():
                emit(progress.of(source, i, event))
            case Finished() | Failed():
                return  # the tree reports its own end
            case Sample() | StageChanged() | Stalled() | Verdict() | EndCpu() | Resent():
                emit(replace(event, dataset=source))
            case (PlanReady() | TreePlanReady() | LogLine() | DatasetState() | StageStarted()
                  | StageResult() | Wire() | Synced() | OutOfTouch()):
                emit(event)
            case _:
                assert_never(event)
    return passed_on


def known_ahead(known: Known, plan: TreePlan) -> Known:
    """What a dataset's job reads in `known` before the run: the run's snapshot (if it takes
    one) as taken."""
    return as_if_snapshot_taken(known, plan) if plan.snapshot_command else known
