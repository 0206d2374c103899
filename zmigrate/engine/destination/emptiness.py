"""Whether an existing destination dataset (a new pool's root, typically) may take a copy as
itself: `zfs receive -F` of a full stream replaces what it holds, so it must hold nothing.

Emptiness is decided from evidence, never from a failed read ("cannot tell" is "not empty"):
- no snapshots and no child datasets (the inventory);
- mounted: its directory, listed by the login itself (`ls -A`, never through sudo: the
  documented sudoers grants only zfs, pkill and pgrep), holds no entry. A directory the login
  cannot read proves nothing, and neither do the figures of a mounted dataset (zfs-fuse shows
  a file written there only at the next transaction group or unmount);
- unmounted: ZFS's own figure proves it: it references exactly what a freshly created dataset
  references on that zfs (FRESH_REFERENCED, measured), not a byte more;
- a volume (a block device: a VM's disk) has no files to list and no figure that proves it
  unused (a fresh one references 56 KiB on the OpenZFS guest, a partition table 4 KiB more):
  never empty. It has no children to receive below, and nothing to mount.

The verdict carries its figures (Emptiness); the refusal and each face's words name them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum

from .. import cmdline, zfs
from ..errors import PreflightError, PreflightReason
from ..hosts import Host
from ..units import KiB, format_size

# What a freshly created, never written file system references, by zfs dialect, measured:
# zfs-fuse 0.7 (the lab): 114688 bytes for every fresh dataset (compression on or off,
# mounted or never mounted; a pool's root before its first child); one 26-byte notes.txt
# makes it 118784 once unmounted. OpenZFS's figure depends on the pool's sector size (24 KiB
# at ashift 9, 96 KiB at ashift 12) and a small file can live inside its block pointer (0
# bytes more), so no figure proves an unmounted OpenZFS dataset empty: it is listed, or refused.
FRESH_REFERENCED = {"zfs-fuse": 112 * KiB}
# Mounted and listed empty: more than this referenced is data the listing cannot see (under
# another mount on top of it, or files deleted while still open).
EMPTY_MOUNTED = 1024 * KiB
SHOWN_ENTRIES = 5  # names kept of a listed directory


class Evidence(str, Enum):
    """How the verdict was reached."""

    LISTED_EMPTY = "listed_empty"  # mounted, listed by the login: no entry
    FRESH = "fresh"  # unmounted, references what a fresh dataset does on this zfs
    HOLDS = "holds"  # snapshots, children, entries, or more bytes than a fresh dataset
    UNREADABLE = "unreadable"  # mounted, but the login could not list its directory
    UNPROVEN = "unproven"  # unmounted, and no fresh figure is known for this zfs
    NOT_READ = "not_read"  # only the inventory was seen (its directory was not read)


@dataclass(frozen=True, slots=True)
class Listing:
    """What was read of the dataset's directory: mounted or not, and its entries."""

    mounted: bool
    path: str = ""
    entries: tuple[str, ...] | None = None  # None: not listed (unmounted, or refused)
    problem: str = ""  # why a mounted directory could not be listed

    @property
    def count(self) -> int | None:
        return None if self.entries is None else len(self.entries)


@dataclass(frozen=True, slots=True)
class Emptiness:
    """Whether the target is empty, and the figures that say so (or what it holds)."""

    dataset: str
    evidence: Evidence
    referenced: int = 0
    fresh: int | None = None  # what a fresh dataset references on this zfs (None: unknown)
    entries: tuple[str, ...] = ()  # the first names in its directory
    entry_count: int | None = None  # None: its directory was not listed
    snapshots: int = 0
    children: tuple[str, ...] = ()
    mounted: bool = False  # mounted now (so a full `zfs receive -F` replaces it mounted)
    path: str = ""
    problem: str = ""  # why its mounted directory could not be listed
    volume: bool = False  # a block device: no files to list, no children

    @property
    def empty(self) -> bool:
        return self.evidence in (Evidence.LISTED_EMPTY, Evidence.FRESH)

    @property
    def why(self) -> str:
        """The verdict in a few plain words (the engine's own messages use them)."""
        return holdings(self)

    def to_json(self) -> dict[str, object]:
        return {"dataset": self.dataset, "empty": self.empty, "evidence": self.evidence.value,
                "referenced": self.referenced, "fresh_referenced": self.fresh,
                "entries": list(self.entries), "entry_count": self.entry_count,
                "snapshots": self.snapshots, "children": list(self.children),
                "mounted": self.mounted, "path": self.path, "volume": self.volume}


def read_listing(host: Host, dataset: str) -> Listing:
    """Whether `dataset` is mounted, and its directory's entries as the login itself lists
    them (two reads at most: `zfs get mounted,mountpoint`, then `ls -A` of its directory)."""
    r = host.execute(host.privileged(["zfs", "get", "-H", "-o", "value", "mounted,mountpoint",
                                      cmdline.dataset(dataset)]), timeout=60)
    mounted, _, path = r.stdout.strip().partition("\n")
    path = path.strip()
    if not r.ok or mounted.strip() != "yes" or not path.startswith("/"):
        return Listing(False)
    # Never through sudo: the documented sudoers grants zfs, pkill and pgrep only.
    listing = host.execute(["ls", "-A", "--", path], timeout=60)
    if not listing.ok:
        lines = listing.stderr.strip().splitlines()
        return Listing(True, path, None, lines[-1] if lines else f"ls exit {listing.status}")
    return Listing(True, path, tuple(x for x in listing.stdout.splitlines() if x.strip()))


