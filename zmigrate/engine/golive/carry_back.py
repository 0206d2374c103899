"""Going back without losing what was written to the live copy.

`measure`: what was written to each copied dataset since its newest snapshot that the source
also holds (the final sync's): `written@SNAP` where the host has it; on a zfs without
`written` (zfs-fuse) the incremental stream to a snapshot of the copy is measured instead (its
bytes past an empty stream's). `carry`: a snapshot of the copy, once it is out of service, and
an incremental send copy -> source by the tree's machinery (`TreeJob`, from the destination
host to the source host), before the source is served again. `leave`: the same snapshot kept
on the copy, named, for the user's explicit choice to leave those writes there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import cmdline, zfs
from ..errors import ZmigrateError
from ..events import StageChanged
from ..hosts import Host
from ..plan import Options, property_name
from ..remedies import Remedy
from ..tree import TreeJob, TreeRequest
from ..tree.planning.unchanged import EMPTY_INCREMENT
from .checks import _snapshots
from .cutover import Props, datasets, read_props


@dataclass(frozen=True, slots=True)
class Writes:
    """What was written to the copy since it went live: bytes by dataset (only those
    written to), and the snapshot the figures were measured to (None: `written`)."""

    changed: tuple[tuple[str, int], ...]

    @property
    def bytes(self) -> int:
        return sum(n for _, n in self.changed)

    @property
    def datasets(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.changed)

    def to_json(self) -> dict[str, object]:
        return {"bytes": self.bytes, "datasets": dict(self.changed)}


def snapshot_name(kind: str, now: float | None = None) -> str:
    """`zmigrate-back-…` (carried back) or `zmigrate-left-…` (left on the copy), in UTC."""
    return f"zmigrate-{kind}-" + time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))


def common_snapshots(src: Props, dst: Props, source_root: str,
                     destination_root: str) -> dict[str, str]:
    """copy dataset -> the short name of its newest snapshot that its source holds too (same
    guid): what was written since is what the source lacks."""
    theirs, ours = _snapshots(src), _snapshots(dst)
    out: dict[str, str] = {}
    for d_name in sorted(datasets(dst)):
        s_name = source_root + d_name[len(destination_root):]
        guids = {short: p.get("guid") for _, short, p in theirs.get(s_name, [])}
        for _, short, p in reversed(ours.get(d_name, [])):
            if short in guids and guids[short] == p.get("guid"):
                out[d_name] = short
                break
    return out


def measure(src: Host, dst: Host, source_root: str, destination_root: str,
            snapshot: str | None = None) -> Writes:
    """What was written to the copy since its common snapshot with the source. `snapshot`:
    a snapshot of the copy (taken out of service) to measure to; None: up to now (a
    temporary snapshot on a zfs without `written`, destroyed after)."""
    caps = zfs.probe(dst)
    copy = read_props(dst, destination_root)
    base: dict[str, str | None] = dict.fromkeys(datasets(copy))  # None: new while live
    base.update(common_snapshots(read_props(src, source_root), copy, source_root,
                                 destination_root))
    if not any(base.values()):
        raise ZmigrateError(f"the copy {destination_root} has no snapshot in common with "
                            f"{source_root}", host=dst.label,
                            fix="nothing can be carried back", remedies=(Remedy.LEAVE_WRITES,))
    if "written" in caps.properties:
        return _written_since(dst, base, snapshot)
    if snapshot is not None:
        return _stream_sizes(dst, base, snapshot)
    temporary = snapshot_name("measure")
    take_snapshot(dst, destination_root, temporary)
    try:
        return _stream_sizes(dst, base, temporary)
    finally:
        drop_snapshot(dst, destination_root, temporary)


def drop_snapshot(dst: Host, root: str, name: str) -> None:
    """`zfs destroy -r ROOT@NAME`: zmigrate's own snapshot, holding nothing new (measured)."""
    dst.execute(dst.privileged(["zfs", "destroy", "-r", cmdline.snapshot(f"{root}@{name}")]),
                timeout=120)


def _written_since(dst: Host, base: dict[str, str | None], at: str | None) -> Writes:
    """`written@SNAP` of each copy dataset, or of its snapshot @`at` (`referenced`, all it
    holds, of one created while live): one command, nothing read but the pool's counts."""
    zfs_cmd = cmdline.join(dst.privileged(["zfs"]))
    line = "; ".join(f"{zfs_cmd} get -Hp -o name,value "
                     f"{cmdline.join(['written@' + snap if snap else 'referenced'])} "
                     f"{cmdline.snapshot(f'{name}@{at}') if at else cmdline.dataset(name)}"
                     for name, snap in sorted(base.items()) if snap != at)
    if not line:
        return Writes(())
    r = dst.run(line, timeout=120)
    r.check("measuring what was written to the copy")
    found = {}
    for row in r.stdout.splitlines():
        name, _, value = row.partition("\t")
        if value.strip().isdigit() and int(value) > 0:
            found[name.split("@")[0]] = int(value)
    return Writes(tuple(sorted(found.items())))


