"""What going live, going back and a receive over a folder hide (unmounted datasets, covered
folders): computed from the steps, worded under `Will be hidden on HOST:`, carried by the
go-live plan's JSON, and what the lab's invariant (lab.losses) flags when it is not shown."""

from __future__ import annotations

import io

import pytest
from lab.losses import DestinationState, unseen_losses

from zmigrate.cli.send import print_losses
from zmigrate.engine import losses
from zmigrate.engine.golive import Prop, plan_go_live
from zmigrate.engine.losses import DESTINATION, SOURCE, Loss, LossKind


def _props(mounted: str, mountpoint: str, readonly: str = "on") -> dict[str, Prop]:
    return {"readonly": Prop(readonly, "local"), "mountpoint": Prop(mountpoint, "local"),
            "canmount": Prop("on", "default"), "mounted": Prop(mounted, "-"),
            "sharenfs": Prop("off", "default"), "sharesmb": Prop("off", "default")}


SRC = {"old/t": _props("yes", "/srv/t"), "old/t/a": _props("yes", "/srv/t/a")}
DST = {"new/t": _props("no", "none"), "new/t/a": _props("no", "none")}


def test_going_live_on_one_host_lists_the_source_datasets_it_unmounts() -> None:
    plan = plan_go_live(SRC, DST, "old/t", "new/t", same_host=True)
    assert [(x.host_side, x.kind, x.name) for x in plan.destroys] == [
        (SOURCE, LossKind.UNMOUNTED, "old/t/a"), (SOURCE, LossKind.UNMOUNTED, "old/t")]
    assert plan.destroys[0].detail.startswith("no longer served at /srv/t/a; its files stay")
    assert plan.to_json()["destroys"][0] == plan.destroys[0].to_json()
    # Between two hosts the source stays mounted: nothing hidden there.
    assert plan_go_live(SRC, DST, "old/t", "new/t", same_host=False).destroys == ()
    # Continued after a cut: only what is still to run.
    from dataclasses import replace
    assert replace(plan, done=len(plan.steps)).destroys == ()


@pytest.mark.parametrize("leave", [False, True])
def test_going_back_lists_the_live_copy_it_unmounts(leave: bool) -> None:
    plan = plan_go_live(SRC, DST, "old/t", "new/t", same_host=True)
    lost = losses.going_back(plan.steps, leave_writes=leave)
    assert [(x.host_side, x.kind, x.name) for x in lost] == [
        (DESTINATION, LossKind.UNMOUNTED, "new/t/a"), (DESTINATION, LossKind.UNMOUNTED, "new/t")]
    said = "stays on it only, under a snapshot" if leave else "carried back to the source first"
    assert said in lost[0].detail


def test_going_back_also_lists_the_copy_mounted_before_its_own_mount_ran() -> None:
    # Cut off after the copy's mountpoint was set (which mounts new/t and new/t/a), before
    # either mount step: going back unmounts both (journal.unmount_again), so both are named.
    plan = plan_go_live(SRC, DST, "old/t", "new/t", same_host=True)
    ran = plan.steps[:next(i for i, s in enumerate(plan.steps) if s.argv[:2] == ("zfs", "mount"))]
    assert losses.going_back(ran, leave_writes=False) == []
    lost = losses.going_back(ran, leave_writes=False, mounted_besides=["new/t/a", "new/t"])
    assert [(x.host_side, x.kind, x.name) for x in lost] == [
        (DESTINATION, LossKind.UNMOUNTED, "new/t/a"), (DESTINATION, LossKind.UNMOUNTED, "new/t")]
    assert "cut off before mounting it" in lost[0].detail


def test_hidden_things_are_worded_apart_from_destroyed_ones() -> None:
    lost = [Loss(DESTINATION, LossKind.SNAPSHOT, "nas/c@x", "newer than @a"),
            Loss(DESTINATION, LossKind.HIDDEN, "/srv/home", "hidden while nas/home is mounted"),
            Loss(SOURCE, LossKind.UNMOUNTED, "tank/t", "no longer served at /t")]
    out = io.StringIO()
    print_losses(lost, "src", "nas", out)
    assert out.getvalue().splitlines() == [
        "Will be destroyed on nas:",
        "  - snapshot nas/c@x (newer than @a)",
        "Will be hidden on src:",
        "  - dataset tank/t unmounted (no longer served at /t)",
        "Will be hidden on nas:",
        "  - the files in the folder /srv/home (hidden while nas/home is mounted)"]


BEFORE = DestinationState(frozenset({"p", "p/c", "p/d"}), frozenset(),
                          {"p": frozenset({"home/x", "keep"}), "p/c": frozenset({"f"}),
                           "p/d": frozenset()},
                          {"p": "/mnt/p", "p/c": "/mnt/p/c", "p/d": "/mnt/p/d"},
                          {"/srv": frozenset({"site/index.html"})})
# After: p/c and p/d unmounted, p/home mounted over p's folder home, /srv/site covered.
AFTER = DestinationState(frozenset({"p", "p/c", "p/d", "p/home"}), frozenset(),
                         {"p": frozenset({"keep"}), "p/home": frozenset()},
                         {"p": "/mnt/p", "p/home": "/mnt/p/home"}, {"/srv": frozenset()})


@pytest.mark.parametrize(("shown", "unseen"), [
    ([], ["file p:home/x", "unmounted p/c (1 file(s) hidden)", "file /srv/site/index.html"]),
    ([{"kind": "unmounted", "name": "p/c"}, {"kind": "hidden", "name": "/mnt/p/home"},
      {"kind": "hidden", "name": "/srv/site/"}], []),
])
def test_the_lab_invariant_flags_what_was_hidden_unshown(shown: list[dict[str, str]],
                                                         unseen: list[str]) -> None:
    # (p/d held no file: unmounting it hides nothing.)
    assert unseen_losses(BEFORE, AFTER, shown) == unseen
