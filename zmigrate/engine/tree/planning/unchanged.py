"""Datasets a catch-up leaves as they are: nothing written since the copy's newest snapshot.

The plan finds them from `written` in the inventory (planning/plan._unchanged), but `written`
counts only what the pool has synced: a file saved a second ago may not show yet. So before
the run takes its snapshot, the pool is synced and `written` read again for just those
datasets (one command); any that did change after all is planned again as an incremental.

A zfs without `written` (zfs-fuse) cannot say before: there the catch-up takes its snapshot of
the whole tree, measures each dataset's increment since the copy's newest snapshot (one command
for all), and removes the snapshot it has just taken where that increment is empty (it holds
nothing the copy's snapshot does not); those datasets are then left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ... import cmdline, zfs
from ...errors import ZmigrateError
from ...events import Observer, StageChanged
from ...hosts import Host
from .plan import TreePlan, TreeRequest, recursive_snapshot

# An incremental stream with nothing in it: its BEGIN and END records, 312 bytes each (measured
# on zfs-fuse; a stream of any other shape has more, or other, records and is sent).
EMPTY_INCREMENT = 624


def written_after_sync(src: Host, root: str, names: Sequence[str]) -> dict[str, int]:
    """{dataset: bytes written} for `names` (the ones the inventory says are unchanged:
    plan.unchanged_candidates) that were written to after all, once their pool has synced
    (`zpool sync`, else `sync`)."""
    if not names:
        return {}
    pool = root.split("/", 1)[0]
    sync = (cmdline.join(src.privileged(["zpool", "sync", cmdline.dataset(pool)]))
            + " 2>/dev/null || sync")
    get = cmdline.join(src.privileged(["zfs", "get", "-Hp", "-o", "name,property,value",
                                     "written", *map(cmdline.dataset, names)]))
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


def measures_empty(caps: zfs.Capabilities, request: TreeRequest, plan: TreePlan,
                   src_sets: Sequence[zfs.Dataset]) -> bool:
    """A catch-up taking a new snapshot on a zfs that cannot say what was written: which
    datasets changed is measured once the snapshot exists (`drop_empty`). Not for a final
    sync: go-live wants every dataset at its snapshot."""
    return (request.snapshot is None and not request.final and plan.snapshot_command is not None
            and "written" not in caps.properties and len(_increments(plan, src_sets)) > 1)


def _increments(plan: TreePlan, src_sets: Sequence[zfs.Dataset]) -> list[tuple[str, str]]:
    """(base, new) snapshot names of the plan's plain incrementals whose base is both the
    copy's newest snapshot and the source's (`src_sets`, read before the run's snapshot):
    one with a newer snapshot on the source (another tool's) goes, to carry it."""
    newest = {d.name: d.snapshots[-1].short for d in src_sets if d.snapshots}
    return [(f"{e.source}@{e.base}", f"{e.source}@{plan.snapshot}") for e in plan.entries
            if e.action == "incremental" and e.base is not None and not e.resume
            and newest.get(e.source) == e.base]


MEASURE_WAYS = 4  # loops measuring at once


def drop_empty(src: Host, plan: TreePlan, src_sets: Sequence[zfs.Dataset],
               measured: set[str] | None = None) -> set[str]:
    """The datasets whose increment to the snapshot just taken is empty, that snapshot removed
    from them (it is this run's own and holds nothing new; where it cannot be removed, the
    dataset is sent as planned). Measured in one command for the tree, each send read only as
    far as its first bytes past an empty stream, never the whole delta (unless `measured`
    already: the empty ones of a superset of these increments, tree_ahead); removed in
    another."""
    pairs = _increments(plan, src_sets)
    if measured is None:
        empty = measure_empty(src, pairs)
    else:
        empty = measured & {new.split("@")[0] for _, new in pairs}
    if not empty:
        return set()
    taken = [d.name for d in src_sets if cmdline.within(d.name, plan.root)]
    recursive = plan.snapshot_command == recursive_snapshot(src, plan.root, plan.snapshot)
    if recursive and len(empty) > len(taken) / 2:
        return _take_back_recursive(src, plan, empty, taken)
    return _take_back_each(src, plan.snapshot, empty)


def measure_empty(src: Host, pairs: Sequence[tuple[str, str]]) -> set[str]:
    """The datasets of `pairs` (base, new) whose increment is empty."""
    zfs_cmd = cmdline.join(src.privileged(["zfs"]))
    # A send that fails adds "x", so it never measures as empty.
    body = (f'n=$({{ {zfs_cmd} send -i "$1" "$2" 2>/dev/null || echo x; }} '
            f'| head -c {EMPTY_INCREMENT + 1} | wc -c); '
            f'if [ "$n" -eq {EMPTY_INCREMENT} ]; then printf "%s\\n" "$2"; fi')
    items = [[cmdline.snapshot(n) for n in pair] for pair in pairs]
    return _in_loops(src, body, items, "measuring what changed")


def _take_back_each(src: Host, snapshot: str, empty: set[str]) -> set[str]:
    """The snapshot @`snapshot` destroyed on each of `empty`: those it could be destroyed on."""
    zfs_cmd = cmdline.join(src.privileged(["zfs"]))
    body = f'{zfs_cmd} destroy "$1" >/dev/null 2>&1 && printf "%s\\n" "$1"'
    items = [[cmdline.snapshot(f"{n}@{snapshot}")] for n in sorted(empty)]
    return _in_loops(src, body, items, None)


def _in_loops(src: Host, body: str, items: Sequence[Sequence[str]],
              what: str | None) -> set[str]:
    """`body` (a shell snippet over $1, $2...) run for each of `items` (its arguments, the
    same count for each) in a few loops at once, one command: each `zfs` in it mostly waits
    on the pool (on zfs-fuse 200 sends took 1.2-1.4 s in one loop, 0.8 s in four). The
    datasets of the snapshots it printed; a failure is raised as `what` (None: what printed
    is the answer)."""
    per = len(items[0]) if items else 1
    loop = f'f() {{ while [ "$#" -ge {per} ]; do {body}; shift {per}; done; }}; '
    ways = MEASURE_WAYS if len(items) >= 2 * MEASURE_WAYS else 1
    runs = [cmdline.join(["f", *(a for item in items[k::ways] for a in item)])
            for k in range(ways)]
    result = src.run(cmdline.join(["sh", "-c", loop + " & ".join(runs) + " & wait"]),
                     timeout=60 + 2 * len(items))
    if what is not None and not result.ok:
        raise zfs.classify_zfs_error(result.host, what, result.stderr, result.command,
                                     result.status)
    return {line.split("@")[0] for line in result.stdout.splitlines() if "@" in line}


def _take_back_recursive(src: Host, plan: TreePlan, empty: set[str],
                         taken: Sequence[str]) -> set[str]:
    """Where most increments are empty: the tree's snapshot destroyed at once (`destroy -r`,
    one pool transaction; one destroy per dataset waits on the pool each time) and taken
    again on the others. Nothing is dropped if it cannot be destroyed; a dataset it cannot be
    taken on again is an error (the run just took it there)."""
    again = [n for n in taken if n not in empty]
    take = src.privileged(["zfs", "snapshot"])
    retake = "".join(
        f"; {cmdline.join([*take, cmdline.snapshot(f'{n}@{plan.snapshot}')])} >/dev/null 2>&1"
        f" || printf '!%s\\n' {cmdline.dataset(n)}" for n in again)
    destroy = cmdline.join(src.privileged(
        ["zfs", "destroy", "-r", cmdline.snapshot(f"{plan.root}@{plan.snapshot}")]))
    result = src.run(f"if {destroy} >/dev/null 2>&1; then :{retake}; else echo kept; fi",
                     timeout=60 + len(again))
    lines = result.stdout.splitlines()
    if "kept" in lines:
        return set()
    lost = [line[1:] for line in lines if line.startswith("!")]
    if lost:
        raise ZmigrateError(
            f"the snapshot @{plan.snapshot}, removed from the tree to leave the unchanged "
            f"datasets as they were, could not be taken again on {', '.join(lost)}",
            host=src.label,
            fix=f"take it by hand (zfs snapshot DATASET@{plan.snapshot}) and run again")
    return empty


def leave_empty(src: Host, plan: TreePlan, src_sets: Sequence[zfs.Dataset],
                replan: Callable[[list[zfs.Dataset]], TreePlan],
                emit: Observer, measured: set[str] | None = None) -> TreePlan:
    """(A zfs without `written`, the run's snapshot just taken) The plan again (`replan`, from
    `src_sets` as read before the snapshot) with the datasets whose increment to it is empty
    left as they are, that snapshot removed from them (`drop_empty`; `measured`: see there)."""
    if measured is None:
        emit(StageChanged("preflight", "measuring what changed since the copy's newest "
                          "snapshot"))
    empty = drop_empty(src, plan, src_sets, measured)
    if not empty:
        return plan
    emit(StageChanged("preflight", (
        f"{len(empty)} dataset(s) unchanged since the copy's newest snapshot: nothing to send; "
        f"the snapshot @{plan.snapshot} taken on them held nothing new and was removed")))
    again = replan(with_written(src_sets, dict.fromkeys(empty, 0)))
    return replace(again, snapshot_command=plan.snapshot_command)
