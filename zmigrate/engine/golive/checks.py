"""What must hold before going live, checked before anything changes.

`check_ready`, pure: the copy is what a final sync leaves - the source read-only, the copy's
newest snapshot on the source with the same guid, and nothing written on the source since.
`check_paths_free`: between two hosts, where the copies will mount is not already in use on the
destination (another dataset's mountpoint, a folder holding files).
`busy_mountpoints`: which of the source's mountpoints a process holds (a file open, its working
directory), read from /proc in one command, so a busy one stops going live before the first
unmount instead of failing halfway.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .. import cmdline
from ..destination import mounts
from ..hosts import Host
from ..plain_words import first_few
from ..remedies import Remedy
from .cutover import GoLiveError, Prop, Props, datasets

_UNKNOWN = Prop("-", "-")


class NotReadyError(GoLiveError):
    """The copy is not a final sync's: going live would lose or hide what the source holds."""


Snapshots = dict[str, list[tuple[int, str, dict[str, Prop]]]]


def _snapshots(props: Props) -> Snapshots:
    """dataset -> (createtxg, short name, properties) of its snapshots, oldest first: one pass
    over `props`, not one per dataset (a big pool holds thousands of snapshots)."""
    out: Snapshots = {}
    for name, p in props.items():
        base, at, short = name.partition("@")
        if at:
            txg = p.get("createtxg", _UNKNOWN).value
            out.setdefault(base, []).append((int(txg) if txg.isdigit() else 0, short, p))
    for snaps in out.values():
        snaps.sort(key=lambda t: t[0])
    return out


def _written(p: dict[str, Prop]) -> int | None:
    """Bytes written since the previous snapshot; None where the host does not say."""
    value = p.get("written", _UNKNOWN).value
    return int(value) if value.isdigit() else None


def _problem(src: Props, s_name: str, theirs: Snapshots, copies_of: Snapshots,
             d_name: str) -> str | None:
    """Why `d_name` is not `s_name` as a final sync leaves it; None when it is."""
    readonly = src[s_name].get("readonly", _UNKNOWN)
    # zfs-fuse shows a mounted dataset's readonly from its mount options: `off temporary`
    # after `zfs set readonly=on`, though writes are refused. Only an unmasked off says no.
    if readonly.value != "on" and readonly.source != "temporary":
        return f"{s_name} is not read-only, so it may have changed since it was copied"
    copies = copies_of.get(d_name, [])
    if not copies:
        return f"{d_name} has no snapshot"
    newest = copies[-1][1]
    source_snaps = theirs.get(s_name, [])
    at = next((i for i, (_, short, _p) in enumerate(source_snaps) if short == newest), None)
    if at is None or source_snaps[at][2].get("guid") != copies[-1][2].get("guid"):
        return f"{d_name}@{newest} is not the same snapshot as on {s_name}"
    later = [(short, _written(p)) for _, short, p in source_snaps[at + 1:]]
    written = _written(src[s_name])
    if any(w is None or w > 0 for _, w in later) or (written or 0) > 0:
        return f"{s_name} has changed since @{newest}, the copy's newest snapshot"
    return None


def check_ready(src: Props, dst: Props, source_root: str, destination_root: str) -> None:
    """Raise NotReadyError unless every copied dataset is its source at the source's last
    state: read-only, verified at the same snapshot (guid), nothing written since."""
    problems: list[str] = []
    pairs = 0
    theirs, copies = _snapshots(src), _snapshots(dst)
    for s_name in sorted(datasets(src)):
        d_name = destination_root + s_name[len(source_root):]
        if d_name not in dst:
            continue  # not copied (excluded): going live leaves it alone
        pairs += 1
        problem = _problem(src, s_name, theirs, copies, d_name)
        if problem is not None:
            problems.append(problem)
    if not pairs:
        problems.append(f"nothing of {source_root} is in {destination_root}")
    if problems:
        raise NotReadyError(
            "the copy is not the source's last state: " + first_few(problems),
            remedies=(Remedy.FINAL_SYNC_FIRST,))


# One command, no user input in it: every process's working directory, root and open files.
_PROC_SCRIPT = "ls -l /proc/[0-9]*/cwd /proc/[0-9]*/root /proc/[0-9]*/fd 2>/dev/null; true"
_HEADING = re.compile(r"^/proc/(\d+)/fd:$")
_LINK = re.compile(r"/proc/(\d+)/(cwd|root)$")


@dataclass(frozen=True, slots=True)
class Holder:
    """A process holding a path under a mountpoint."""

    pid: int
    how: str  # "cwd", "root" or "fd"
    path: str


def parse_holders(text: str) -> list[Holder]:
    """`ls -l` of /proc/*/cwd, root and fd: every process and the path it holds."""
    out: list[Holder] = []
    pid = 0
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            pid = int(heading.group(1))
            continue
        left, arrow, target = line.partition(" -> ")
        if not arrow:
            continue
        target = target.removesuffix(" (deleted)")
        link = _LINK.search(left)
        if link:
            out.append(Holder(int(link.group(1)), link.group(2), target))
        elif pid:
            out.append(Holder(pid, "fd", target))
    return out


