"""Unit tests for engine.tree's planner: which datasets, in which order, and what each one gets."""

from __future__ import annotations

import pytest

from zmigrate.engine.errors import InvalidNameError
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree import TreeRequest, pick, plan_tree, snapshot_name
from zmigrate.engine.zfs import Dataset, Snapshot


def _ds(name: str, *snaps: tuple[str, int], type_: str = "filesystem") -> Dataset:
    return Dataset(name, type_, hash(name) & 0xFFFF, 100, 50, 1000, 0,
                   [Snapshot(f"{name}@{s}", guid, i, i, 1, 1)
                    for i, (s, guid) in enumerate(snaps)])


SRC = [_ds("tank"), _ds("tank/a", ("s1", 11)), _ds("tank/a/x", ("s1", 12)),
       _ds("tank/a-b", ("s1", 13)), _ds("tank/b", ("s1", 14)), _ds("tank/b/y", ("s1", 15)),
       _ds("tank/vol", ("s1", 16), type_="volume")]


def test_pick_takes_parents_first_and_leaves_excluded_subtrees_out() -> None:
    picked, excluded = pick(SRC, "tank/a")
    assert [d.name for d in picked] == ["tank/a", "tank/a/x"]
    assert excluded == []
    picked, excluded = pick(list(reversed(SRC)), "tank", ["tank/b"])
    assert [d.name for d in picked] == ["tank", "tank/a", "tank/a/x", "tank/a-b", "tank/vol"]
    assert excluded == ["tank/b", "tank/b/y"]


@pytest.mark.parametrize("exclude", ["tank", "tank/nope", "other/a"])
def test_an_exclude_outside_the_tree_is_an_error_not_a_silent_copy(exclude: str) -> None:
    with pytest.raises(InvalidNameError):
        pick(SRC, "tank", [exclude])


def test_snapshot_name_is_utc_and_sortable() -> None:
    assert snapshot_name(0) == "zmigrate-19700101-000000"
    assert snapshot_name(86400 * 365) > snapshot_name(0)


def test_plan_decides_full_incremental_skip_and_reports_vanished() -> None:
    host = LocalHost()
    dst = [_ds("bk/t", ("s1", 999)),  # no common guid with tank (no snapshot there)
           _ds("bk/t/a", ("s0", 10), ("s1", 11)),  # already has s1: skip
           _ds("bk/t/b", ("s0", 14)),  # guid 14 is tank/b@s1... common: incremental
           _ds("bk/t/gone", ("s1", 77))]
    src = [*SRC[:4], _ds("tank/b", ("s1", 14), ("s2", 24)), SRC[5], SRC[6]]
    req = TreeRequest(root="tank", destination="bk/t", snapshot="s2")
    plan = plan_tree(host, host, req, src, dst, snapshot="s2", unmounted=True)
    by = {e.source: e for e in plan.entries}
    assert by["tank/b"].action == "incremental" and by["tank/b"].reason == "from @s1"
    assert by["tank/a"].action == "skip" and "no @s2" in by["tank/a"].reason
    assert by["tank/vol"].type == "volume"
    assert plan.vanished == ("bk/t/gone",)
    assert plan.snapshot_command is None and plan.readonly_command is None


def test_snapshot_now_is_recursive_unless_children_are_left_out() -> None:
    host = LocalHost()
    whole = plan_tree(host, host, TreeRequest("tank", "bk/t"), SRC, [], snapshot="zmigrate-1",
                      unmounted=True)
    assert whole.snapshot_command == "zfs snapshot -r tank@zmigrate-1"
    part = plan_tree(host, host, TreeRequest("tank", "bk/t", excludes=("tank/b",), final=True),
                     SRC, [], snapshot="zmigrate-1", unmounted=True)
    assert part.snapshot_command is not None
    assert "tank/b@" not in part.snapshot_command and "-r" not in part.snapshot_command.split()
    assert part.snapshot_command.count("zfs snapshot") == 5
    assert part.readonly_command is not None
    assert part.readonly_command.count("zfs set readonly=on") == 5
    assert all(e.action == "full" for e in part.entries)
