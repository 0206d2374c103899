"""A tree transfer's plan, decided from the two inventories before anything changes.

Which datasets (`pick`: the root and its descendants less the excluded), what each gets (in
full with its older snapshots, the delta from the newest common snapshot, skipped, carried in an
encrypted subtree's raw replication stream), its size for progress and ETA, the snapshot to
take, and what vanished on the source. No remote call: `TreeJob` reads, this decides.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Sequence, Set
from dataclasses import dataclass, field, replace
from typing import Any

from ... import cmdline, losses, transports, zfs
from ...destination.room import Room
from ...errors import InvalidNameError, PreflightError, PreflightReason, ZmigrateError
from ...events import TreePlanReady as TreePlanReady
from ...hosts import Host, same_host
from ...hosts.tools import HostTools
from ...losses import Loss
from ...plan import Options
from ...units import format_size
from .entry import TreeEntry
from .streams import catch_up_units, raw_units

SNAPSHOT_PREFIX = "zmigrate-"


def snapshot_name(now: float | None = None) -> str:
    """`zmigrate-YYYYMMDD-HHMMSS` in UTC: sorts by time, and says who made it."""
    return SNAPSHOT_PREFIX + time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))


def unused_snapshot_name(name: str, datasets: Sequence[zfs.Dataset]) -> str:
    """`name`, or `name-2`, `-3`... if a dataset has it already (two runs within one second,
    e.g. a catch-up right after the first copy): still sorted by time."""
    taken = {s.short for d in datasets for s in d.snapshots}
    out, n = name, 1
    while out in taken:
        n += 1
        out = f"{name}-{n}"
    return out


@dataclass(frozen=True, slots=True)
class TreeRequest:
    """What to move: `root` and its children (less `excludes` and their descendants) on the
    source into `destination` on the destination, each up to `snapshot`.

    `snapshot` is a short snapshot name every picked dataset goes up to; None takes one now
    (`snapshot_name()`). `final` sets readonly=on on the picked source datasets before that
    snapshot, so the copy is exactly the source. `mount_root` mounts the copy under that
    directory; None receives it unmounted where the destination can (`zfs receive -u`).
    """

    root: str
    destination: str
    snapshot: str | None = None
    excludes: tuple[str, ...] = ()
    final: bool = False
    mount_root: str | None = None
    options: Options = field(default_factory=Options)
    # Datasets in flight at once. Only datasets under SMALL bytes share the link; a bigger one
    # runs alone, so big streams do not fight for it and its plot stays its own. None: as many
    # as both hosts' memory holds the buffers of, up to tree_schedule.AUTO_WIDTH.
    parallel: int | None = None
    # The copy is held until it goes live: its new file systems received canmount=noauto
    # (`held`). False for what goes back to its source (golive/carry_back.py).
    until_live: bool = True

    def validate(self) -> None:
        """Every name a valid ZFS name, the mount root an absolute path (InvalidNameError)."""
        cmdline.dataset(self.root)
        cmdline.dataset(self.destination)
        if self.snapshot is not None:
            cmdline.snap_part(self.snapshot)
        for ex in self.excludes:
            cmdline.dataset(ex)
        if self.mount_root is not None and not posixpath.isabs(self.mount_root):
            raise InvalidNameError(f"the directory to mount the copy under, {self.mount_root}, "
                                   "is not an absolute path", fix="give one that starts with /")


@dataclass(frozen=True, slots=True)
class NotCarried:
    """What a replication stream cannot carry, found on the picked datasets: the copy arrives
    without it, as a `zfs send -R` copy would."""

    holds: int = 0  # `zfs hold` tags
    held_snapshots: int = 0  # the snapshots they are on
    bookmarks: int = 0

    @classmethod
    def of(cls, picked: Sequence[zfs.Dataset]) -> NotCarried:
        held = [s.holds for d in picked for s in d.snapshots if s.holds]
        return cls(sum(held), len(held), sum(len(d.bookmarks) for d in picked))

    def describe(self) -> str:
        """A sentence for the plan, or "" when there is nothing."""
        parts = []
        if self.holds:
            parts.append(f"{self.holds} hold(s) on {self.held_snapshots} snapshot(s) "
                         "(zfs holds -r)")
        if self.bookmarks:
            parts.append(f"{self.bookmarks} bookmark(s) (zfs list -t bookmark)")
        if not parts:
            return ""
        return ("Not carried (zfs send cannot carry them; the copy arrives without them, as "
                "with zfs send -R): " + " and ".join(parts) + ". ")

    def to_json(self) -> dict[str, int]:
        return {"holds": self.holds, "held_snapshots": self.held_snapshots,
                "bookmarks": self.bookmarks}


@dataclass(frozen=True, slots=True)
class TreePlan:
    """The whole run, decided before anything changes on either host."""

    source_host: str
    destination_host: str
    root: str
    destination: str
    snapshot: str  # short name
    snapshot_command: str | None  # run on the source first (None: the snapshot exists)
    readonly_command: str | None  # --final: run on the source before the snapshot
    entries: tuple[TreeEntry, ...]
    vanished: tuple[str, ...]  # on the destination, gone from the source: reported, kept
    excluded: tuple[str, ...]
    mount: str  # how the copy is mounted, in words
    transport: str = "tcp"  # as the datasets' jobs will choose it (tcp between two hosts)
    not_carried: NotCarried = field(default_factory=NotCarried)
    # A zfs without `written` (zfs-fuse): which incrementals are empty is measured once the
    # snapshot is taken (tree_unchanged.leave_empty), so this plan may still shrink.
    measures_empty: bool = False
    # What the datasets' jobs destroy or replace on the destination, by name (losses.py):
    # each job stops before destroying anything not on this list.
    destroys: tuple[Loss, ...] = ()
    # The destination keeps an interrupted receive (zfs receive -s): a stopped dataset's
    # stream is resumed by the next run, not sent again.
    resumable: bool = False
    room: Room | None = None  # what the full copies need against the destination's room
    # Why it goes over tcp, in cleartext, where no transport was asked for (cleartext_why).
    cleartext: str | None = None

    @property
    def to_send(self) -> list[TreeEntry]:
        return [e for e in self.entries if e.action != "skip"]

    @property
    def unchanged(self) -> list[TreeEntry]:
        """Datasets nothing was written to since the copy's newest snapshot: left as they are."""
        return [e for e in self.entries if e.unchanged]

    @property
    def total(self) -> int:
        return sum(e.size for e in self.to_send)

    def describe(self) -> str:
        """One paragraph of what will happen."""
        n, sends = len(self.entries), self.to_send
        full = sum(1 for e in sends if e.action == "full")
        unchanged = len(self.unchanged)
        counts = [(full, "in full with their older snapshots"),
                  (len(sends) - full, "incremental"),
                  (unchanged, "unchanged since the copy's newest snapshot (nothing to send, "
                              "no new snapshot on them)"),
                  (n - len(sends) - unchanged, "already there")]
        text = (f"Copy the tree {self.source_host}:{self.root} ({n} dataset"
                f"{'s' if n != 1 else ''}) to {self.destination_host}:{self.destination} "
                f"up to @{self.snapshot}: "
                + ", ".join(f"{k} {what}" for k, what in counts if k) + ". ")
        for e in (e for e in self.entries if e.replicate):
            k = sum(1 for x in self.entries if x.carried_by == e.source)
            if e.action == "incremental":
                text += (f"{e.source} and its {k} descendant(s) catch up in one replication "
                         "stream (zfs send -R -I): one job instead of one per dataset. ")
                continue
            text += (f"The encrypted {e.source} goes raw with its {k} descendant(s) in one "
                     "replication stream (zfs send -R -w), keeping its encryption hierarchy "
                     "(not resumable: after an interruption, what had not arrived goes "
                     "dataset by dataset and the run names the keys to re-join). ")
        if sends:
            text += (f"Each stream goes over the {self.transport} transport"
                     + (f", in cleartext: {self.cleartext}. " if self.cleartext else ". "))
        if self.snapshot_command:
            text += f"The snapshot @{self.snapshot} is taken first. "
        if self.measures_empty:
            text += ("This zfs cannot say what was written: once the snapshot is taken, each "
                     "incremental is measured, and a dataset whose increment is empty is left "
                     "at the copy's newest snapshot (the new one taken back from it). ")
        if self.readonly_command:
            text += "Final sync: the source datasets are set readonly=on first. "
        text += self.not_carried.describe() + self.mount + "."
        if self.vanished:
            text += (" Gone from the source, kept on the destination: "
                     + ", ".join(self.vanished) + ".")
        if self.destroys:
            text += (f" {len(self.destroys)} snapshot(s) or dataset content(s) on the "
                     "destination are destroyed or replaced (listed by name).")
        return text

    def room_warning(self) -> str:
        """The plan's word where the copy will not fit where it goes; else ""."""
        if self.room is None or not self.room.short:
            return ""
        return (f"{self.room.shortfall()}. Make room there, leave datasets out (--exclude), or "
                "receive thick volumes thin (-x refreservation).")

    def commands(self) -> list[tuple[str, str]]:
        """The tree's own commands (each dataset's come from its job's plan)."""
        out = []
        if self.readonly_command:
            out.append((self.source_host, self.readonly_command))
        if self.snapshot_command:
            out.append((self.source_host, self.snapshot_command))
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "tree_plan", "root": self.root, "destination": self.destination,
            "snapshot": self.snapshot, "snapshot_command": self.snapshot_command,
            "readonly_command": self.readonly_command, "mount": self.mount,
            "transport": self.transport, "cleartext": self.cleartext,
            "datasets": [{"source": e.source, "destination": e.destination, "type": e.type,
                          "size": e.size, "action": e.action, "reason": e.reason,
                          "resume": e.resume, "replicate": e.replicate,
                          "carried_by": e.carried_by, "into": e.into, "origin": e.origin}
                         for e in self.entries],
            "vanished": list(self.vanished), "excluded": list(self.excluded),
            "not_carried": self.not_carried.to_json(), "total": self.total,
            "measures_empty": self.measures_empty, "description": self.describe(),
            "room": self.room.to_json() if self.room else None,
            "destroys": [x.to_json() for x in self.destroys],
            "commands": [{"host": h, "command": c} for h, c in self.commands()],
        }


