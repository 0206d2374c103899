"""Into an existing dataset as itself (a new pool's root): only when it is empty, checked."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_plan import SRC_SNAPS, dataset, sites, snap
from zmigrate.engine.empty_target import EMPTY_UNMOUNTED, Emptiness, judge
from zmigrate.engine.errors import PreflightError, PreflightReason
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.plan import Options, make_plan
from zmigrate.engine.tree.plan import TreeRequest, plan_tree

KiB = 1024


def test_a_fresh_pool_root_is_empty_and_what_a_used_one_holds_is_named() -> None:
    root = dataclasses.replace(dataset("newtank"), referenced=112 * KiB)
    assert judge(root, [root], 0) == Emptiness(
        True, "no snapshots, no children, its directory empty, 112 KiB", mounted=True)
    unmounted = judge(root, [root], None)
    assert unmounted.empty and not unmounted.mounted  # and no more than a fresh one
    files = judge(root, [root], 3)
    assert not files.empty and "3 file(s) or folder(s) in its directory" in files.why
    child = judge(root, [root, dataset("newtank/old")], 0)
    assert not child.empty and "1 child dataset(s), e.g. newtank/old" in child.why
    snaps = judge(dataclasses.replace(root, snapshots=[snap("newtank", "x", 5, 1)]), [root], 0)
    assert not snaps.empty and "1 snapshot(s)" in snaps.why
    hidden = dataclasses.replace(root, referenced=EMPTY_UNMOUNTED + 1)
    assert not judge(hidden, [hidden], None).empty  # unmounted: cannot list, too big to trust


def test_an_empty_pool_root_takes_the_copy_as_itself_a_used_one_is_refused() -> None:
    src, dst = sites(None, dst_exists=False)
    empty = Emptiness(True, "no snapshots, no children, its directory empty, 112 KiB")
    p = make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=empty)
    assert p.kind == "full"
    assert "zfs receive -F backup" in p.commands()[0][1]
    assert any("backup is empty" in n and "as backup itself" in n for n in p.warnings)
    with pytest.raises(PreflightError) as info:
        make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=Emptiness(False, "it holds 3 file(s) or folder(s) in its directory"))
    assert info.value.reason is PreflightReason.POOL_ROOT
    assert "is a pool root that is not empty: it holds 3 file(s)" in info.value.message
    assert "receive below it (e.g. backup/home)" in (info.value.fix or "")


def test_a_mounted_empty_target_is_unmounted_first_on_zfs_fuse_only() -> None:
    """zfs-fuse's `receive -F` into a mounted dataset fails now and then ("I/O error"): the
    plan unmounts it first, as its own command, shown; OpenZFS swaps it mounted itself."""
    src, dst = sites(None, dst_exists=False)
    mounted = Emptiness(True, "no snapshots, no children, its directory empty, 112 KiB",
                        mounted=True)
    p = make_plan(src, dst, "tank/home@d", "backup", Options(), connect_address="x", port=1,
                  emptiness=mounted)
    assert p.commands()[0] == ("dst", "zfs unmount backup")
    assert "zfs receive -F backup" in p.commands()[1][1]
    openzfs = dataclasses.replace(dst.caps, dialect="openzfs")
    src_o, dst_o = sites(None, dst_exists=False, caps=openzfs)
    p = make_plan(src_o, dst_o, "tank/home@d", "backup", Options(), connect_address="x",
                  port=1, emptiness=mounted)
    assert p.unmount is None and "zfs receive -F backup" in p.commands()[0][1]
    forced = make_plan(src, dst, "tank/home@d", "backup", Options(force=True),
                       connect_address="x", port=1,
                       emptiness=dataclasses.replace(mounted, empty=False, why="it holds 3"))
    assert forced.commands()[0] == ("dst", "zfs unmount backup")


def test_a_tree_into_an_existing_empty_root_receives_its_root_as_that_dataset() -> None:
    host = LocalHost()
    src = [dataset("tank/home", SRC_SNAPS),
           dataset("tank/home/a", [snap("tank/home/a", "d", 40, 3)])]
    dst = [dataset("newtank")]
    plan = plan_tree(host, host, TreeRequest("tank/home", "newtank", "d"), src, dst,
                     snapshot="d", unmounted=True)
    root, child = plan.entries
    assert (root.destination, root.action, root.into) == ("newtank", "full", True)
    assert "into the existing newtank itself" in root.reason
    assert (child.destination, child.action, child.into) == ("newtank/a", "full", False)
    assert plan.to_json()["datasets"][0]["into"] is True
