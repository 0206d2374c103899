"""A tree's figures for the room check (destination/room.py): what each dataset takes on its
pool of its own is its `used` less its children's - its data, its snapshots, and a volume's
reservation (a thick volume, as Proxmox and TrueNAS make them, reserves its whole size) - so the
datasets a run copies in full need about that; a catch-up, what was written since its base.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Sequence

from ... import zfs
from ...destination.room import Room, room_at
from .entry import TreeEntry


def own_use(datasets: Sequence[zfs.Dataset]) -> dict[str, int]:
    """What each dataset takes of its pool itself: its `used` less its children's (one pass:
    a pool move reads thousands)."""
    children: dict[str, int] = {}
    for d in datasets:
        parent = posixpath.dirname(d.name)
        children[parent] = children.get(parent, 0) + d.used
    return {d.name: max(0, d.used - children.get(d.name, 0)) for d in datasets}


def room_for(entries: Sequence[TreeEntry], src_sets: Sequence[zfs.Dataset],
             dst_sets: Sequence[zfs.Dataset], destination: str,
             left_out: Collection[str] = ()) -> Room | None:
    """What the full copies and the catch-ups of `entries` need, against the room where the
    copy lands; None where nothing goes or that dataset is not there to say. `left_out`: the
    properties the run leaves out (-x refreservation: a volume then needs what it holds). A
    catch-up whose delta the host could not say is not counted (its size is no estimate)."""
    on_src = {d.name: d for d in src_sets}
    full = [on_src[e.source] for e in entries if e.action == "full" and e.source in on_src]
    changes = sum(e.size for e in entries if e.action == "incremental" and e.size_known)
    thin = "refreservation" in left_out
    own = own_use(src_sets)
    needed = sum(ds.referenced if thin and ds.type == "volume" else own[ds.name]
                 for ds in full)
    return room_at(needed, changes, destination, dst_sets, "snapshots and reservations")


__all__ = ["own_use", "room_for"]
