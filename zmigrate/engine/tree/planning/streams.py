"""Which datasets of a tree travel together in one `zfs send -R` stream.

Two kinds: an encryption root whose whole subtree is new on the destination (raw, `-R -w`, so
the copy keeps one key for the subtree), and a subtree whose catch-up is small and plain
(`-R -I`, one job instead of one per dataset: on a pool of hundreds of datasets where a few
changed, the per-dataset cost is most of the run). Everything else goes dataset by dataset,
each its own resumable stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ... import cmdline, zfs
from .entry import SMALL, TreeEntry


def raw_units(entries: list[TreeEntry], picked: Sequence[zfs.Dataset],
               src_sets: Sequence[zfs.Dataset]) -> list[TreeEntry]:
    """Entries with each encryption root whose subtree is all picked and all new on the
    destination marked to go as one raw replication stream, its descendants carried by it.

    Why: a raw stream of one dataset arrives as an encryption root of its own, so a tree sent
    dataset by dataset would need one `zfs load-key` per encrypted dataset; -R -w keeps the
    source's hierarchy. An outer root's stream carries any inner one."""
    by_name = {e.source: e for e in entries}
    picked_names = {d.name for d in picked}
    out = list(entries)
    carried: set[str] = set()
    for d in picked:
        e = by_name.get(d.name)
        if e is None or d.name in carried or d.encryption_root != d.name:
            continue
        below = [x.name for x in src_sets if cmdline.below(x.name, d.name)]
        if not below or e.action != "full" or e.resume:
            continue
        members = [by_name.get(n) for n in below]
        if any(n not in picked_names for n in below) or any(
                m is None or m.action != "full" or m.resume for m in members):
            continue  # part of it excluded, already there or half-received: one by one
        carried.update(below)
        for i, x in enumerate(out):
            if x.source == d.name:
                out[i] = replace(x, replicate=True,
                                 reason=f"{x.reason}; raw, with its descendants in one stream")
            elif x.source in below:
                out[i] = replace(x, carried_by=d.name,
                                 reason=f"in the raw replication stream of {d.name}")
    return out


def catch_up_units(entries: list[TreeEntry], src_sets: Sequence[zfs.Dataset],
                   dst_sets: Sequence[zfs.Dataset], *, root: str, destination: str,
                   resumable: bool, keep_root: bool = False) -> list[TreeEntry]:
    """Entries with each subtree whose catch-up fits in one `zfs send -R -I` stream marked so,
    its descendants carried by it (outermost subtree first).

    A subtree fits when every dataset in it on the source is picked, goes incrementally from
    the same base, that base is the destination's newest snapshot everywhere (so nothing would
    be rolled back), none is encrypted (a raw stream is the dataset's own), no dataset under its
    copy is gone from the source, and either its whole delta is known and small (a stream that
    small need not be resumable) or the destination cannot resume anyway. `keep_root`: the
    tree's root goes alone (its receive sets a property its children must not inherit)."""
    by_name = {e.source: e for e in entries}
    on_src = {d.name: d for d in src_sets}
    copies = {d.name for d in dst_sets}
    out, carried = list(entries), set[str]()
    for e in entries:
        if e.source in carried or (keep_root and e.source == root):
            continue
        below = [n for n in on_src if cmdline.below(n, e.source)]
        members = [e, *(by_name.get(n) for n in below)]
        if not below or not _one_catch_up(members, e.base) or any(
                on_src[m.source].encrypted for m in members if m is not None):
            continue
        copy_root = destination + e.source[len(root):]
        if any(cmdline.below(c, copy_root) and root + c[len(destination):] not in on_src
               for c in copies):
            continue  # `receive` of a replication stream must not meet datasets it does not know
        size = sum(m.size for m in members if m is not None)
        if resumable and (size >= SMALL or not all(m.size_known for m in members if m)):
            continue
        carried.update(below)
        for i, x in enumerate(out):
            if x.source == e.source:
                out[i] = replace(x, replicate=True, reason=(
                    f"{x.reason}; with its {len(below)} descendant(s) in one replication "
                    "stream (zfs send -R -I)"))
            elif x.source in below:
                out[i] = replace(x, carried_by=e.source,
                                 reason=f"{x.reason}; in the replication stream of {e.source}")
    return out


def _one_catch_up(members: list[TreeEntry | None], base: str | None) -> bool:
    """Every member a plain incremental from `base`, not resumed, in no other stream."""
    return base is not None and all(
        m is not None and m.action == "incremental" and m.base == base and not m.resume
        and not m.replicate and m.carried_by is None and m.origin is None for m in members)
