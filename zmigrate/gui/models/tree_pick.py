"""Which datasets of a tree the Source page picked: a root, its descendants, minus the unticked.

Qt-free so the logic is tested without widgets; the tree model shows it as check boxes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ...engine.cmdline import within
from ...engine.zfs import Dataset

# A snapshot every picked dataset shares counts as recent for this long; an older one would
# send stale data, so "Take a snapshot now" becomes the default.
RECENT = 24 * 3600


@dataclass(slots=True)
class TreePick:
    """A root dataset (or pool) with its descendants; every one ticked until unticked."""

    root: str
    members: list[Dataset]  # the root and its descendants, parents first
    unticked: set[str] = field(default_factory=set)
    # common_snapshot per set of unticked names: the page asks several times per click.
    _common: dict[frozenset[str], str | None] = field(default_factory=dict, repr=False,
                                                      compare=False)
    # Per dataset, each snapshot's short name -> its place (oldest 0): made once, so that a
    # pool of 10,000 snapshots answers each click without scanning every list again.
    _places: dict[str, dict[str, int]] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, datasets: list[Dataset], root: str) -> TreePick:
        members = sorted((d for d in datasets if within(d.name, root)),
                         key=lambda d: (d.name.count("/"), d.name))
        return cls(root, members)

    @property
    def has_children(self) -> bool:
        return len(self.members) > 1

    def ticked(self, name: str) -> bool:
        return name not in self.unticked

    def set_ticked(self, name: str, ticked: bool) -> None:
        """Tick or untick one dataset (the root always stays picked)."""
        if name == self.root or not any(d.name == name for d in self.members):
            return
        if ticked:
            self.unticked.discard(name)
        else:
            self.unticked.add(name)

    def tick_all(self) -> bool:
        """Tick every dataset again; True if one was unticked."""
        was = bool(self.unticked)
        self.unticked.clear()
        return was

    def included(self, name: str) -> bool:
        """Picked: ticked, and no ancestor up to the root unticked."""
        return within(name, self.root) and not any(within(name, x) for x in self.unticked)

    def picked(self) -> list[Dataset]:
        return [d for d in self.members if self.included(d.name)]

    def excludes(self) -> tuple[str, ...]:
        """The fewest names that leave out what was unticked (an unticked child of an unticked
        parent is already out)."""
        out = [x for x in sorted(self.unticked)
               if not any(x != y and within(x, y) for y in self.unticked)]
        return tuple(out)

    def totals(self) -> tuple[int, int, int]:
        """(bytes referenced, datasets, snapshots) of the picked datasets."""
        picked = self.picked()
        return (sum(d.referenced for d in picked), len(picked),
                sum(len(d.snapshots) for d in picked))

    def _place(self, d: Dataset) -> dict[str, int]:
        places = self._places.get(d.name)
        if places is None:
            cut = len(d.name) + 1
            places = {s.name[cut:]: i for i, s in enumerate(d.snapshots)}
            self._places[d.name] = places
        return places

    def older_snapshots(self, upto: str | None) -> int:
        """How many snapshots of the picked datasets come before @`upto` (all of them when
        None: a snapshot taken now is newer than every one); a later one stays behind."""
        count = 0
        for d in self.picked():
            place = self._place(d).get(upto) if upto is not None else None
            count += place if place is not None else len(d.snapshots)
        return count

    def common_snapshot(self) -> str | None:
        """The newest snapshot name every picked dataset has, or None."""
        key = frozenset(self.unticked)
        if key not in self._common:
            self._common[key] = self._common_snapshot()
        return self._common[key]

    def _common_snapshot(self) -> str | None:
        picked = self.picked()
        if not picked:
            return None
        shared = set(self._place(picked[0]))
        for d in picked[1:]:
            shared.intersection_update(self._place(d).keys())
        if not shared:
            return None
        # Newest by the root's own order (creation), as all picked datasets have it.
        root_snaps = [s for s in picked[0].snapshots if s.short in shared]
        return max(root_snaps, key=lambda s: (s.creation, s.createtxg)).short

    def recent_common_snapshot(self, now: float | None = None) -> str | None:
        """`common_snapshot` if every picked dataset's copy of it is younger than RECENT."""
        short = self.common_snapshot()
        if short is None:
            return None
        now = time.time() if now is None else now
        for d in self.picked():
            place = self._place(d).get(short)
            if place is None or now - d.snapshots[place].creation > RECENT:
                return None
        return short
