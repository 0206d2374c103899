"""The invariant "nothing lost unseen": around an e2e operation, the destination's datasets,
snapshots and files (of each filesystem mounted before and after) are listed before and after,
and everything that disappeared or became hidden must be on the list the plan showed (its
`destroys`, from the --json plan events or the engine's plan).

A file counts as lost when it is gone from its dataset's mounted tree (walked without crossing
into other mounts, so a dataset mounted over a directory hides that directory's files): unless
its dataset's content or the dataset itself is on the list.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
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


def _files(mountpoint: Path) -> frozenset[str]:
    """Relative paths of the files under `mountpoint`, on its own file system only."""
    dev = mountpoint.stat().st_dev
    out: set[str] = set()
    for here, dirs, names in os.walk(mountpoint):
        dirs[:] = [d for d in dirs if d != ".zfs"
                   and os.lstat(os.path.join(here, d)).st_dev == dev]
        out.update(os.path.relpath(os.path.join(here, n), mountpoint) for n in names)
    return frozenset(out)


def read_state(root: str) -> DestinationState:
    """`root` and everything under it on the (local, zfs-fuse) destination, as it is now."""
    lines = zfs("list", "-H", "-r", "-t", "filesystem,volume,snapshot", "-o",
                "name,mounted,mountpoint", root).splitlines() if dataset_exists(root) else []
    datasets, snapshots, files = set(), set(), {}
    for line in lines:
        name, mounted, mountpoint = line.split("\t")
        if "@" in name:
            snapshots.add(name)
            continue
        datasets.add(name)
        if mounted == "yes" and mountpoint.startswith("/") and Path(mountpoint).is_dir():
            files[name] = _files(Path(mountpoint))
    return DestinationState(frozenset(datasets), frozenset(snapshots), files)


def shown_in_json(stdout: str) -> list[dict[str, Any]]:
    """Every loss the --json output's plan events (a dataset's `plan`, a tree's `tree_plan`)
    showed."""
    out: list[dict[str, Any]] = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        if event.get("event") in ("plan", "tree_plan"):
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

    def dataset_listed(name: str) -> bool:
        return any(name == d or name.startswith(d + "/") for d in gone_sets)

    out = [f"dataset {d}" for d in sorted(before.datasets - after.datasets)
           if not dataset_listed(d)]
    out += [f"snapshot {s}" for s in sorted(before.snapshots - after.snapshots)
            if s not in snaps and not dataset_listed(s.split("@")[0])]
    for name, files in sorted(before.files.items()):
        if name in replaced or dataset_listed(name) or name not in after.files:
            continue  # (unmounted after: its files are not comparable; a receive may do so)
        out += [f"file {name}:{f}" for f in sorted(files - after.files[name])]
    return out


class LossWatch:
    """The invariant around one operation: `start()` before it, `check(shown)` after."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.before: DestinationState | None = None
        self.after: DestinationState | None = None

    def read(self) -> DestinationState:
        """The destination as it is now (a watch of a remote destination reads it there)."""
        return read_state(self.root)

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
