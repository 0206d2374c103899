"""Whether an existing destination dataset (a new pool's root, typically) may take a copy as
itself: `zfs receive -F` of a full stream replaces what it holds, so it must hold nothing.

Empty means: no snapshots, no child datasets, and no data. A mounted dataset's directory is
listed (`ls -A`); an unmounted one must reference no more than a fresh dataset does.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cmdline, zfs
from .errors import PreflightError, PreflightReason
from .hosts import Host
from .units import KiB, format_size

# What a fresh, empty file system references (its root directory and metadata): 24-112 KiB on
# OpenZFS and zfs-fuse. Unmounted, nothing more may be there; mounted, its directory says.
EMPTY_UNMOUNTED = 160 * KiB
EMPTY_MOUNTED = 1024 * KiB


@dataclass(frozen=True, slots=True)
class Emptiness:
    """Whether the target is empty, and the facts that say so (or what it holds)."""

    empty: bool
    why: str  # "no snapshots, no children, its directory empty (112.0 KiB)"
    mounted: bool = False  # its directory was listed (so `zfs receive -F` must unmount it)


def read_entries(host: Host, dataset: str) -> int | None:
    """How many entries the mounted dataset's directory holds; None when it is not mounted.

    Two reads at most: `zfs get mounted,mountpoint`, then `ls -A` of a mounted directory."""
    r = host.execute(host.privileged(["zfs", "get", "-H", "-o", "value", "mounted,mountpoint",
                                      cmdline.dataset(dataset)]), timeout=60)
    mounted, _, path = r.stdout.strip().partition("\n")
    if not r.ok or mounted.strip() != "yes" or not path.startswith("/"):
        return None
    listing = host.execute(host.privileged(["ls", "-A", "--", path.strip()]), timeout=60)
    if not listing.ok:
        return None
    return len([x for x in listing.stdout.splitlines() if x.strip()])


def judge(target: zfs.Dataset, datasets: list[zfs.Dataset] | tuple[zfs.Dataset, ...],
          entries: int | None) -> Emptiness:
    """`target` (with the destination's `datasets` around it) is empty, or what it holds."""
    children = [d.name for d in datasets if cmdline.below(d.name, target.name)]
    size = format_size(target.referenced)
    held: list[str] = []
    if target.snapshots:
        held.append(f"{len(target.snapshots)} snapshot(s)")
    if children:
        held.append(f"{len(children)} child dataset(s), e.g. {children[0]}")
    if entries:
        held.append(f"{entries} file(s) or folder(s) in its directory")
    elif entries is None and target.referenced > EMPTY_UNMOUNTED:
        held.append(f"{size} of data (it is not mounted, so its files cannot be listed)")
    elif target.referenced > EMPTY_MOUNTED:
        held.append(f"{size} of data")
    if held:
        return Emptiness(False, "it holds " + ", ".join(held))
    where = "its directory empty" if entries == 0 else "not mounted"
    return Emptiness(True, f"no snapshots, no children, {where}, {size}",
                     mounted=entries is not None)


def refusal(destination: str, emptiness: Emptiness | None, dst_label: str,
               ds_name: str) -> PreflightError:
    """The refusal of an existing destination that may hold data, with the ways out
    (`emptiness` None: it was not looked at)."""
    holds = f": {emptiness.why}" if emptiness is not None else " (with no snapshots)"
    below = f"{destination}/{ds_name.rsplit('/', 1)[-1]}" if ds_name else f"{destination}/NAME"
    pool_root = "/" not in destination
    return PreflightError(
        f"the destination {destination} "
        + ("is a pool root that is not empty" if pool_root else "already exists") + holds,
        host=dst_label,
        fix=f"receive below it (e.g. {below}), empty it first, or pass --force to overwrite "
        "it (what it holds is lost)",
        reason=PreflightReason.POOL_ROOT if pool_root else PreflightReason.NOT_EMPTY,
    )
