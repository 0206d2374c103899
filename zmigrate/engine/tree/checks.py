"""A tree's checks on the destination: before (mountpoints free), while (the copy's root placed
before its children arrive) and after (every dataset compared with its source, one read a host).
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .. import cmdline, zfs
from ..destination import Emptiness, mounts, refusal
from ..destination.received_properties import RUN_OWN, reserved_fix
from ..errors import PreflightError, PreflightReason, ZmigrateError
from ..events import Observer, StageChanged
from ..hosts import Host
from ..job.preflight import destination_emptiness
from ..plain_words import first_few
from .entry import TreeEntry
from .plan import TreePlan, TreeRequest, destination_name


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
    are directories in use (`busy`)."""

    into: Emptiness | None = None
    paths: dict[str, str] = field(default_factory=dict)
    busy: frozenset[str] = frozenset()
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
    busy = zfs.busy_directories(dst, list(paths.values()))
    return Placement(into, paths, frozenset(busy), only_root, carried)


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
        + first_few([f"{d} would mount on {placed.paths[d]}" for d in clash]),
        host=dst_label, fix=fix, reason=PreflightReason.MOUNT_COLLISION,
        figures={"way": way, **({"dataset": owner} if owner is not None else {})},
    )


def root_mountpoint(dst_caps: zfs.Capabilities, mount_root: str | None) -> str | None:
    """Where this zfs could not receive unmounted (-u) or set the mountpoint (-o): the value to
    set on the copy's root before any child arrives, `none` (children inherit it and never
    mount, so no mountpoint directory modifies a parent) or the chosen root. None: nothing."""
    if mount_root is None and dst_caps.receive_unmounted:
        return None
    if mount_root is not None and dst_caps.receive_properties:
        return None
    return mount_root or "none"


def place_root(dst: Host, dst_caps: zfs.Capabilities, mount_root: str | None, destination: str,
               emit: Observer) -> None:
    """Set the copy's root mountpoint before any child arrives, where this zfs could not as
    it received (root_mountpoint says when and to what)."""
    value = root_mountpoint(dst_caps, mount_root)
    if value is None:
        return
    emit(StageChanged("verifying", f"setting mountpoint={value} on {destination}"))
    dst.execute(dst.privileged(["zfs", "set", f"mountpoint={value}", cmdline.dataset(destination)]),
                timeout=120).check(f"setting mountpoint={value}")


def hold_readonly(dst: Host, request_mount_root: str | None, readonly: bool, destination: str,
                  emit: Observer) -> None:
    """A copy mounted under --mount-root set readonly=on as soon as it arrives, before its
    children do: mounting and unmounting them in it writes to it (their mountpoint
    directories, access times), and the next catch-up's incremental would be refused as
    "destination modified" though nobody wrote there. readonly=on turns those writes away;
    the run's check sets it on the rest as before."""
    if request_mount_root is None or not readonly:
        return
    emit(StageChanged("verifying", f"setting readonly=on on {destination} as it arrived"))
    dst.execute(dst.privileged(["zfs", "set", "readonly=on", cmdline.dataset(destination)]),
                timeout=120).check("setting readonly=on")


@dataclass(slots=True)
class TreeCheck:
    """What the check after a tree's run found."""

    problems: dict[str, str] = field(default_factory=dict)  # destination -> what differs
    guids: dict[str, int] = field(default_factory=dict)  # destination -> its snapshot's guid
    root_guids: tuple[int, int] = (0, 0)  # the root's snapshot guid on source, destination
    # Copies that became encryption roots of their own, with the copy whose key they should use.
    own_key_roots: dict[str, str] = field(default_factory=dict)
    readonly: set[str] = field(default_factory=set)  # copies with readonly=on set already
    differ: dict[str, list[str]] = field(default_factory=dict)  # destination -> properties

    def raise_problems(self, host: str, refused: Mapping[tuple[str, str], str]) -> None:
        """What differs, as the run's error (nothing if all matched); `refused`: (property,
        dataset) -> why zfs receive said it left one out."""
        if not self.problems:
            return
        said = {(n, d): refused[(n, d)] for d, names in self.differ.items() for n in names
                if (n, d) in refused}
        why = {d: "; ".join(f"{n}: {r}" for (n, x), r in said.items() if x == d)
               for d in self.differ}
        raise ZmigrateError("the copy does not match the source: " + "; ".join(
            f"{d}: {p}" + (f" (zfs receive said {why[d]})" if why.get(d) else "")
            for d, p in self.problems.items()), host=host, fix=self._fix(said))

    def _fix(self, said: Mapping[tuple[str, str], str]) -> str:
        """A way out for each kind of problem: running again sends a snapshot that did not
        arrive; a property left out needs setting (or -x), the data being there."""
        ways = []
        if set(self.problems) - set(self.differ):
            ways.append("run the same command again to send what is missing")
        if self.differ:
            ways.append(reserved_fix(said) or "where properties differ, the data arrived "
                        "(snapshot guids equal) and is kept: set them there once the cause is "
                        "mended, or leave them out with -x NAME")
        return "; ".join(ways)


def _sent_only(plan: TreePlan) -> tuple[list[TreeEntry] | None, bool]:
    """(The entries a check reads when a catch-up left most datasets as they are, None: the
    whole trees (on zfs-fuse a recursive read of every property costs ~12 ms a dataset);
    whether each one's new snapshot is all there is to check: no full copy, which is checked
    for every snapshot it should hold)."""
    if not plan.unchanged:
        return None, False
    return ([e for e in plan.entries if not e.unchanged],
            not any(e.action == "full" for e in plan.entries))


