"""What a plan destroys, computed from what both hosts were read to hold (no remote call):
a rollback's newer snapshots, a replication stream's datasets and snapshots absent on the
source, replaced content, a discarded partial receive; and what appeared since the plan's
read (`grown`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .. import zfs
from ..cmdline import within
from .kinds import DESTINATION, NEWER, Loss, LossKind


def rolled_back(target: zfs.Dataset, base: zfs.Snapshot) -> list[Loss]:
    """`zfs rollback -r TARGET@BASE` (or a forced incremental receive from BASE): the target's
    snapshots newer than `base` (the target's own snapshot of it)."""
    return [Loss(DESTINATION, LossKind.SNAPSHOT, s.name, f"{NEWER}{base.short}")
            for s in target.snapshots if s.createtxg > base.createtxg]


def replication_pruned(source_root: str, src_sets: Sequence[zfs.Dataset], sent: str,
                       destination: str, dst_sets: Sequence[zfs.Dataset]) -> list[Loss]:
    """An incremental `zfs receive -F` of a replication stream (`send -R -I`) up to @`sent`:
    every dataset under the copy that the stream does not carry (gone from the source, or
    without @`sent` there) with its snapshots, and every snapshot of the copy the source does
    not hold up to @`sent` (pruned there, or taken on the copy)."""
    on_src = {d.name: d for d in src_sets if within(d.name, source_root)}
    out: list[Loss] = []
    for d in sorted((d for d in dst_sets if within(d.name, destination)),
                    key=lambda d: d.name.split("/")):
        source = on_src.get(source_root + d.name[len(destination):])
        upto = source.snapshot(sent) if source is not None else None
        if source is None or upto is None:
            why = "gone from the source" if source is None else f"has no @{sent} on the source"
            if d.name == destination:
                continue  # the root's own stream is refused elsewhere; it is never destroyed
            out.append(Loss(DESTINATION, LossKind.DATASET, d.name, why))
            out += [Loss(DESTINATION, LossKind.SNAPSHOT, s.name, f"with {d.name}")
                    for s in d.snapshots]
            continue
        carried = {s.guid for s in source.snapshots if s.createtxg <= upto.createtxg}
        out += [Loss(DESTINATION, LossKind.SNAPSHOT, s.name, "not on the source")
                for s in d.snapshots if s.guid not in carried]
    return out


def written_since(target: zfs.Dataset, said: str = "written since") -> list[Loss]:
    """A forced receive or rollback into `target`: what was written to it since its newest
    snapshot goes too (`said` so, before the snapshot's name): `written` where the host says
    (OpenZFS); else (zfs-fuse) a change of `referenced` since that snapshot says it was
    written to, about how much (the read must follow a pool sync: zfs.sync_line)."""
    newest = target.newest
    if newest is None:
        return []
    if target.written is None:
        if target.referenced == newest.referenced:
            return []
        return [Loss(DESTINATION, LossKind.CONTENT, target.name,
                     f"{said} @{newest.short}; about "
                     f"{abs(target.referenced - newest.referenced)} bytes ({newest.referenced} "
                     f"referenced then, {target.referenced} now)")]
    if not target.written:
        return []
    return [Loss(DESTINATION, LossKind.CONTENT, target.name,
                 f"{said} @{newest.short}; {target.written} bytes")]


def content_replaced(target: zfs.Dataset, why: str) -> Loss:
    """A dataset without snapshots that takes the copy as itself (`zfs receive -F` of a full
    stream): its files are replaced. `why`: "judged empty" or "forced"."""
    return Loss(DESTINATION, LossKind.CONTENT, target.name,
                f"{why}; {target.referenced} bytes referenced")


def discarded(target: zfs.Dataset) -> Loss:
    """`zfs receive -A`: an interrupted first receive is the dataset itself; an interrupted
    incremental is its saved state (DATASET/%recv)."""
    if not target.snapshots:
        return Loss(DESTINATION, LossKind.DATASET, target.name, "a partial first receive")
    return Loss(DESTINATION, LossKind.PARTIAL, target.name, "an interrupted receive's data")


def seen(destination: str, dst_sets: Sequence[zfs.Dataset], recursive: bool) -> tuple[str, ...]:
    """The names (datasets and snapshots) under `destination` (only it, unless `recursive`)
    as the plan read them, sorted: what a re-read is compared with."""
    return tuple(sorted(n for d in dst_sets
                        if d.name == destination or (recursive and within(d.name, destination))
                        for n in (d.name, *(s.name for s in d.snapshots))))


def grown(seen_names: Iterable[str], destination: str, now: Sequence[zfs.Dataset],
          recursive: bool) -> list[Loss]:
    """What appeared under `destination` since the plan's read (`seen_names`, from `seen`):
    the destructive steps would take it too, though no one was shown it."""
    before = set(seen_names)
    out: list[Loss] = []
    for d in now:
        if not (d.name == destination or (recursive and within(d.name, destination))):
            continue
        if d.name not in before:
            out.append(Loss(DESTINATION, LossKind.DATASET, d.name, "created after the plan"))
        out += [Loss(DESTINATION, LossKind.SNAPSHOT, s.name, "taken after the plan")
                for s in d.snapshots if s.name not in before]
    return out


def names(losses: Iterable[Loss], host_side: str = DESTINATION) -> list[str]:
    """The names lost on one host, in order."""
    return [x.name for x in losses if x.host_side == host_side]
