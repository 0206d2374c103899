"""Whether a tree's copy fits where it lands (`landing`: the copy itself or its parent, whose
grants and room are the copy's), said in the plan before anything moves (a pool move that runs
out of space does so hours or days in; a final sync, with the source read-only).

What a dataset takes on its pool of its own is its `used` less its children's: its data, its
snapshots, and a volume's reservation (a thick volume, as Proxmox and TrueNAS make them,
reserves its whole size). The datasets a run copies in full need about that on the
destination, a catch-up about what was written since its base (where the host says); against
it, what the destination's nearest existing dataset has available. An estimate: another
compression, sector size or dedup changes it, so it is said, not refused.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ... import zfs
from ...units import format_size
from .entry import TreeEntry


@dataclass(frozen=True, slots=True)
class Room:
    """About what the copies need, and what `where` on the destination has available."""

    needed: int  # the full copies
    available: int
    where: str
    changes: int = 0  # the catch-ups: what was written since each one's base

    @property
    def short(self) -> bool:
        return self.needed + self.changes > self.available

    def shortfall(self) -> str:
        """What will not fit, in figures ("" where it fits): each face adds its ways out."""
        if not self.short:
            return ""
        what = []
        if self.needed:
            what.append(f"The datasets copied in full take about {format_size(self.needed)} on "
                        "the source (snapshots and reservations included)")
        if self.changes:
            what.append(f"{'the' if what else 'The'} catch-ups carry about "
                        f"{format_size(self.changes)} written since the copy's snapshots")
        return (" and ".join(what) + f", and {self.where} has "
                f"{format_size(self.available)} available: the copy will likely run out of "
                "space partway")

    def describe(self) -> str:
        """The plan's warning where the copy will not fit, with the command line's ways out;
        else ""."""
        if not self.short:
            return ""
        return (f"{self.shortfall()}. Make room there, leave datasets out (--exclude), or "
                "receive thick volumes thin (-x refreservation).")

    def to_json(self) -> dict[str, object]:
        return {"needed": self.needed, "changes": self.changes, "available": self.available,
                "where": self.where, "short": self.short}


def landing(destination: str, dst_sets: Sequence[zfs.Dataset]) -> str:
    """Where the copy lands on the destination as it is now: `destination` if it is there,
    else its parent (which the run's checks require), so what that dataset grants and has
    available is the copy's."""
    if any(d.name == destination for d in dst_sets):
        return destination
    return posixpath.dirname(destination)


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
    where = landing(destination, dst_sets)
    there = next((d for d in dst_sets if d.name == where), None)
    if not (full or changes) or there is None:
        return None
    thin = "refreservation" in left_out
    own = own_use(src_sets)
    needed = sum(ds.referenced if thin and ds.type == "volume" else own[ds.name]
                 for ds in full)
    return Room(needed, there.available, where, changes)


__all__ = ["Room", "landing", "own_use", "room_for"]