class SourceSide:
    """The source's half of the check, read on threads of its own while the streams still
    flow (its tree, the run's snapshot included, and its locally set properties stay as they
    are meanwhile): after the streams only the destination is read."""

    def __init__(self, src: Host, src_caps: zfs.Capabilities, plan: TreePlan) -> None:
        pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-verify")
        sent, increments = _sent_only(plan)
        only = None if sent is None else [e.source for e in sent]
        if only is not None and increments:
            self._sets = pool.submit(zfs.inventory_named, src, src_caps, only, plan.snapshot)
        else:
            self._sets = pool.submit(zfs.inventory, src, src_caps, plan.root)
        self._props = pool.submit(lambda: zfs.local_properties(src, plan.root, only=only))
        pool.shutdown(wait=False)

    def result(self) -> tuple[dict[str, zfs.Dataset], dict[str, dict[str, str]]]:
        return {d.name: d for d in self._sets.result()}, self._props.result()


def verify_tree(src: Host, dst: Host, src_caps: zfs.Capabilities, dst_caps: zfs.Capabilities,
                plan: TreePlan, source: SourceSide | None = None,
                own: Collection[str] = ()) -> TreeCheck:
    """Every sent dataset: its snapshot's guid equal on both sides, the snapshots that were
    to arrive present, and the locally set properties equal (one read per host), but those
    the receive decides itself (`own`: Options.receive_sets)."""
    source = source or SourceSide(src, src_caps, plan)
    sent, increments = _sent_only(plan)
    only = None if sent is None else [e.destination for e in sent]
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="zmigrate-verify") as pool:
        if only is not None and increments:
            dst_f = pool.submit(zfs.inventory_named, dst, dst_caps, only, plan.snapshot)
        else:  # a full copy is checked for every snapshot it should hold
            dst_f = pool.submit(zfs.inventory, dst, dst_caps, plan.destination)
        dst_props_f = pool.submit(lambda: zfs.local_properties(
            dst, plan.destination, sources="local,received", only=only))
        src_by, src_props = source.result()
        dst_by = {d.name: d for d in dst_f.result()}
        dst_props = dst_props_f.result()
    check = TreeCheck(readonly={d for d, p in dst_props.items() if p.get("readonly") == "on"})
    for e in plan.entries:
        if e.unchanged:
            continue  # left at the copy's newest snapshot: nothing arrived to check
        s, d = src_by.get(e.source), dst_by.get(e.destination)
        snap = s.snapshot(plan.snapshot) if s else None
        if snap is None:
            continue  # skipped: no such snapshot on the source
        copy = d.snapshot(plan.snapshot) if d else None
        if copy is None or copy.guid != snap.guid:
            check.problems[e.destination] = f"@{plan.snapshot} is missing or differs"
            continue
        check.guids[e.destination] = copy.guid
        assert s is not None and d is not None
        key_from = _lost_key_parent(plan, s, d)
        if key_from is not None:
            check.own_key_roots[e.destination] = key_from
        if e.source == plan.root:
            check.root_guids = (snap.guid, copy.guid)
        missing = [x.short for x in s.snapshots if x.createtxg <= snap.createtxg
                   and d.snapshot(x.short) is None]
        if e.action == "full" and missing:
            check.problems[e.destination] = "lacks " + ", ".join("@" + m for m in missing)
            continue
        differ = _differing_properties(src_props.get(e.source, {}),
                                       dst_props.get(e.destination, {}), own)
        if differ:
            check.problems[e.destination] = "properties differ: " + ", ".join(differ)
            check.differ[e.destination] = differ
    return check


def finish_received(src: Host, dst: Host, caps: tuple[zfs.Capabilities, zfs.Capabilities],
                    plan: TreePlan, received: Sequence[TreeEntry], *, readonly: bool,
                    source: SourceSide | None, emit: Observer,
                    own: Collection[str] = ()) -> TreeCheck:
    """After the streams: every dataset checked (verify_tree), then readonly=on on the
    `received` copies that do not have it already."""
    emit(StageChanged("verifying", "checking every dataset on the destination"))
    checked = verify_tree(src, dst, caps[0], caps[1], plan, source, own)
    todo = [e for e in received if e.destination not in checked.readonly]
    if readonly and todo:
        # (A catch-up's copies mostly have it from their first copy, and each `zfs set`
        # costs a transaction group on the destination.)
        emit(StageChanged("verifying", f"setting readonly=on on {len(todo)} dataset(s)"))
        line = " && ".join(cmdline.join(dst.privileged(
            ["zfs", "set", "readonly=on", cmdline.dataset(e.destination)])) for e in todo)
        dst.run(line, timeout=60 + 10 * len(todo)).check("setting readonly=on")
    return checked


def _differing_properties(want: dict[str, str], got: dict[str, str],
                          own: Collection[str]) -> list[str]:
    """The source's locally set properties the copy lacks or holds otherwise (readonly,
    mountpoint and canmount are the run's own choice; the shares go-live sets)."""
    return [k for k, v in want.items()
            if k not in RUN_OWN and k not in own and got.get(k) != v]


def _lost_key_parent(plan: TreePlan, s: zfs.Dataset, d: zfs.Dataset) -> str | None:
    """The copy whose key `d` should use, when `d` became an encryption root of its own
    while the source `s` uses an ancestor's key that was copied too; else None."""
    root = s.encryption_root
    if root is None or root == s.name or not cmdline.within(root, plan.root):
        return None
    if d.encryption_root != d.name:
        return None
    return destination_name(root, plan.root, plan.destination)


__all__ = ["Placement", "SourceSide", "TreeCheck", "check_ends", "check_placement",
           "read_placement", "finish_received", "hold_readonly", "place_root", "root_mountpoint",
           "verify_tree"]