def pick(datasets: Sequence[zfs.Dataset], root: str,
         excludes: Sequence[str] = ()) -> tuple[list[zfs.Dataset], list[str]]:
    """`root` and its descendants, parents first, less each excluded dataset and its children.

    Returns (picked, excluded names). An exclude outside the tree, or the root itself, is an
    error: a typo must not silently copy what the user meant to leave out.
    """
    names = {d.name for d in datasets}
    if root not in names:
        raise PreflightError(f"{root} does not exist", fix="check the name with zmigrate list",
                             reason=PreflightReason.NO_SOURCE, figures={"dataset": root})
    for ex in excludes:
        if ex == root:
            raise InvalidNameError(f"--exclude {ex} is the root of the tree itself")
        if ex not in names or not cmdline.below(ex, root):
            raise InvalidNameError(f"--exclude {ex} is not a dataset under {root}")
    inside = [d for d in datasets if cmdline.within(d.name, root)]
    out = [d for d in inside if not any(cmdline.within(d.name, ex) for ex in excludes)]
    # Parents before children: sort by path components, not by string (a/b-c before a/b/c
    # would not matter, but a/b must precede a/b/c).
    out.sort(key=lambda d: d.name.split("/"))
    excluded = sorted(d.name for d in inside if d not in out)
    return out, excluded


