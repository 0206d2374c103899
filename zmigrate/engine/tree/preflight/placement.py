"""A tree's checks on the destination before it runs: both ends there, and where each new
dataset would mount free."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from ... import cmdline, zfs
from ...destination import Emptiness, mounts, refusal
from ...errors import PreflightError, PreflightReason
from ...hosts import Host
from ...job.preflight import destination_emptiness
from ...plain_words import first_few
from ..planning.plan import TreePlan, TreeRequest, destination_name


def check_ends(src: Host, dst: Host, request: TreeRequest, src_sets: Sequence[zfs.Dataset],
               dst_sets: Sequence[zfs.Dataset], all_dst: Sequence[zfs.Dataset]) -> None:
    """The tree exists on the source, and the copy's parent on the destination (unless the
    copy is there already: `dst_sets` are the copy's, `all_dst` all that was read)."""
    if not src_sets:
        raise PreflightError(f"{request.root} does not exist", host=src.label,
                             fix=f"run `zmigrate list {src.label}` to see what there is",
                             reason=PreflightReason.NO_SOURCE,
                             figures={"dataset": request.root})
    parent = posixpath.dirname(request.destination)
    if parent and not dst_sets and not any(d.name == parent for d in all_dst):
        raise PreflightError(f"the destination's parent {parent} does not exist",
                             host=dst.label,
                             fix=f"create it first (zfs create -p {parent}) or pick another",
                             reason=PreflightReason.NO_PARENT, figures={"parent": parent})


@dataclass(frozen=True, slots=True)
class Placement:
    """What the tree's read step found of where the copy lands: how the existing root without
    snapshots it may go into was found (`into`), where each new file system would mount
    (destination -> path, `paths`; only the root's with `only_root`) and which of those paths
    are folders in use, and how (`busy`: mounts.folders_in_use)."""

    into: Emptiness | None = None
    paths: dict[str, str] = field(default_factory=dict)
    busy: dict[str, str] = field(default_factory=dict)
    only_root: bool = False
    # destination -> the source dataset whose own mountpoint (set on it, sent with -p) decides
    # where it mounts: its own, or inherited from it
    carried: dict[str, str] = field(default_factory=dict)


def read_placement(src: Host, dst: Host, dst_caps: zfs.Capabilities, request: TreeRequest,
                   src_sets: Sequence[zfs.Dataset], all_dst: Sequence[zfs.Dataset]) -> Placement:
    """The read half of the placement check, before the plan: the existing root's content
    (destination/emptiness.py), and where this zfs would mount each dataset new on the
    destination (all of them; only the root's without receive -o under a mount root)."""
    if not any(d.name == request.root for d in src_sets):
        return Placement()  # nothing to place: the decide step refuses it
    target = next((d for d in all_dst if d.name == request.destination), None)
    into = destination_emptiness(dst, target, all_dst, dst_caps.dialect)
    mount_root = request.mount_root
    if mount_root is None and not dst_caps.receive_unmounted:
        only_root = False
    elif mount_root is not None and not dst_caps.receive_properties:
        # Without receive -o the copy's root lands where its own mountpoint says (or its
        # new parent's) before it is set to the chosen root; its children follow it there.
        only_root = True
    else:
        return Placement(into)
    on_dst = {d.name for d in all_dst if d.snapshots or not d.resume_token}
    new = [d.name for d in src_sets if d.type == "filesystem" and cmdline.within(d.name,
           request.root) and (not only_root or d.name == request.root)
           and destination_name(d.name, request.root, request.destination) not in on_dst]
    # A root received into an existing dataset (a new pool's root) stays where that one
    # mounts, unless its own mountpoint is set on it: the stream (-p) carries that.
    into_root = target is not None and not target.snapshots and not target.resume_token
    if not new and not into_root:
        return Placement(into, only_root=only_root)
    local = {name: props["mountpoint"] for name, props in
             zfs.local_properties(src, request.root, "mountpoint").items()
             if "mountpoint" in props}
    sent = [*new, *([request.root] if into_root and request.root in local else [])]
    if not sent:
        return Placement(into, only_root=only_root)
    own = {n: local[n] for n in sent if n in local}  # the mountpoints the streams carry
    pairs = [(n, destination_name(n, request.root, request.destination)) for n in sent]
    paths = mounts.received_paths(pairs, own, request.destination,
                                  mounts.parent_mountpoint(dst, request.destination))
    carried: dict[str, str] = {}
    for n, d in pairs:
        owners = [a for a in own if cmdline.within(n, a)]
        if d in paths and owners:
            carried[d] = max(owners, key=len)  # the nearest: its own, or whence it inherits
    busy = mounts.folders_in_use(dst, list(paths.values()))
    return Placement(into, paths, busy, only_root, carried)


def check_placement(plan: TreePlan, placed: Placement, dst_label: str) -> None:
    """Where the copy lands, decided on what `read_placement` read: into an existing dataset
    only if empty, and no dataset mounting over a directory in use where this zfs mounts
    what it receives."""
    root = next((e for e in plan.entries if e.into), None)
    if root is not None and placed.into is not None and not placed.into.empty:
        raise refusal(root.destination, placed.into, dst_label, root.source, force_helps=False)
    # A root received into an existing dataset is in `paths` only where its own mountpoint,
    # set on it, travels with it.
    new = [e for e in plan.to_send if e.action == "full" and e.type == "filesystem"
           and (not placed.only_root or e.source == plan.root)]
    clash = [e.destination for e in new
             if e.destination in placed.paths and placed.paths[e.destination] in placed.busy]
    if not clash:
        return
    owner = next((placed.carried[d] for d in clash if d in placed.carried), None)
    if owner is not None:
        fix = (f"{owner}'s own mountpoint is set on it and travels with the copy, which this "
               "zfs mounts as it arrives (it cannot receive unmounted: no zfs receive -u): "
               "send it to a pool on another host, or to one whose zfs receives unmounted "
               "(OpenZFS)")
        way = "carried"
    elif placed.only_root:
        fix = ("this zfs cannot set the mountpoint as it receives (no zfs receive -o), "
               "so the copy's root mounts there before it moves under the mount root: "
               "empty that directory on the destination, or leave the mount root out")
        way = "tree_root"
    else:
        fix = ("pick a destination whose mountpoint is free, or --mount-root PATH to "
               "mount the copy under a directory of your choice")
        way = "tree"
    raise PreflightError(
        "the copy would mount over directories the destination already uses: "
        + first_few([f"{d} would mount on {placed.paths[d]} "
                     f"({placed.busy[placed.paths[d]]})" for d in clash]),
        host=dst_label, fix=fix, reason=PreflightReason.MOUNT_COLLISION,
        figures={"way": way, **({"dataset": owner} if owner is not None else {})},
    )
