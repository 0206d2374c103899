"""Whether a copy fits where it lands on the destination, said before anything moves (a pool
move that runs out of space does so hours or days in; a final sync, with the source read-only).

`landing` is where a copy lands as the destination is now: the copy itself if it is there,
else its parent, whose room is the copy's. Against that dataset's `available`, what the copy
needs: what goes in full (its data and snapshots as the source stores them) and what each
catch-up carries (written since its base). An estimate - another compression, sector size or
dedup changes it - so it is said, not refused. A tree's figures: tree/planning/room.py; one
dataset's: plan.py.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from .. import zfs
from ..units import format_size


@dataclass(frozen=True, slots=True)
class Room:
    """About what the copy needs, and what `where` on the destination has available."""

    needed: int  # what goes in full
    available: int
    where: str
    changes: int = 0  # the catch-ups: what was written since each one's base
    counted: str = ""  # what `needed` counts besides the data, in words ("" for nothing)

    @property
    def short(self) -> bool:
        return self.needed + self.changes > self.available

    def shortfall(self) -> str:
        """What will not fit, in figures ("" where it fits): each face adds its ways out."""
        if not self.short:
            return ""
        what = []
        if self.needed:
            counted = f" ({self.counted} included)" if self.counted else ""
            what.append(f"What is copied in full takes about {format_size(self.needed)} on the "
                        f"source{counted}")
        if self.changes:
            what.append(f"{'what' if what else 'What'} was written since the copy's snapshots "
                        f"about {format_size(self.changes)}")
        return (" and ".join(what) + f", and {self.where} has "
                f"{format_size(self.available)} available: the copy will likely run out of "
                "space partway")

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


def room_at(needed: int, changes: int, destination: str, dst_sets: Sequence[zfs.Dataset],
            counted: str = "") -> Room | None:
    """`needed` and `changes` against the room where the copy lands; None where nothing goes
    or that dataset is not there to say."""
    where = landing(destination, dst_sets)
    there = next((d for d in dst_sets if d.name == where), None)
    if not (needed or changes) or there is None:
        return None
    return Room(needed, there.available, where, changes, counted)


__all__ = ["Room", "landing", "room_at"]
