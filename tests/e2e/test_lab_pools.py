"""The lab itself: pools a killed run left behind, imported again by a restarted zfs-fuse with
no way into them, are cleared before the next session uses zfs (a doctor run once picked such a
pool for its write test and failed on "failed to create mountpoint"); reachable pools stay."""

from __future__ import annotations

import shutil

import pytest
from lab.util import zfs
from lab.zfsfuse import PoolFactory, clear_stale_pools, pool_exists

pytestmark = [pytest.mark.lab, pytest.mark.timeout(120)]


def test_a_pool_with_no_way_in_is_cleared_and_a_reachable_one_stays(
        make_pool: PoolFactory) -> None:
    stale, live = make_pool("stale"), make_pool("live")
    zfs("create", f"{stale.name}/child")
    for ds in (f"{stale.name}/child", stale.name):  # as after its daemon died: nothing
        zfs("umount", ds)                             # of it mounted...
    shutil.rmtree(stale.mountpoint)  # ...and its run's tmp dir gone
    assert stale.name in clear_stale_pools()
    assert not pool_exists(stale.name) and pool_exists(live.name)
    assert zfs("get", "-H", "-o", "value", "mounted", live.name).strip() == "yes"
