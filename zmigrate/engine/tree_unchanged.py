"""Datasets a catch-up leaves as they are: nothing written since the copy's newest snapshot.

The plan finds them from `written` in the inventory (tree_plan._unchanged), but `written`
counts only what the pool has synced: a file saved a second ago may not show yet. So before
the run takes its snapshot, the pool is synced and `written` read again for just those
datasets (one command); any that did change after all is planned again as an incremental.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from . import shell, zfs
from .hosts import Host
from .tree_plan import TreePlan


def written_after_sync(src: Host, plan: TreePlan) -> dict[str, int]:
    """{dataset: bytes written} for the plan's unchanged datasets that were written to after
    all, once their pool has synced (`zpool sync`, else `sync`)."""
    names = [e.source for e in plan.unchanged]
    if not names:
        return {}
    pool = plan.root.split("/", 1)[0]
    sync = (shell.join(src.privileged(["zpool", "sync", shell.dataset(pool)]))
            + " 2>/dev/null || sync")
    get = shell.join(src.privileged(["zfs", "get", "-Hp", "-o", "name,property,value",
                                     "written", *map(shell.dataset, names)]))
    result = src.run(f"{{ {sync}; }} && {get}", timeout=120)
    if not result.ok:
        raise zfs.classify_zfs_error(result.host, "reading what was written", result.stderr,
                                     result.command, result.status)
    got = zfs.parse_get(result.stdout)
    changed = {}
    for name in names:
        value = got.get(name, {}).get("written", "")
        # Unreadable counts as changed: sending it costs a moment, leaving it could miss data.
        written = int(value) if value.isdigit() else -1
        if written != 0:
            changed[name] = max(written, 0)
    return changed


def with_written(src_sets: Sequence[zfs.Dataset],
                 written: dict[str, int]) -> list[zfs.Dataset]:
    """`src_sets` with the `written` figures read again."""
    return [replace(d, written=written[d.name]) if d.name in written else d for d in src_sets]