def _new_entry(ds: zfs.Dataset, target_name: str, count: int, resume: bool,
               picked: Sequence[zfs.Dataset], request: TreeRequest) -> TreeEntry:
    """A dataset new on the destination: in full, or a clone sent from its origin (when that
    origin is in the tree and travels with it)."""
    full = TreeEntry(ds.name, target_name, ds.type, ds.referenced, "full",
                     f"with {count} snapshot(s)", resume=resume)
    if ds.origin is None:
        return full
    origin_ds = ds.origin.split("@")[0]
    if resume:
        if not any(d.name == origin_ds for d in picked):
            return full
        return replace(full, size=ds.used, origin=ds.origin, reason=f"a clone of {ds.origin}: "
                       f"resumes its interrupted stream, with {count} snapshot(s)")
    if not any(d.name == origin_ds for d in picked):
        shared = format_size(max(0, ds.referenced - ds.used))
        return replace(full, reason=f"{full.reason}; arrives as an independent copy: its "
                       f"origin {ds.origin} is not in this tree, +{shared}")
    base = next(d for d in picked if d.name == origin_ds)
    gold, upto = base.snapshot(ds.origin.split("@")[1]), base.snapshot(request.snapshot or "")
    if request.snapshot is not None and (gold is None or upto is None
                                         or gold.createtxg > upto.createtxg):
        return replace(full, reason=f"{full.reason}; arrives as an independent copy: its "
                       f"origin {ds.origin} is newer than @{request.snapshot}, which its "
                       "dataset is sent up to")
    if not request.options.intermediates:
        return replace(full, reason=f"{full.reason}; arrives as an independent copy: without "
                       f"intermediate snapshots its origin {ds.origin} may not travel")
    return TreeEntry(ds.name, target_name, ds.type, ds.used, "full",
                     f"a clone of {ds.origin}: sent from it, its own data only, with {count} "
                     "snapshot(s)", origin=ds.origin)