def _stream_sizes(dst: Host, base: dict[str, str | None], snapshot: str) -> Writes:
    """The incremental stream's bytes from each common snapshot to @`snapshot` (the whole
    stream of a dataset created while live), less an empty stream's: one command (a send
    that fails counts as written)."""
    zfs_cmd = cmdline.join(dst.privileged(["zfs"]))
    parts = []
    for name, snap in sorted(base.items()):
        if snap == snapshot:
            continue
        b = cmdline.snapshot(f"{name}@{snapshot}")
        inc = f"-i {cmdline.snapshot(f'{name}@{snap}')} " if snap else ""
        parts.append(f"printf '%s\\t' {cmdline.dataset(name)}; "
                     f"{{ {zfs_cmd} send {inc}{b} 2>/dev/null || echo failed; }} | wc -c")
    if not parts:
        return Writes(())
    r = dst.run("; ".join(parts), timeout=3600)
    r.check("measuring what was written to the copy")
    found = {}
    for row in r.stdout.splitlines():
        name, _, value = row.partition("\t")
        n = int(value.strip()) if value.strip().isdigit() else 0
        if n > EMPTY_INCREMENT:
            found[name] = n - EMPTY_INCREMENT
        elif n != EMPTY_INCREMENT:
            found[name] = max(n, 1)  # unreadable: written, as far as anyone can tell
    return Writes(tuple(sorted(found.items())))


def take_snapshot(dst: Host, root: str, name: str) -> None:
    """`zfs snapshot -r ROOT@NAME` (an existing one is kept: a repeated way back)."""
    r = dst.execute(dst.privileged(["zfs", "snapshot", "-r",
                                    cmdline.snapshot(f"{root}@{name}")]), timeout=300)
    if not r.ok and "exists" not in r.stderr:
        raise zfs.classify_zfs_error(dst.label, f"taking the snapshot {root}@{name}",
                                     r.stderr, r.command, r.status)


def carry(src: Host, dst: Host, source_root: str, destination_root: str, snapshot: str,
          said: Callable[[str], None] | None = None) -> None:
    """Send the copy's @`snapshot` back to the source, incrementally from their common
    snapshots: the tree's own run from the destination host to the source host (nothing
    destroyed: no --force; the source stays unmounted where it was)."""
    request = TreeRequest(destination_root, source_root, snapshot,
                          options=Options(readonly=True), until_live=False)
    job = TreeJob(dst, src, request)
    if said is not None:
        job.subscribe(lambda e: said(e.detail) if isinstance(e, StageChanged) else None)
    existing = datasets(read_props(src, source_root))
    lost = job.prepare().destroys  # the run is held to this list (TreeJob.shown)
    if lost:
        raise ZmigrateError(
            "carrying the copy's writes back would destroy or replace on the source: "
            + ", ".join(f"{x.name} ({x.detail})" for x in lost), host=src.label,
            fix="nothing was carried back", remedies=(Remedy.LEAVE_WRITES,))
    before = zfs.local_properties(src, source_root, sources="local,received")
    try:
        job.run()
    finally:
        _keep_properties(src, existing, before,
                         zfs.local_properties(src, source_root, sources="local,received"))


# Properties zfs cannot inherit: one that was not set is put back as its default.
NOT_INHERITED = {"canmount": "on"}


def _keep_properties(src: Host, existing: Props, before: dict[str, dict[str, str]],
                     after: dict[str, dict[str, str]]) -> None:
    """The tree's stream carries the copy's own properties (`send -p`: its mountpoint
    `none`, say): each source dataset's local properties put back as they were (set again,
    or inherited where they were not set)."""
    argvs = []
    for name in sorted(existing):
        props, now = before.get(name, {}), after.get(name, {})
        for prop, value in sorted(now.items()):
            if prop not in props and prop in NOT_INHERITED:
                argvs.append(["zfs", "set", f"{prop}={NOT_INHERITED[prop]}",
                              cmdline.dataset(name)])
            elif prop not in props:
                argvs.append(["zfs", "inherit", property_name(prop),
                              cmdline.dataset(name)])
            elif props[prop] != value:
                argvs.append(["zfs", "set", f"{property_name(prop)}={props[prop]}",
                              cmdline.dataset(name)])
    for argv in argvs:
        r = src.execute(src.privileged(argv), timeout=120)
        r.check(f"putting the source's {argv[2]} back after the way back's receive")
