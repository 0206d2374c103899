"""What a plan destroys, computed from captured inventories (zfs-fuse, `zfs get -Hp -r` as the
planner reads it): a -R --force receive after a child was destroyed and a snapshot pruned on
the source, with a child, a snapshot and a newer snapshot that exist only on the destination."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from lab.losses import DestinationState, unseen_losses

from zmigrate.cli.send import print_losses
from zmigrate.engine import losses, plain_words, zfs
from zmigrate.engine.destination import Listing, judge
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.losses import DESTINATION, Loss, LossKind
from zmigrate.engine.plan import Options, Site, make_plan
from zmigrate.engine.tree import TreeRequest, plan_tree

DATA = Path(__file__).parent.parent / "data/zfs/zfs-fuse"
CAPS = zfs.parse_probe((DATA / "probe.txt").read_text())


def _inventory(name: str) -> list[zfs.Dataset]:
    return zfs.build_inventory(zfs.parse_get((DATA / name).read_text()))


SRC = _inventory("destroys-replicate-src.txt")  # tank/data{,/a}: @s1 @s2 @s3, a@s1 pruned
DST = _inventory("destroys-replicate-dst.txt")  # nas/copy{,/a,/scratch}@s1 @s2, @local, nas-only
PARENT = zfs.Dataset("nas", "filesystem", 1, 0, 0, 10**9, 0)


def _plan(snapshot: str = "tank/data@s3", dst: list[zfs.Dataset] | None = None,
          **opts: object):  # type: ignore[no-untyped-def]
    return make_plan(Site(LocalHost("src"), CAPS, SRC),
                     Site(LocalHost("dst"), CAPS, [PARENT, *(DST if dst is None else dst)]),
                     snapshot, "nas/copy", Options(transport=None, **opts),  # type: ignore
                     connect_address="192.0.2.7", allow_address="192.0.2.5", port=40001)


def test_replicate_force_names_every_dataset_and_snapshot_the_stream_does_not_carry() -> None:
    p = _plan(replicate=True, force=True)
    got = [(x.kind.value, x.name, x.detail) for x in p.destroys]
    assert got == [
        ("snapshot", "nas/copy@local", "newer than @s2"),  # the rollback, first
        ("snapshot", "nas/copy/a@s1", "not on the source"),  # pruned on the source
        ("dataset", "nas/copy/nas-only", "gone from the source"),  # made on the NAS
        ("snapshot", "nas/copy/nas-only@keep", "with nas/copy/nas-only"),
        ("dataset", "nas/copy/scratch", "gone from the source"),  # destroyed on the source
        ("snapshot", "nas/copy/scratch@s1", "with nas/copy/scratch"),
        ("snapshot", "nas/copy/scratch@s2", "with nas/copy/scratch"),
    ]
    assert all(x.host_side == DESTINATION for x in p.destroys)
    assert p.rolled_back == ("local",) and p.force_receive
    assert {"nas/copy/nas-only", "nas/copy/scratch@s2", "nas/copy@local"} <= set(p.seen)
    assert "7 dataset(s), snapshot(s) or content" in p.describe()


def test_without_replicate_force_only_rolls_back_the_dataset_itself() -> None:
    p = _plan(force=True)
    assert [x.name for x in p.destroys] == ["nas/copy@local"]
    assert set(p.seen) == {"nas/copy", "nas/copy@s1", "nas/copy@s2", "nas/copy@local"}


def test_a_plan_that_destroys_nothing_keeps_no_read_to_compare() -> None:
    dst = [d for d in DST if d.name == "nas/copy/a" or d.name == "nas/copy"]
    dst = [zfs.Dataset(d.name, d.type, d.guid, 0, 0, 0, 0,
                       [s for s in d.snapshots if s.short != "local"]) for d in dst]
    p = _plan("tank/data@s3", dst)
    assert p.destroys == () and p.seen == () and not p.destructive


def test_content_replaced_judged_empty_or_forced() -> None:
    bare = [zfs.Dataset("nas/copy", "filesystem", 5, 0, 24576, 10**9, 0)]
    judged = make_plan(Site(LocalHost("src"), CAPS, SRC),
                       Site(LocalHost("dst"), CAPS, [PARENT, *bare]), "tank/data@s3",
                       "nas/copy", Options(), connect_address="a", allow_address="b",
                       port=1, emptiness=judge(bare[0], bare, Listing(True, "/nas/copy", ()),
                                               "openzfs"))
    assert [(x.kind, x.name) for x in judged.destroys] == [(LossKind.CONTENT, "nas/copy")]
    assert judged.destroys[0].detail.startswith(
        "judged empty: no snapshots, no children, its directory empty, 24 KiB referenced; "
        "24576 bytes")
    forced = _plan("tank/data@s3", bare, force=True)
    assert forced.destroys[0].detail == "--force; 24576 bytes referenced"
    assert forced.rolled_back == ()


def test_a_discarded_partial_receive_is_named() -> None:
    partial = [zfs.Dataset("nas/copy", "filesystem", 5, 0, 0, 10**9, 0, resume_token="1-abc")]
    p = _plan("tank/data@s3", partial, discard_partial=True)
    assert [(x.kind, x.name) for x in p.destroys] == [(LossKind.DATASET, "nas/copy")]
    assert p.discard and p.destructive


def test_grown_names_what_appeared_after_the_plan() -> None:
    p = _plan(replicate=True, force=True)
    later = [*DST, zfs.Dataset("nas/copy/new", "filesystem", 9, 0, 0, 0, 0)]
    later[0] = zfs.Dataset(later[0].name, "filesystem", 1, 0, 0, 0, 0, [
        *later[0].snapshots,
        zfs.Snapshot("nas/copy@hourly", 77, 0, 999, 0, 0)])
    grew = losses.grown(p.seen, "nas/copy", later, recursive=True)
    assert [(x.kind, x.name, x.detail) for x in grew] == [
        (LossKind.SNAPSHOT, "nas/copy@hourly", "taken after the plan"),
        (LossKind.DATASET, "nas/copy/new", "created after the plan")]
    # Not recursive (no -R): only the dataset itself counts.
    assert [x.name for x in losses.grown(p.seen, "nas/copy", later, recursive=False)] == [
        "nas/copy@hourly"]
    assert losses.grown(p.seen, "nas/copy", DST, recursive=True) == []


def test_tree_losses_with_force_roll_back_and_name_a_replaced_root() -> None:
    host = LocalHost()
    src = [zfs.Dataset("tank/t", "filesystem", 1, 0, 0, 0, 0,
                       [zfs.Snapshot("tank/t@s2", 10, 0, 2, 0, 0)]),
           zfs.Dataset("tank/t/a", "filesystem", 2, 0, 0, 0, 0,
                       [zfs.Snapshot("tank/t/a@s1", 11, 0, 1, 0, 0),
                        zfs.Snapshot("tank/t/a@s2", 12, 0, 2, 0, 0)])]
    dst = [zfs.Dataset("bk/t", "filesystem", 3, 0, 4096, 0, 0),
           zfs.Dataset("bk/t/a", "filesystem", 4, 0, 0, 0, 0,
                       [zfs.Snapshot("bk/t/a@s1", 11, 0, 5, 0, 0),
                        zfs.Snapshot("bk/t/a@mine", 99, 0, 6, 0, 0)])]
    request = TreeRequest("tank/t", "bk/t", snapshot="s2", options=Options(force=True))
    plan = plan_tree(host, host, request, src, dst, snapshot="s2", unmounted=True)
    assert [(x.kind, x.name) for x in plan.destroys] == [
        (LossKind.CONTENT, "bk/t"), (LossKind.SNAPSHOT, "bk/t/a@mine")]
    assert plan.to_json()["destroys"][1] == {"host_side": "destination", "kind": "snapshot",
                                             "name": "bk/t/a@mine", "detail": "newer than @s1"}
    unforced = plan_tree(host, host, TreeRequest("tank/t", "bk/t", snapshot="s2"), src, dst,
                         snapshot="s2", unmounted=True)
    assert [x.name for x in unforced.destroys] == ["bk/t"]


def test_both_faces_word_each_loss_by_name_under_its_host() -> None:
    lost = [Loss(DESTINATION, LossKind.DATASET, "nas/copy/scratch", "gone from the source"),
            Loss(DESTINATION, LossKind.SNAPSHOT, "nas/copy@x", "newer than @a")]
    out = io.StringIO()
    print_losses(lost, "src", "nas", out)
    assert out.getvalue().splitlines() == [
        "Will be destroyed on nas:",
        "  - dataset nas/copy/scratch and everything in it (gone from the source)",
        "  - snapshot nas/copy@x (newer than @a)"]
    assert plain_words.losses_by_host([], "src", "nas") == []


@pytest.mark.parametrize(("shown", "unseen"), [
    ([], ["dataset p/c", "snapshot p/c@s1", "snapshot p@x", "file p:notes.txt"]),
    ([{"kind": "dataset", "name": "p/c"}, {"kind": "snapshot", "name": "p@x"},
      {"kind": "content", "name": "p"}], []),
])
def test_the_lab_invariant_flags_what_was_lost_unshown(shown: list[dict[str, str]],
                                                       unseen: list[str]) -> None:
    before = DestinationState(frozenset({"p", "p/c"}), frozenset({"p/c@s1", "p@x", "p@y"}),
                              {"p": frozenset({"notes.txt", "keep"})})
    after = DestinationState(frozenset({"p"}), frozenset({"p@y"}), {"p": frozenset({"keep"})})
    assert unseen_losses(before, after, shown) == unseen


def test_what_was_written_since_the_newest_snapshot_is_named_where_the_host_says() -> None:
    copy = next(d for d in DST if d.name == "nas/copy")
    written = [zfs.Dataset(copy.name, "filesystem", copy.guid, 0, 0, 0, 0,
                           list(copy.snapshots), written=4096)]
    p = _plan("tank/data@s3", written, force=True)
    assert [(x.kind, x.name, x.detail) for x in p.destroys] == [
        (LossKind.SNAPSHOT, "nas/copy@local", "newer than @s2"),
        (LossKind.CONTENT, "nas/copy", "written since @local; 4096 bytes")]
    assert p.rolled_back == ("local",)
    # zfs-fuse has no `written` (None): its referenced as at its newest snapshot, nothing to
    # name; referenced changed since, the change is named.
    assert [x.name for x in _plan("tank/data@s3", [copy], force=True).destroys] == [
        "nas/copy@local"]
    then = copy.snapshots[-1].referenced
    grown = [zfs.Dataset(copy.name, "filesystem", copy.guid, 0, then + 401408, 0, 0,
                         list(copy.snapshots))]
    assert [x.detail for x in _plan("tank/data@s3", grown, force=True).destroys][1] == (
        f"written since @local; about 401408 bytes ({then} referenced then, "
        f"{then + 401408} now)")


def test_a_plan_and_a_tree_plan_keep_their_losses_through_the_event_record() -> None:
    import json

    from zmigrate.engine import event_json
    from zmigrate.engine.events import PlanReady, TreePlanReady

    p = _plan(replicate=True, force=True)
    back = event_json.from_json(json.loads(json.dumps(event_json.to_json(PlanReady(p)))))
    assert isinstance(back, PlanReady) and back.plan == p
    assert back.plan.destroys[2].kind is LossKind.DATASET and back.plan.seen == p.seen
    host = LocalHost()
    src = [zfs.Dataset("tank/t", "filesystem", 1, 0, 0, 0, 0,
                       [zfs.Snapshot("tank/t@s2", 10, 0, 2, 0, 0)])]
    tree = plan_tree(host, host, TreeRequest("tank/t", "bk/t", snapshot="s2"), src,
                     [zfs.Dataset("bk/t", "filesystem", 3, 0, 4096, 0, 0)], snapshot="s2",
                     unmounted=True)
    record = event_json.to_json(TreePlanReady(tree))
    again = event_json.from_json(json.loads(json.dumps(record)))
    assert isinstance(again, TreePlanReady) and again.plan == tree
    assert [x.name for x in again.plan.destroys] == ["bk/t"]


def test_the_pool_is_synced_before_force_reads_what_it_rolls_back() -> None:
    # zfs-fuse has no `zpool sync` and ignores sync(2) until its 30 s transaction group ends:
    # a no-op `zfs inherit` commits it (measured); elsewhere `zpool sync`, then the fallbacks.
    line = zfs.sync_line(LocalHost("dst"), CAPS, "nas/copy")
    assert CAPS.dialect == "zfs-fuse"
    assert line == "{ zfs inherit zmigrate:sync nas; } >/dev/null 2>&1"
    from dataclasses import replace
    openzfs = zfs.sync_line(LocalHost("dst"), replace(CAPS, dialect="openzfs"), "nas")
    assert openzfs == ("{ zpool sync nas || zfs inherit zmigrate:sync nas || sync; } "
                       ">/dev/null 2>&1")