def _incremental(ds: zfs.Dataset, target: zfs.Dataset, target_name: str,
                 snap: zfs.Snapshot | None, resume: bool) -> TreeEntry:
    """A dataset the destination already holds: the delta from the newest common snapshot."""
    on_dst = {t.guid for t in target.snapshots}
    common = [s for s in ds.snapshots if s.guid in on_dst]
    reason = f"from @{common[-1].short}" if common else "no snapshot in common"
    delta = ds.written_after(common[-1], snap) if common else None
    newest = bool(common) and target.snapshots[-1].guid == common[-1].guid
    return TreeEntry(ds.name, target_name, ds.type, ds.referenced if delta is None else delta,
                     "incremental", reason, resume=resume,
                     base=common[-1].short if newest else None, size_known=delta is not None)


def _unchanged(ds: zfs.Dataset, target: zfs.Dataset) -> str | None:
    """The snapshot `ds` is unchanged since, when nothing was written after its newest one
    (`written`, where the host says) and the copy's newest is that same one; else None.
    Such a dataset needs no new snapshot and no stream: the copy already holds its data."""
    if ds.written != 0 or not ds.snapshots or not target.snapshots:
        return None
    newest = ds.snapshots[-1]
    return newest.short if target.snapshots[-1].guid == newest.guid else None


def unchanged_candidates(request: TreeRequest, src_sets: Sequence[zfs.Dataset],
                         dst_sets: Sequence[zfs.Dataset]) -> list[str]:
    """The datasets `plan_tree` would leave unchanged by the inventories' `written` (its own
    rule, `_unchanged`): the ones whose `written` is read again after a pool sync before the
    plan is made. None where the tree cannot be picked (the plan says why)."""
    if request.snapshot is not None or request.final:
        return []
    try:
        picked, _ = pick(src_sets, request.root, request.excludes)
    except ZmigrateError:
        return []
    on_dst = {d.name: d for d in dst_sets}
    out = []
    for ds in picked:
        target = on_dst.get(destination_name(ds.name, request.root, request.destination))
        if target is not None and not target.resume_token and _unchanged(ds, target):
            out.append(ds.name)
    return out


def origins_first(entries: list[TreeEntry]) -> list[TreeEntry]:
    """`entries` (parents first) reordered so a clone also comes after its origin's dataset;
    otherwise the order stays."""
    names = {e.source for e in entries}
    placed: set[str] = set()
    out: list[TreeEntry] = []
    waiting = list(entries)
    while waiting:
        for e in waiting:
            parent = e.source.rpartition("/")[0]
            needs = {parent} if parent in names else set()
            if e.origin is not None and e.origin.split("@")[0] in names:
                needs.add(e.origin.split("@")[0])
            if needs <= placed:
                out.append(e)
                placed.add(e.source)
                waiting.remove(e)
                break
        else:  # a cycle cannot happen in ZFS; keep the rest as they are rather than loop
            out += waiting
            break
    return out


def recursive_snapshot(src_host: Host, root: str, snapshot: str) -> str:
    """`zfs snapshot -r ROOT@SNAPSHOT`: a whole tree's snapshot, in one transaction."""
    return cmdline.join(src_host.privileged(
        ["zfs", "snapshot", "-r", cmdline.snapshot(f"{root}@{snapshot}")]))


