"""A tree's delegations, counted before anything runs (engine/tree/preflight/grants.py): what the
source's login does (hold only where a dataset goes with more than one snapshot, snapshot only
where the run takes one) and what the destination's needs for each dataset, checked on the
copy's nearest existing dataset for descendants."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_plan import CAPS, dataset, snap
from zmigrate.engine import zfs
from zmigrate.engine.errors import PreflightError
from zmigrate.engine.plan import Options
from zmigrate.engine.tree import TreePlan, TreeRequest
from zmigrate.engine.tree.planning.entry import TreeEntry
from zmigrate.engine.tree.preflight.grants import TreeGrants, check_grants, source_needs

OPENZFS = dataclasses.replace(CAPS, receive_properties=True, uid=1000)  # a delegated login


def _plan(*entries: TreeEntry) -> TreePlan:
    return TreePlan("src", "dst", "tank/t", "bk/t", "s2", None, None, entries, (), (), "")


def _entry(name: str, action: str = "full", **kw: object) -> TreeEntry:
    return TreeEntry(name, name.replace("tank/", "bk/", 1), "filesystem", 1, action,
                     **kw)  # type: ignore[arg-type]


def _allowed(dataset: str, perms: str) -> str:
    return (f"---- Permissions on {dataset} ------------------------------------------\n"
            f"Local+Descendent permissions:\n\tuser zm {perms}\n")


def test_hold_and_snapshot_are_asked_only_where_the_tree_needs_them() -> None:
    one = [dataset("tank/t", [snap("tank/t", "s2", 1, 10)])]
    two = [dataset("tank/t", [snap("tank/t", "s1", 1, 5), snap("tank/t", "s2", 2, 10)])]
    plan = _plan(_entry("tank/t"))
    named = TreeRequest("tank/t", "bk/t", "s2")
    assert source_needs(named, plan, one) == ["send"]  # one snapshot, no -I: no hold
    assert source_needs(named, plan, two) == ["send", "hold"]  # s1, then -I s1 s2
    # The run takes its own snapshot: the dataset goes with two, and it takes one.
    assert source_needs(TreeRequest("tank/t", "bk/t"), plan, one) == [
        "send", "hold", "snapshot"]
    assert source_needs(TreeRequest("tank/t", "bk/t", "s2", final=True), plan, one) == [
        "send", "readonly"]
    assert source_needs(dataclasses.replace(named, options=Options(intermediates=False)),
                        plan, two) == ["send"]
    assert "hold" in source_needs(named, _plan(_entry("tank/t", "incremental")), one)


def test_the_destination_is_checked_for_every_dataset_on_its_anchor() -> None:
    """A new copy's datasets inherit what the anchor grants for descendants: each dataset's
    receive set, readonly and what its -p stream carries, in one `zfs allow` line."""
    plan = _plan(_entry("tank/t"), _entry("tank/t/a"), _entry("tank/t/b"))
    carried = {"tank/t/a": frozenset({"atime"}), "tank/t/b": frozenset({"user:x", "sharenfs"})}
    base = "create,mount,readonly,receive"
    request = TreeRequest("tank/t", "bk/t", "s2")
    src_sets = [dataset(n, [snap(n, "s2", 1, 10)]) for n in ("tank/t", "tank/t/a", "tank/t/b")]

    def check(dst_perms: str) -> None:
        grants = TreeGrants(None, zfs.Grants("zm", {"bk": _allowed("bk", dst_perms)}), "bk",
                            carried)
        check_grants(plan, request, OPENZFS, grants, ("src", "dst"), src_sets)

    with pytest.raises(PreflightError) as info:
        check(base)
    # sharenfs is left out with -x: it needs no permission.
    assert info.value.figures["allow"] == "zfs allow -u zm atime,userprop bk"
    check(base + ",atime,userprop")  # granted: no refusal
