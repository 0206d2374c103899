"""Whether a tree's first copy fits where it goes, said in the plan before anything moves (a
pool move that runs out of space does so hours or days in).

What a dataset takes on its pool of its own is its `used` less its children's: its data, its
snapshots, and a volume's reservation (a thick volume, as Proxmox and TrueNAS make them,
reserves its whole size). The datasets a run copies in full need about that on the
destination; against it, what the destination's nearest existing dataset has available. An
estimate: another compression, sector size or dedup changes it, so it is said, not refused.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .. import cmdline, zfs
from ..units import format_size
from .entry import TreeEntry


@dataclass(frozen=True, slots=True)
class Room:
    """About what the copies need, and what `where` on the destination has available."""

    needed: int
    available: int
    where: str

    @property
    def short(self) -> bool:
        return self.needed > self.available

    def shortfall(self) -> str:
        """What will not fit, in figures ("" where it fits): each face adds its ways out."""
        if not self.short:
            return ""
        return (f"The datasets copied in full take about {format_size(self.needed)} on the "
                "source (snapshots and reservations included), and "
                f"{self.where} has {format_size(self.available)} available: the copy will "
                "likely run out of space partway")

    def describe(self) -> str:
        """The plan's warning where the copy will not fit, with the command line's ways out;
        else ""."""
        if not self.short:
            return ""
        return (f"{self.shortfall()}. Make room there, leave datasets out (--exclude), or "
                "receive thick volumes thin (-x refreservation).")

    def to_json(self) -> dict[str, object]:
        return {"needed": self.needed, "available": self.available, "where": self.where,
                "short": self.short}


def own_use(ds: zfs.Dataset, datasets: Sequence[zfs.Dataset]) -> int:
    """What `ds` takes of its pool itself: its `used` less its children's."""
    children = sum(d.used for d in datasets if cmdline.below(d.name, ds.name)
                   and d.name.count("/") == ds.name.count("/") + 1)
    return max(0, ds.used - children)


def room_for(entries: Sequence[TreeEntry], src_sets: Sequence[zfs.Dataset],
         dst_sets: Sequence[zfs.Dataset], destination: str,
         left_out: Collection[str] = ()) -> Room | None:
    """What the full copies of `entries` need, against the destination's room; None where
    nothing goes in full or no dataset above `destination` is there to say. `left_out`: the
    properties the run leaves out (-x refreservation: a volume then needs what it holds)."""
    on_src = {d.name: d for d in src_sets}
    full = [on_src[e.source] for e in entries if e.action == "full" and e.source in on_src]
    on_dst = {d.name: d for d in dst_sets}
    where = destination
    while where not in on_dst and "/" in where:
        where = where.rsplit("/", 1)[0]
    if not full or where not in on_dst:
        return None
    thin = "refreservation" in left_out
    needed = sum(ds.referenced if thin and ds.type == "volume" else own_use(ds, src_sets)
                 for ds in full)
    return Room(needed, on_dst[where].available, where)


__all__ = ["Room", "own_use", "room_for"]
