"""A tree's preparation, read then decided (docs/architecture.md, "A job's preparation"):
what the read step read (`TreeReading`, `TreeJob._read` then `read_after_trees`) and the
decide step on it alone
(`decide_tree`): the ends exist, the snapshot's name, each dataset's fate (`plan_tree`), where
the copy lands. Each dataset's own plan is its job's (dataset_job.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ... import cmdline, zfs
from ...destination import pool_features
from ...hosts import Host
from ...job import Known
from ...plain_words import first_few
from ...plan import sends_raw
from ...transports import Transport, private
from ..planning.plan import (
    TreePlan,
    TreeRequest,
    held,
    plan_tree,
    unchanged_candidates,
    unused_snapshot_name,
)
from ..planning.room import room_for
from ..planning.unchanged import measures_empty, with_written, written_after_sync
from .grants import TreeGrants, check_grants, read_grants
from .placement import Placement, check_ends, check_placement, read_placement


@dataclass(frozen=True, slots=True)
class TreeReading:
    """What a tree's read step read: both trees and the rest (`known`), the copy's datasets
    (`dst_sets`), `written` read again after a pool sync, where the copy lands (`placed`),
    a delegated login's grants (`grants`, grants.py)."""

    known: Known
    dst_sets: list[zfs.Dataset]
    written: dict[str, int]
    placed: Placement
    grants: TreeGrants | None = None


def read_after_trees(src: Host, dst: Host, caps: tuple[zfs.Capabilities, zfs.Capabilities],
                     request: TreeRequest, known: Known) -> TreeReading:
    """The read step's rest, once both trees are in (`known`): what the inventory calls
    unchanged read again after a pool sync, where the copy lands, a delegated login's
    grants."""
    dst_sets = [d for d in known.dst_sets if cmdline.within(d.name, request.destination)]
    written = written_after_sync(src, request.root,
                                 unchanged_candidates(request, known.src_sets, dst_sets))
    placed = read_placement(src, dst, caps[1], request, known.src_sets, known.dst_sets)
    grants = read_grants(src, dst, caps, request, known.dst_sets)
    if grants is not None and grants.dst is not None:
        known = replace(known, carried=grants.carried)  # each dataset's job reads none again
    return TreeReading(known, dst_sets, written, placed, grants)


@dataclass(frozen=True, slots=True)
class TreeDecision:
    """The tree decided: its plan, the run's snapshot name, and how to plan it again on other
    source datasets (`planned`: after a zfs-fuse catch-up measured what changed)."""

    plan: TreePlan
    snapshot: str
    planned: Callable[[list[zfs.Dataset]], TreePlan]


def decide_tree(src: Host, dst: Host, request: TreeRequest, reading: TreeReading,
                caps: tuple[zfs.Capabilities, zfs.Capabilities], snapshot: str) -> TreeDecision:
    """The decide step, on what the read step read (nothing is read here)."""
    known, (src_caps, dst_caps) = reading.known, caps
    src_sets, dst_sets = list(known.src_sets), reading.dst_sets
    check_ends(src, dst, request, src_sets, dst_sets, known.dst_sets)
    if request.snapshot is None:
        snapshot = unused_snapshot_name(snapshot, src_sets)
    opts = request.options
    raw_streams = (src_caps.raw_send and dst_caps.raw_send and opts.raw is not False
                   and not opts.decrypt and not opts.replicate)

    def planned(src_sets: list[zfs.Dataset]) -> TreePlan:
        return plan_tree(src, dst, request, src_sets, dst_sets, snapshot=snapshot,
                         unmounted=dst_caps.receive_unmounted, raw_streams=raw_streams,
                         resumable=dst_caps.resumable, tools=(src_caps.tools, dst_caps.tools),
                         held_back=held(request, dst_caps, dst.sudo))

    # `written` as read after the pool synced: one written to after all is sent.
    plan = planned(with_written(src_sets, reading.written))
    if measures_empty(src_caps, request, plan, known.src_sets):
        plan = replace(plan, measures_empty=True)
    plan = replace(plan, room=room_for(plan.entries, src_sets, known.dst_sets,
                                       request.destination, opts.exclude_properties),
                   cleartext=private.cleartext_why(opts.transport, Transport(plan.transport),
                                                   [(src.label, src_caps),
                                                    (dst.label, dst_caps)]))
    check_placement(plan, reading.placed, dst.label)
    check_grants(plan, request, dst_caps, reading.grants, (src.label, dst.label), src_sets)
    by_name = {d.name: d for d in src_sets}
    raw = [e.source for e in plan.to_send
           if e.source in by_name and sends_raw(by_name[e.source], opts)]
    if raw:
        pool_features.refuse_encrypted(*known.features, request.destination.split("/")[0],
                                       dst.label, first_few(raw) + " are")
    return TreeDecision(plan, snapshot, planned)