def _under(path: str, mountpoint: str) -> bool:
    return cmdline.within(path, mountpoint)


def holding(holders: Sequence[Holder], mountpoints: Sequence[str]) -> dict[str, list[Holder]]:
    """mountpoint -> the processes holding something there (each under its deepest one)."""
    out: dict[str, list[Holder]] = {}
    for h in holders:
        under = [m for m in mountpoints if m.startswith("/") and _under(h.path, m)]
        if under and not (h.how == "root" and h.path == "/"):
            out.setdefault(max(under, key=len), []).append(h)
    return out


def busy_mountpoints(host: Host, mountpoints: Sequence[str]) -> dict[str, list[Holder]]:
    """Which of `mountpoints` a process on `host` holds. Empty where /proc cannot be read (not
    Linux, no right to): then a busy one is found by its unmount failing, and undone."""
    if not mountpoints:
        return {}
    r = host.run(cmdline.join(host.privileged(["sh", "-c", _PROC_SCRIPT])), timeout=120)
    return holding(parse_holders(r.stdout), mountpoints) if r.ok else {}


def refuse_busy(host: Host, busy: dict[str, list[Holder]], *, back: bool = False) -> None:
    """Raise the GoLiveError naming each busy mountpoint and its processes (`back`: of the
    live copy, which going back unmounts)."""
    pids = sorted({h.pid for hs in busy.values() for h in hs})
    names = _process_names(host, pids)
    said = []
    for mp, hs in sorted(busy.items()):
        who = ", ".join(sorted({f"PID {h.pid}" + (f" ({names[h.pid]})" if h.pid in names
                                                   else "") for h in hs}))
        said.append(f"{mp} is in use by {who}")
    what = "going back unmounts the live copy" if back else "going live unmounts the source"
    raise GoLiveError(
        f"{what} here, and a process is using it: " + "; ".join(said)
        + "; nothing was changed",
        host=host.label,
        fix="stop those processes (or leave those folders: a shell's working directory "
        f"counts), then go {'back' if back else 'live'} again")


def _process_names(host: Host, pids: Sequence[int]) -> dict[int, str]:
    """PID -> command name, from one `ps` (empty where ps says nothing)."""
    if not pids:
        return {}
    r = host.execute(["ps", "-o", "pid=,comm=", "-p", ",".join(str(p) for p in pids)],
                     timeout=60)
    out: dict[int, str] = {}
    for line in r.stdout.splitlines():
        pid, _, comm = line.strip().partition(" ")
        if pid.isdigit() and comm.strip():
            out[int(pid)] = comm.strip()
    return out


def live_paths(src: Props, source_root: str, destination_root: str,
               mount_root: str | None) -> dict[str, str]:
    """copy -> the path it mounts on once live: its source's (as the copy is made like it),
    or its place under `mount_root`; only the copies that mount (canmount=on, a path)."""
    out: dict[str, str] = {}
    for name, props in datasets(src).items():
        mp, canmount = props.get("mountpoint", _UNKNOWN), props.get("canmount", _UNKNOWN)
        if canmount.value != "on" or not mp.value.startswith("/") \
                or not cmdline.within(name, source_root):
            continue
        rel = posixpath.relpath(name, source_root)
        path = mp.value if mount_root is None else posixpath.normpath(
            posixpath.join(mount_root, rel))
        out[destination_root + name[len(source_root):]] = path
    return out


def check_paths_free(dst: Host, src: Props, dst_props: Props, source_root: str,
                     destination_root: str, mount_root: str | None,
                     one_machine_as: str | None = None) -> None:
    """Two hosts: refuse, before anything changes, a copy that would mount where the
    destination already has something mounted or a folder holding files. `one_machine_as`:
    the source's name where its probe found the destination's very machine (two names for
    one host: the refusal says how to swap the copy in place instead)."""
    copies = datasets(dst_props)
    paths = {d: p for d, p in live_paths(src, source_root, destination_root, mount_root).items()
             if d in copies}
    clashes = mounts.paths_in_use(dst, paths, own=[destination_root])
    if not clashes:
        return
    if one_machine_as is None:
        raise mounts.collision(
            dst.label, paths, clashes, "going live",
            "go live under a folder of your choice where nothing is mounted (--mount-root "
            "PATH), or free those paths on the destination; nothing was changed", "golive")
    raise mounts.collision(
        dst.label, paths, clashes, "going live",
        f"{one_machine_as} and {dst.label} are one machine (the same boot, as probed): name "
        f"the source {dst.label}:{source_root} so going live swaps the copy in place of it, "
        "or go live under --mount-root PATH; nothing was changed", "golive_one_machine",
        source=one_machine_as)