def _source_commands(src_host: Host, request: TreeRequest, picked: Sequence[zfs.Dataset],
                     excluded: Sequence[str], snapshot: str,
                     unchanged: Set[str] = frozenset()) -> tuple[str | None, str | None]:
    """What runs on the source first: the snapshot to take (None: it exists, or every
    dataset is `unchanged` since the copy's newest) and, for a final sync, `readonly=on` on
    every picked dataset (None otherwise)."""
    take = request.snapshot is None
    snapshot_command = None
    if take:
        names = [f"{d.name}@{snapshot}" for d in picked if d.name not in unchanged]
        if not excluded and not unchanged:
            snapshot_command = recursive_snapshot(src_host, request.root, snapshot)
        elif unchanged and names:
            # Only where `written` is known, so on a zfs that takes them all at once.
            snapshot_command = cmdline.join(src_host.privileged(
                ["zfs", "snapshot", *(cmdline.snapshot(n) for n in names)]))
        elif names:
            # `zfs snapshot a@s b@s` is atomic on OpenZFS; zfs-fuse takes one name per call.
            snapshot_command = " && ".join(
                cmdline.join(src_host.privileged(["zfs", "snapshot", cmdline.snapshot(n)]))
                for n in names)
    readonly_command = None
    if request.final:
        readonly_command = " && ".join(
            cmdline.join(src_host.privileged(
                ["zfs", "set", "readonly=on", cmdline.dataset(d.name)]))
            for d in picked)
    return snapshot_command, readonly_command


def destination_name(source: str, root: str, destination: str) -> str:
    return destination + source[len(root):]


def plan_tree(src_host: Host, dst_host: Host, request: TreeRequest,
              src_sets: Sequence[zfs.Dataset], dst_sets: Sequence[zfs.Dataset],
              *, snapshot: str, unmounted: bool, raw_streams: bool = False,
              resumable: bool = False, held_back: bool = False,
              tools: tuple[HostTools | None, HostTools | None] = (None, None)) -> TreePlan:
    """Decide each dataset's fate from the two inventories (no remote call).

    `raw_streams`: both hosts send and receive raw, and encrypted datasets go raw; then a new
    encryption root whose whole subtree is new on the destination goes as one -R -w stream.
    `resumable`: the destination keeps interrupted receives; then only a small catch-up of a
    subtree goes as one -R -I stream (tree_streams). `held_back`: new file systems are received
    canmount=noauto (`held`). `tools`: both hosts' probed tools, for the default transport
    (transports.chosen; not probed: tcp between two hosts)."""
    picked, excluded = pick(src_sets, request.root, request.excludes)
    on_dst = {d.name: d for d in dst_sets}
    take = request.snapshot is None
    entries: list[TreeEntry] = []
    for ds in picked:
        target_name = destination_name(ds.name, request.root, request.destination)
        target = on_dst.get(target_name)
        snap = ds.snapshot(snapshot)
        size = ds.referenced
        if snap is None and not take:
            entries.append(TreeEntry(ds.name, target_name, ds.type, size, "skip",
                                     f"has no @{snapshot}"))
            continue
        if target is not None and snap is not None and any(
                s.guid == snap.guid for s in target.snapshots):
            entries.append(TreeEntry(ds.name, target_name, ds.type, 0, "skip",
                                     f"@{snapshot} is already there"))
            continue
        resume = bool(target is not None and target.resume_token)
        if target is not None and not target.snapshots and not resume and ds.name == request.root:
            count = len(ds.snapshots) + 1 if snap is None else ds.snapshots.index(snap) + 1
            entries.append(TreeEntry(ds.name, target_name, ds.type, size, "full",
                                     f"into the existing {target_name} itself, with {count} "
                                     "snapshot(s)", into=True))
            continue
        if target is None or (not target.snapshots and resume):
            # What the full copy carries: the snapshots up to the one sent (a newer one
            # stays behind), or all of them and the one taken now.
            count = (len(ds.snapshots) + 1 if snap is None
                     else ds.snapshots.index(snap) + 1)
            entries.append(_new_entry(ds, target_name, count, resume, picked, request))
            continue
        since = _unchanged(ds, target) if take and not request.final and not resume else None
        if since is not None:
            entries.append(TreeEntry(ds.name, target_name, ds.type, 0, "skip", (
                f"unchanged since @{since}, which the copy holds: nothing to send, no new "
                "snapshot taken on it"), base=since))
            continue
        entries.append(_incremental(ds, target, target_name, snap, resume))
    entries = origins_first(entries)
    if raw_streams:
        entries = raw_units(entries, picked, src_sets)
    if not (request.options.force or request.options.replicate):
        # (-F with a replication stream would destroy what the source no longer has.)
        entries = catch_up_units(entries, src_sets, dst_sets, root=request.root,
                                 destination=request.destination, resumable=resumable,
                                 keep_root=request.mount_root is not None)
    unchanged = {e.source for e in entries if e.unchanged}
    snapshot_command, readonly_command = _source_commands(src_host, request, picked, excluded,
                                                          snapshot, unchanged)
    return TreePlan(
        source_host=src_host.label, destination_host=dst_host.label, root=request.root,
        destination=request.destination, snapshot=snapshot, snapshot_command=snapshot_command,
        readonly_command=readonly_command, entries=tuple(entries),
        vanished=_vanished(request, src_sets, dst_sets), excluded=tuple(excluded),
        mount=_mount_words(request, unmounted, held_back),
        transport=transports.chosen(request.options.transport,
                                    same_host(src_host, dst_host), tools).value,
        not_carried=NotCarried.of(picked),
        resumable=resumable and request.options.resumable is not False,
        destroys=tree_losses(entries, src_sets, dst_sets, request, snapshot),
    )


