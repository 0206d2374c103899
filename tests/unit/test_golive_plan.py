"""Going live, as a plan: each step from the two hosts' properties, with its undo."""

from __future__ import annotations

import pytest

from zmigrate.engine.errors import InvalidNameError
from zmigrate.engine.golive import Prop, Props, plan_go_live


def _props(mountpoint: str, *, mp_source: str = "default", mounted: str = "yes",
           readonly: str = "off", canmount: str = "on", keystatus: str | None = None
           ) -> dict[str, Prop]:
    props = {"mountpoint": Prop(mountpoint, mp_source), "mounted": Prop(mounted, "-"),
             "readonly": Prop(readonly, "local" if readonly == "on" else "default"),
             "canmount": Prop(canmount, "default"), "sharenfs": Prop("off", "default"),
             "sharesmb": Prop("off", "default")}
    if keystatus:
        props["keystatus"] = Prop(keystatus, "-")
    return props


SRC: Props = {"tank/t": _props("/srv/t", mp_source="local", readonly="on"),
              "tank/t/a": _props("/srv/t/a", mp_source="inherited from tank/t", readonly="on"),
              "tank/t/web": _props("/var/www", mp_source="local", readonly="on")}
DST: Props = {"new/t": _props("none", mp_source="local", mounted="no", readonly="on"),
              "new/t/a": _props("none", mp_source="inherited from new/t", mounted="no",
                                readonly="on"),
              "new/t/web": _props("/var/www", mp_source="received", mounted="no",
                                  readonly="on", keystatus="unavailable")}


def test_between_two_hosts_only_the_copy_changes_and_mounts_parents_first() -> None:
    plan = plan_go_live(SRC, DST, "tank/t", "new/t", same_host=False,
                        readonly_before={"tank/t/web": "on"})
    lines = [" ".join(s.argv) for s in plan.steps]
    # The source only stays read-only, first; going back puts back what it was before the
    # final sync (last): inherited, or on where it was on.
    source = [(" ".join(s.argv), " ".join(s.undo or ())) for s in plan.steps
              if s.side == "source"]
    assert source == [("zfs set readonly=on tank/t", "zfs inherit readonly tank/t"),
                      ("zfs set readonly=on tank/t/a", "zfs inherit readonly tank/t/a"),
                      ("zfs set readonly=on tank/t/web", "zfs set readonly=on tank/t/web")]
    assert all(s.side == "destination" for s in plan.steps[3:])
    assert "zfs set mountpoint=/srv/t new/t" in lines
    assert "zfs set readonly=off new/t" in lines and "zfs set readonly=off new/t/a" in lines
    assert not any("readonly" in line and "new/t/web" in line for line in lines)  # was on
    mounts = [line for line in lines if line.startswith("zfs mount")]
    assert mounts == ["zfs mount new/t", "zfs mount new/t/a"]  # web's key is not loaded
    assert plan.notes == ("new/t/web is encrypted and its key is not loaded: run "
                          "`zfs load-key new/t/web`, then `zfs mount new/t/web`",)
    undo = {" ".join(s.argv): " ".join(s.undo or ()) for s in plan.steps}
    assert undo["zfs set mountpoint=/srv/t new/t"] == "zfs set mountpoint=none new/t"


def test_on_one_host_the_source_goes_out_of_the_way_first_children_first() -> None:
    plan = plan_go_live(SRC, DST, "tank/t", "new/t", same_host=True)
    source = [" ".join(s.argv) for s in plan.steps if s.side == "source"]
    assert source[:3] == ["zfs unmount tank/t/web", "zfs unmount tank/t/a",
                          "zfs unmount tank/t"]
    assert "zfs set canmount=noauto tank/t" in source
    assert plan.steps[0].side == "source" and plan.steps[-1].side == "destination"
    noauto = next(s for s in plan.steps if s.argv[:3] == ("zfs", "set", "canmount=noauto"))
    assert noauto.undo is not None and noauto.undo[:3] == ("zfs", "set", "canmount=on")


def test_a_chosen_mount_root_moves_the_copy_and_its_own_mountpoints_under_it() -> None:
    plan = plan_go_live(SRC, DST, "tank/t", "new/t", same_host=False, mount_root="/mnt/new")
    lines = [" ".join(s.argv) for s in plan.steps]
    assert "zfs set mountpoint=/mnt/new new/t" in lines
    assert "zfs set mountpoint=/mnt/new/web new/t/web" in lines


def test_shares_are_set_as_on_the_source_only_now_and_undone_by_inheriting() -> None:
    src = {name: dict(p) for name, p in SRC.items()}
    src["tank/t"]["sharenfs"] = Prop("rw=@10.0.0.0/8", "inherited from tank")  # from above
    src["tank/t/a"]["sharenfs"] = Prop("rw=@10.0.0.0/8", "inherited from tank")
    src["tank/t/web"]["sharesmb"] = Prop("on", "local")
    plan = plan_go_live(src, DST, "tank/t", "new/t", same_host=False)
    shares = {" ".join(s.argv): " ".join(s.undo or ()) for s in plan.steps if "share" in s.what}
    assert shares == {"zfs set sharenfs=rw=@10.0.0.0/8 new/t": "zfs inherit sharenfs new/t",
                      "zfs set sharesmb=on new/t/web": "zfs inherit sharesmb new/t/web"}


def test_a_mount_root_must_be_an_absolute_path() -> None:
    for bad in ("mnt/new", "/mnt/a\nb", ""):
        with pytest.raises(InvalidNameError, match="is not an absolute path"):
            plan_go_live(SRC, DST, "tank/t", "new/t", same_host=False, mount_root=bad)


def test_on_one_host_a_dataset_left_out_of_the_copy_is_named() -> None:
    dst = {k: v for k, v in DST.items() if k != "new/t/web"}
    plan = plan_go_live(SRC, dst, "tank/t", "new/t", same_host=True)
    assert "zfs unmount tank/t/web" in [" ".join(s.argv) for s in plan.steps]
    assert plan.notes == ("tank/t/web was not copied: it is unmounted with the rest of the "
                          "source and nothing takes its place (going back mounts it again)",
                          "the history does not say how read-only the source was before the "
                          "final sync: it stays read-only after going back")
    assert not any("readonly" in " ".join(s.argv) for s in plan.steps if s.side == "source")
