"""Which catch-ups measure their increments once the snapshot is taken (a zfs without
`written`), and which datasets they may leave: only one whose base is the newest snapshot on
both sides (a newer snapshot on the source, another tool's, must be carried)."""

from __future__ import annotations

from pathlib import Path

from zmigrate.engine import zfs
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree import TreeRequest, plan_tree
from zmigrate.engine.tree.planning.unchanged import _increments, measures_empty
from zmigrate.engine.zfs import Dataset, Snapshot

DATA = Path(__file__).resolve().parent.parent / "data" / "zfs"


def _ds(name: str, *snaps: tuple[str, int]) -> Dataset:
    return Dataset(name, "filesystem", hash(name) & 0xFFFF, 100, 50, 1000, 0,
                   [Snapshot(f"{name}@{s}", guid, i, i, 1, 1)
                    for i, (s, guid) in enumerate(snaps)])


def _caps(dialect: str) -> zfs.Capabilities:
    return zfs.parse_probe((DATA / dialect / "probe.txt").read_text())


SRC = [_ds("tank", ("s1", 10)), _ds("tank/a", ("s1", 11)),
       _ds("tank/b", ("s1", 12), ("sanoid-hourly", 22)), _ds("tank/c", ("s1", 13))]
DST = [_ds("bk/t", ("s1", 10)), _ds("bk/t/a", ("s1", 11)), _ds("bk/t/b", ("s1", 12)),
       _ds("bk/t/c", ("s1", 13))]


def test_a_catch_up_on_zfs_fuse_measures_only_datasets_at_the_newest_snapshot_on_both() -> None:
    request = TreeRequest("tank", "bk/t", None)
    plan = plan_tree(LocalHost(), LocalHost(), request, SRC, DST, snapshot="zmigrate-1",
                     unmounted=True)
    assert measures_empty(_caps("zfs-fuse"), request, plan, SRC)
    pairs = _increments(plan, SRC)
    assert ("tank/a@s1", "tank/a@zmigrate-1") in pairs
    assert not [p for p in pairs if p[0].startswith("tank/b@")], "sanoid's snapshot is carried"
    assert len(pairs) == 3


def test_no_measuring_with_written_for_a_final_sync_or_a_named_snapshot() -> None:
    catch_up = TreeRequest("tank", "bk/t", None)
    plan = plan_tree(LocalHost(), LocalHost(), catch_up, SRC, DST, snapshot="zmigrate-1",
                     unmounted=True)
    assert not measures_empty(_caps("openzfs-2.3"), catch_up, plan, SRC)  # it says `written`
    final = TreeRequest("tank", "bk/t", None, final=True)
    plan = plan_tree(LocalHost(), LocalHost(), final, SRC, DST, snapshot="zmigrate-1",
                     unmounted=True)
    assert not measures_empty(_caps("zfs-fuse"), final, plan, SRC)
    named = TreeRequest("tank", "bk/t", "s1")
    plan = plan_tree(LocalHost(), LocalHost(), named, SRC, DST, snapshot="s1", unmounted=True)
    assert not measures_empty(_caps("zfs-fuse"), named, plan, SRC)
