"""The invariant "nothing lost unseen": around an e2e operation, the destination's datasets,
snapshots and files (of each filesystem mounted before and after) are listed before and after,
and everything that disappeared or became hidden must be on the list the plan showed (its
`destroys`, from the --json plan events or the engine's plan).

A file counts as lost when it is gone from its dataset's mounted tree (walked without crossing
into other mounts, so a dataset mounted over a directory hides that directory's files): unless
its dataset's content or the dataset itself is on the list, or (hidden) the folder it is in.
A dataset holding files that is no longer mounted after has its files hidden: it must be on
the list as unmounted (or its content or itself as destroyed). Folders outside any dataset
(`folders`: where a copy may mount, say) are watched the same way.

Going live and back change both hosts: a watch of each pool (the lab's hosts are one machine).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .util import dataset_exists, zfs


@dataclass(frozen=True)
class DestinationState:
    """What a destination held under a root: datasets, snapshots, each mounted one's files."""

    datasets: frozenset[str]
    snapshots: frozenset[str]
    files: Mapping[str, frozenset[str]] = field(default_factory=dict)
    mountpoints: Mapping[str, str] = field(default_factory=dict)  # of the mounted ones
    folders: Mapping[str, frozenset[str]] = field(default_factory=dict)  # watched folders


def _files(mountpoint: Path) -> frozenset[str]:
    """Relative paths of the files under `mountpoint`, on its own file system only."""
    dev = mountpoint.stat().st_dev
    out: set[str] = set()
    for here, dirs, names in os.walk(mountpoint):
        dirs[:] = [d for d in dirs if d != ".zfs"
                   and os.lstat(os.path.join(here, d)).st_dev == dev]
        out.update(os.path.relpath(os.path.join(here, n), mountpoint) for n in names)
    return frozenset(out)


def read_state(root: str, folders: Sequence[Path] = ()) -> DestinationState:
    """`root` and everything under it on the (local, zfs-fuse) destination, as it is now, and
    the files of each of `folders` (on its own file system)."""
    lines = zfs("list", "-H", "-r", "-t", "filesystem,volume,snapshot", "-o",
                "name,mounted,mountpoint", root).splitlines() if dataset_exists(root) else []
    datasets, snapshots, files, mountpoints = set(), set(), {}, {}
    for line in lines:
        name, mounted, mountpoint = line.split("\t")
        if "@" in name:
            snapshots.add(name)
            continue
        datasets.add(name)
        if mounted == "yes" and mountpoint.startswith("/") and Path(mountpoint).is_dir():
            files[name] = _files(Path(mountpoint))
            mountpoints[name] = mountpoint
    watched = {str(f): _files(f) if f.is_dir() else frozenset() for f in folders}
    return DestinationState(frozenset(datasets), frozenset(snapshots), files, mountpoints,
                            watched)


def shown_in_json(stdout: str) -> list[dict[str, Any]]:
    """Every loss the --json output's plan events showed (a dataset's `plan`, a tree's
    `tree_plan`, go-live's `go_live_plan`, going back's `go_back_plan`, the doctor's
    `doctor_plan`)."""
    out: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("event") in ("plan", "tree_plan", "go_live_plan", "go_back_plan",
                                  "doctor_plan"):
            out += event.get("destroys", [])
    return out


def _as_dicts(shown: Iterable[Any]) -> list[dict[str, Any]]:
    return [x if isinstance(x, dict) else x.to_json() for x in shown]


def unseen_losses(before: DestinationState, after: DestinationState,
                  shown: Iterable[Any]) -> list[str]:
    """What disappeared or became hidden between `before` and `after` that `shown` (Loss
    objects or their JSON) does not name."""
    listed = _as_dicts(shown)
    gone_sets = {x["name"] for x in listed if x["kind"] in ("dataset", "partial")}
    snaps = {x["name"] for x in listed if x["kind"] == "snapshot"}
    replaced = {x["name"] for x in listed if x["kind"] == "content"} | gone_sets
    unmounted = {x["name"] for x in listed if x["kind"] == "unmounted"} | replaced
    hidden = [x["name"].rstrip("/") for x in listed if x["kind"] == "hidden"]

    def dataset_listed(name: str) -> bool:
        return any(name == d or name.startswith(d + "/") for d in gone_sets)

    def under_hidden(path: str) -> bool:
        return any(path == h or path.startswith(h + "/") for h in hidden)

    out = [f"dataset {d}" for d in sorted(before.datasets - after.datasets)
           if not dataset_listed(d)]
    out += [f"snapshot {s}" for s in sorted(before.snapshots - after.snapshots)
            if s not in snaps and not dataset_listed(s.split("@")[0])]
    for name, files in sorted(before.files.items()):
        if name in replaced or dataset_listed(name):
            continue
        if name not in after.files:  # unmounted after: its files hidden, if it has any
            if files and name in after.datasets and name not in unmounted:
                out.append(f"unmounted {name} ({len(files)} file(s) hidden)")
            continue
        top = before.mountpoints.get(name, "")
        out += [f"file {name}:{f}" for f in sorted(files - after.files[name])
                if not (top and under_hidden(os.path.join(top, f)))]
    for folder, files in sorted(before.folders.items()):
        out += [f"file {os.path.join(folder, f)}" for f in sorted(
            files - after.folders.get(folder, frozenset()))
            if not under_hidden(os.path.join(folder, f))]
    return out


class LossWatch:
    """The invariant around one operation: `start()` before it, `check(shown)` after."""

    def __init__(self, root: str, folders: Sequence[Path] = ()) -> None:
        self.root = root
        self.folders = tuple(folders)
        self.before: DestinationState | None = None
        self.after: DestinationState | None = None

    def read(self) -> DestinationState:
        """The destination as it is now (a watch of a remote destination reads it there)."""
        return read_state(self.root, self.folders)

    def start(self) -> DestinationState:
        self.before = self.read()
        return self.before

    def check(self, shown: Iterable[Any]) -> DestinationState:
        """Raise AssertionError naming whatever was lost without being shown."""
        assert self.before is not None, "start() was not called before the operation"
        self.after = self.read()
        unseen = unseen_losses(self.before, self.after, shown)
        assert not unseen, f"lost without being on the plan's list: {unseen}"
        return self.after

    def check_json(self, stdout: str) -> DestinationState:
        """`check` against the plan events of a --json run."""
        return self.check(shown_in_json(stdout))