def tree_losses(entries: Sequence[TreeEntry], src_sets: Sequence[zfs.Dataset],
                dst_sets: Sequence[zfs.Dataset], request: TreeRequest,
                snapshot: str) -> tuple[Loss, ...]:
    """What the datasets' jobs destroy or replace: the content of an existing dataset without
    snapshots that takes the copy as itself (the root into a new pool's root; a child judged
    empty, or any with --force), and with --force each incremental's snapshots newer than its
    base (rolled back). Catch-up replication streams are never received with -F."""
    on_src = {d.name: d for d in src_sets}
    on_dst = {d.name: d for d in dst_sets}
    out: list[Loss] = []
    for e in entries:
        target, ds = on_dst.get(e.destination), on_src.get(e.source)
        if e.action == "skip" or e.resume or target is None or ds is None:
            continue
        if not target.snapshots:
            why = "taken as the copy itself" if e.into else "if judged empty, or --force"
            out.append(losses.content_replaced(target, why))
            continue
        if not request.options.force or e.action != "incremental":
            continue
        sent = ds.snapshot(snapshot)
        guids = {t.guid: t for t in target.snapshots}
        common = [s for s in ds.snapshots if s.guid in guids
                  and (sent is None or s.createtxg <= sent.createtxg)]
        if common:
            out += losses.rolled_back(target, guids[common[-1].guid])
            out += losses.written_since(target)
    return losses.unique(out)


def _vanished(request: TreeRequest, src_sets: Sequence[zfs.Dataset],
              dst_sets: Sequence[zfs.Dataset]) -> tuple[str, ...]:
    """Datasets of the copy on the destination that are gone from the source (kept)."""
    on_src = {d.name for d in src_sets}
    return tuple(sorted(
        d.name for d in dst_sets
        if cmdline.within(d.name, request.destination)
        and request.root + d.name[len(request.destination):] not in on_src))


def held(request: TreeRequest, dst_caps: zfs.Capabilities, sudo: bool) -> bool:
    """Whether the copy's new file systems are received canmount=noauto: a copy that goes live
    later (not mounted under a chosen folder now), by a zfs that sets properties as it
    receives (-o), for a login that may set canmount (root, or sudo: a delegated login would
    need the `canmount` permission, which docs/permissions.md's minimum does not grant). Left
    to mount by itself, a reboot's `zfs mount -a` would mount it before it goes live: over the
    source's own paths where both pools are on one host (OpenZFS mounts over a folder in use on
    FreeBSD, and on Linux with overlay=on, its default). Going live sets canmount as on the
    source; going back puts noauto back."""
    return (request.until_live and request.mount_root is None and dst_caps.receive_properties
            and (dst_caps.root or sudo))


def _mount_words(request: TreeRequest, unmounted: bool, held_back: bool) -> str:
    if request.mount_root is not None:
        return (f"The copy is mounted under {request.mount_root}" + (
            ", each dataset set readonly=on as it arrives, before its children mount in it "
            "(mounting them there would modify it, and the next catch-up would be refused)"
            if request.options.readonly else ""))
    if unmounted:
        return ("The copy is received unmounted (zfs receive -u), its mountpoint properties "
                "kept" + (", and canmount=noauto on each new file system, so it stays "
                          "unmounted after a reboot too until it goes live"
                          if held_back else ""))
    return ("This zfs cannot receive unmounted (-u): the copy's root is received where its "
            "parent mounts it (checked to be free), then set mountpoint=none, so its children "
            "never mount")