def judge(target: zfs.Dataset, datasets: list[zfs.Dataset] | tuple[zfs.Dataset, ...],
          listing: Listing, dialect: str) -> Emptiness:
    """`target` (with the destination's `datasets` around it) is empty, or what it holds, or
    that it cannot be told (which counts as not empty)."""
    children = tuple(d.name for d in datasets if cmdline.below(d.name, target.name))
    fresh = FRESH_REFERENCED.get(dialect)
    entries = listing.entries or ()
    base = Emptiness(target.name, Evidence.HOLDS, target.referenced, fresh,
                     entries[:SHOWN_ENTRIES], listing.count, len(target.snapshots), children,
                     listing.mounted, listing.path, listing.problem,
                     volume=target.type == "volume")
    if target.snapshots or children or entries:
        return base
    if base.volume:
        return _with(base, Evidence.UNPROVEN)
    if listing.mounted:
        if listing.entries is None:
            return _with(base, Evidence.UNREADABLE)
        if target.referenced > EMPTY_MOUNTED:
            return base  # data the listing cannot see
        return _with(base, Evidence.LISTED_EMPTY)
    if fresh is None:
        return _with(base, Evidence.UNPROVEN)
    return _with(base, Evidence.FRESH if target.referenced <= fresh else Evidence.HOLDS)


def unread(target: zfs.Dataset, datasets: list[zfs.Dataset] | tuple[zfs.Dataset, ...]
           ) -> Emptiness:
    """What the inventory alone says of `target` (its directory not read): never empty."""
    e = judge(target, datasets, Listing(False), "")
    return e if e.evidence is Evidence.HOLDS and (e.snapshots or e.children) \
        else _with(e, Evidence.NOT_READ)


def _with(e: Emptiness, evidence: Evidence) -> Emptiness:
    return replace(e, evidence=evidence)


def holdings(e: Emptiness) -> str:
    """What `e` found, in plain words: "it holds 1 file or folder (notes.txt), 116 KiB
    referenced", "it is not mounted and references 116 KiB, 4 KiB more than a fresh dataset"."""
    size = format_size(e.referenced)
    if e.evidence is Evidence.LISTED_EMPTY:
        return f"no snapshots, no children, its directory empty, {size} referenced"
    if e.evidence is Evidence.FRESH:
        return (f"no snapshots, no children, not mounted, {size} referenced: what a fresh "
                "dataset references")
    if e.evidence is Evidence.UNREADABLE:
        return (f"its directory {e.path} could not be listed ({e.problem}), so what it holds "
                f"cannot be told; {size} referenced")
    if e.evidence is Evidence.NOT_READ:
        return f"what it holds was not read; {size} referenced"
    if e.evidence is Evidence.UNPROVEN and e.volume:
        return (f"it is a volume (a block device), whose content cannot be listed, and {size} "
                "referenced does not prove it unused")
    if e.evidence is Evidence.UNPROVEN:
        return (f"it is not mounted, so its files cannot be listed, and {size} referenced "
                "does not prove it empty on this zfs")
    held: list[str] = []
    if e.entry_count:
        names = ", ".join(e.entries) + (", ..." if e.entry_count > len(e.entries) else "")
        held.append(f"{e.entry_count} file(s) or folder(s) ({names})")
    if e.snapshots:
        held.append(f"{e.snapshots} snapshot(s)")
    if e.children:
        held.append(f"{len(e.children)} child dataset(s), e.g. {e.children[0]}")
    if e.entry_count is None and e.fresh is not None and e.referenced > e.fresh:
        held.append(f"{size} referenced, {format_size(e.referenced - e.fresh)} more than a "
                    "fresh dataset (it is not mounted, so its files cannot be listed)")
    else:
        held.append(f"{size} referenced")
    return "it holds " + ", ".join(held)


def refusal(destination: str, emptiness: Emptiness | None, dst_label: str,
            ds_name: str, *, force_helps: bool = True) -> PreflightError:
    """The refusal of an existing destination that may hold data, with the ways out
    (`emptiness` None: it was not looked at; `force_helps` False: a tree's root, which
    --force never replaces)."""
    holds = f": {emptiness.why}" if emptiness is not None else " (with no snapshots)"
    below = f"{destination}/{ds_name.rsplit('/', 1)[-1]}" if ds_name else f"{destination}/NAME"
    pool_root = "/" not in destination
    volume = emptiness is not None and emptiness.volume
    unmounted = emptiness is not None and not emptiness.mounted and emptiness.children == () \
        and emptiness.snapshots == 0 and not volume
    # A volume has no children to receive below, and no files to empty.
    ways = ["pick another name"] if volume else [
        f"receive below it (e.g. {below})", "pick another name", "empty it first"]
    if unmounted:
        ways.append(f"mount it (zfs mount {destination}) so its files can be listed")
    if force_helps:
        ways.append(f"or pass --force to replace the whole content of {destination} with the "
                    "copy (what it holds is lost)")
    return PreflightError(
        f"the destination {destination} "
        + ("is a pool root that is not empty" if pool_root else "already exists") + holds,
        host=dst_label,
        fix=", ".join(ways),
        reason=PreflightReason.POOL_ROOT if pool_root else PreflightReason.NOT_EMPTY,
        figures={"dataset": destination, "below": below, "unmounted": "yes" if unmounted else "",
                 "force": "yes" if force_helps else "", "volume": "yes" if volume else ""},
    )
