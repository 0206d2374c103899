"""One dataset of a tree transfer's plan and what the run does with it."""

from __future__ import annotations

from dataclasses import dataclass

# A dataset referencing less than this is "small": it may share the link (--parallel), and a
# catch-up this small goes with its subtree in one replication stream.
SMALL = 64 * 2**20


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One dataset of the tree and what the run does with it."""

    source: str
    destination: str
    type: str
    # Bytes the stream carries, about: what the dataset references (a full stream), or what
    # was written since the base (an incremental), where the host says (`size_known`).
    size: int
    action: str  # "full", "incremental", "skip"
    reason: str = ""  # why it is skipped, or which base an incremental starts from
    resume: bool = False  # the destination holds its interrupted receive: send only the rest
    # One `zfs send -R` stream carries this dataset and its descendants (`carried_by` it):
    # an encryption root sent raw (`-R -w`, so the copy keeps the source's encryption
    # hierarchy), or a subtree's small catch-up (`-R -I`, one job instead of one per dataset).
    replicate: bool = False
    carried_by: str | None = None
    # The root received into an existing empty dataset (a new pool's root) as that dataset
    # itself: `zfs receive -F`, checked empty before anything runs (destination/emptiness.py).
    into: bool = False
    # A clone of a snapshot inside the tree: sent from that snapshot (`send -I ORIGIN@snap`)
    # after its origin's dataset, so it arrives as a clone of the copy, using the space the
    # source uses.
    origin: str | None = None
    # An incremental's base (short name) when it is the destination's newest snapshot, so the
    # copy holds nothing the stream would have to roll back.
    base: str | None = None
    size_known: bool = True  # False: `size` is the dataset's whole size, an upper bound

    @property
    def unchanged(self) -> bool:
        """Left as it is: nothing written since its `base`, the copy's newest snapshot."""
        return self.action == "skip" and self.base is not None
