"""A zfs-fuse catch-up's snapshot taken and measured while the copy is read (tree_ahead): only
for a run that takes its snapshot now, on a zfs without `written`, of a whole tree; kept when
the plan takes the same snapshot, taken back otherwise."""

from __future__ import annotations

import threading
from dataclasses import replace

from test_tree_unchanged import DST, SRC, _caps

from zmigrate.engine.hosts import CommandResult, LocalHost
from zmigrate.engine.tree import TreeRequest, plan_tree
from zmigrate.engine.tree.running.ahead import Ahead


class Recording(LocalHost):
    """Runs nothing: records each line, and answers the measuring loop with `empty`."""

    def __init__(self, empty: str = "") -> None:
        super().__init__("src")
        self.lines: list[str] = []
        self._empty = empty
        self._lock = threading.Lock()

    def run(self, line: str, *, timeout: float = 120.0,
            stdin: bytes | None = None) -> CommandResult:
        with self._lock:
            self.lines.append(line)
        out = self._empty if "send -i" in line else ""
        return CommandResult(self.label, line, 0, out, "")


def _ahead(host: Recording, request: TreeRequest, dialect: str = "zfs-fuse") -> Ahead:
    return Ahead(host, _caps(dialect), request, "zmigrate-1", lambda _e: None)


def test_a_catch_up_on_zfs_fuse_takes_and_measures_its_snapshot_ahead_and_keeps_it() -> None:
    host = Recording(empty="tank/a@zmigrate-1\ntank/b@zmigrate-1\n")
    request = TreeRequest("tank", "bk/t", None)
    ahead = _ahead(host, request)
    ahead(SRC)
    assert host.lines[0] == "zfs snapshot -r tank@zmigrate-1"
    plan = plan_tree(LocalHost(), LocalHost(), request, SRC, DST, snapshot="zmigrate-1",
                     unmounted=True)
    assert ahead.owns(plan)
    assert ahead.empty == {"tank/a", "tank/b"}  # as measured; the plan keeps what it measures
    measured = next(x for x in host.lines if "send -i" in x)
    assert "tank/b@sanoid-hourly tank/b@zmigrate-1" in measured  # each one's newest
    assert not [x for x in host.lines if "destroy" in x]


def test_nothing_is_taken_ahead_for_a_final_sync_a_named_snapshot_excludes_or_written() -> None:
    for request, dialect in ((TreeRequest("tank", "bk/t", None, final=True), "zfs-fuse"),
                             (TreeRequest("tank", "bk/t", "s1"), "zfs-fuse"),
                             (TreeRequest("tank", "bk/t", None, excludes=("tank/c",)),
                              "zfs-fuse"),
                             (TreeRequest("tank", "bk/t", None), "openzfs-2.3")):
        host = Recording()
        ahead = _ahead(host, request, dialect)
        ahead(SRC)
        assert host.lines == [] and ahead.command is None, (request, dialect)
        assert ahead.empty == set()


def test_a_snapshot_taken_ahead_that_the_plan_does_not_take_is_taken_back() -> None:
    host = Recording()
    request = TreeRequest("tank", "bk/t", None)
    ahead = _ahead(host, request)
    ahead(SRC)
    ahead(SRC)  # read again (leftovers stopped): taken once
    assert [x for x in host.lines if "snapshot -r" in x] == ["zfs snapshot -r tank@zmigrate-1"]
    plan = plan_tree(LocalHost(), LocalHost(), request, SRC, DST, snapshot="zmigrate-1",
                     unmounted=True)
    assert not ahead.owns(replace(plan, snapshot_command="zfs snapshot tank@zmigrate-1"))
    assert host.lines[-1] == "zfs destroy -r tank@zmigrate-1"
    assert ahead.command is None
    ahead.take_back()  # once only
    assert host.lines[-1] == "zfs destroy -r tank@zmigrate-1" and len(
        [x for x in host.lines if "destroy" in x]) == 1
