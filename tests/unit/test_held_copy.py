"""A copy that goes live later is held: its new file systems are received canmount=noauto, so a
reboot before it goes live mounts none of it (tree/planning/plan.held); what goes back to its
source is not held."""

from __future__ import annotations

import dataclasses

from test_tree_ahead import Recording

from tests.unit.test_plan import CAPS, dataset, snap
from zmigrate.engine import zfs
from zmigrate.engine.golive.carry_back import _keep_properties
from zmigrate.engine.hosts import LocalHost
from zmigrate.engine.tree.planning.plan import TreePlan, TreeRequest, held, plan_tree
from zmigrate.engine.tree.running.dataset_job import dataset_options

OPENZFS = dataclasses.replace(CAPS, receive_properties=True, receive_unmounted=True)
NOAUTO = ("canmount", "noauto")


def _plan(request: TreeRequest) -> TreePlan:
    """tank/t caught up from @s1 (the copy has it), tank/t/a and the volume tank/t/v new."""
    src = [dataset("tank/t", [snap("tank/t", "s1", 1, 10), snap("tank/t", "s2", 2, 20)]),
           dataset("tank/t/a", [snap("tank/t/a", "s2", 3, 20)]),
           dataclasses.replace(dataset("tank/t/v", [snap("tank/t/v", "s2", 4, 20)]),
                               type="volume")]
    dst = [dataset("bk/t", [snap("bk/t", "s1", 1, 10)])]
    return plan_tree(LocalHost(), LocalHost(), request, src, dst, snapshot="s2", unmounted=True,
                     held_back=held(request, OPENZFS, sudo=False))


def _held(request: TreeRequest, caps: zfs.Capabilities = OPENZFS,
          sudo: bool = False) -> dict[str, bool]:
    plan = _plan(request)
    return {e.source: NOAUTO in dataset_options(request, caps, plan, e, sudo=sudo).properties
            for e in plan.entries}


def test_only_the_new_file_systems_of_a_copy_that_goes_live_later_are_held() -> None:
    request = TreeRequest("tank/t", "bk/t", "s2")
    plan = _plan(request)
    assert {e.source: e.action for e in plan.entries} == {
        "tank/t": "incremental", "tank/t/a": "full", "tank/t/v": "full"}
    # The incremental keeps what its first copy set; a volume has no canmount.
    assert _held(request) == {"tank/t": False, "tank/t/a": True, "tank/t/v": False}
    assert "canmount=noauto on each new file system" in plan.mount
    assert "until it goes live" in plan.mount


def test_a_copy_mounted_now_going_back_or_on_a_zfs_without_receive_o_is_not_held() -> None:
    # Mounted under a chosen folder as it arrives: the user's choice, not held.
    mounted = TreeRequest("tank/t", "bk/t", "s2", mount_root="/srv/copy")
    assert not any(_held(mounted).values())
    # Writes carried back to the source (go-live --back): the source's own datasets.
    back = TreeRequest("tank/t", "bk/t", "s2", until_live=False)
    assert not any(_held(back).values())
    assert "canmount" not in _plan(back).mount
    # ... and the copy's own noauto (a property set on it) is left out of what the source
    # receives (zfs receive -x canmount).
    plan = _plan(back)
    assert all("canmount" in dataset_options(back, OPENZFS, plan, e).exclude_properties
               for e in plan.entries)
    # zfs-fuse: no receive -o (its copy's root is set mountpoint=none instead).
    assert not any(_held(TreeRequest("tank/t", "bk/t", "s2"), CAPS).values())
    # A delegated login (zfs allow) may not set canmount (docs/permissions.md's minimum);
    # through sudo it may.
    user = dataclasses.replace(OPENZFS, uid=1000, user="zm")
    assert not any(_held(TreeRequest("tank/t", "bk/t", "s2"), user).values())
    assert _held(TreeRequest("tank/t", "bk/t", "s2"), user, sudo=True)["tank/t/a"]


def test_going_back_puts_a_canmount_the_source_received_back_as_it_was() -> None:
    """Writes carried back from a copy whose canmount was set (by hand, or by a zmigrate
    before this one left it out of the way back): zfs cannot inherit canmount, so a source
    that had none set gets its default back, `on`; others are inherited or set as before."""
    host = Recording()
    before = {"tank/t/a": {"compression": "lz4"}}
    after = {"tank/t/a": {"compression": "gzip", "canmount": "noauto", "mountpoint": "none"}}
    _keep_properties(host, {"tank/t/a": {}}, before, after)
    assert host.lines == ["zfs set canmount=on tank/t/a", "zfs set compression=lz4 tank/t/a",
                          "zfs inherit mountpoint tank/t/a"]
