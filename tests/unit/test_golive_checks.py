"""Before going live: the copy is a final sync's (from real zfs-fuse output), and which source
mountpoints a process holds (from a real `ls -l /proc/...`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from zmigrate.engine.golive import Prop, Props, parse_props, plan_go_live
from zmigrate.engine.golive.checks import NotReadyError, check_ready, holding, parse_holders

DATA = Path(__file__).parent.parent / "data" / "golive"


def _read(name: str) -> Props:
    return parse_props((DATA / name).read_text())


def test_a_final_sync_on_zfs_fuse_is_ready_and_plans_the_cut_over() -> None:
    src, dst = _read("zfs-fuse-get-src.txt"), _read("zfs-fuse-get-dst.txt")
    check_ready(src, dst, "oldpool/t", "newpool/t")  # no exception: ready
    plan = plan_go_live(src, dst, "oldpool/t", "newpool/t", same_host=True)
    lines = [" ".join(s.argv) for s in plan.steps]
    assert lines[:2] == ["zfs unmount oldpool/t/a", "zfs unmount oldpool/t"]
    assert [s.path for s in plan.steps[:2]] == ["/oldpool/t/a", "/oldpool/t"]
    assert "zfs set mountpoint=/oldpool/t newpool/t" in lines
    assert lines[-2:] == ["zfs mount newpool/t", "zfs mount newpool/t/a"]
    assert not any("@" in line for line in lines)  # snapshots are read, never planned


def _with(props: Props, name: str, prop: str, value: str, source: str = "-") -> Props:
    out = {k: dict(v) for k, v in props.items()}
    out.setdefault(name, {})[prop] = Prop(value, source)
    return out


def test_a_writable_source_is_not_ready() -> None:
    src = _with(_read("zfs-fuse-get-src.txt"), "oldpool/t/a", "readonly", "off", "default")
    with pytest.raises(NotReadyError, match="oldpool/t/a is not read-only") as err:
        check_ready(src, _read("zfs-fuse-get-dst.txt"), "oldpool/t", "newpool/t")
    assert "send -r --final" in (err.value.fix or "")


def test_a_copy_behind_the_source_is_not_ready() -> None:
    # A snapshot the copy lacks; zfs-fuse does not say what it holds (no `written`).
    src = _with(_read("zfs-fuse-get-src.txt"), "oldpool/t@later", "createtxg", "99")
    with pytest.raises(NotReadyError, match="oldpool/t has changed since @zmigrate-"):
        check_ready(src, _read("zfs-fuse-get-dst.txt"), "oldpool/t", "newpool/t")
    # Where the host says nothing was written in it (auto-snapshots of a read-only source).
    src = _with(src, "oldpool/t@later", "written", "0")
    check_ready(src, _read("zfs-fuse-get-dst.txt"), "oldpool/t", "newpool/t")


def test_a_copy_from_another_source_or_written_since_is_not_ready() -> None:
    dst = _with(_read("zfs-fuse-get-dst.txt"), "newpool/t/a@zmigrate-20261124-215112", "guid",
                "1")
    with pytest.raises(NotReadyError, match="is not the same snapshot as on oldpool/t/a"):
        check_ready(_read("zfs-fuse-get-src.txt"), dst, "oldpool/t", "newpool/t")
    src = _with(_read("zfs-fuse-get-src.txt"), "oldpool/t", "written", "4096")
    with pytest.raises(NotReadyError, match="oldpool/t has changed since"):
        check_ready(src, _read("zfs-fuse-get-dst.txt"), "oldpool/t", "newpool/t")
    with pytest.raises(NotReadyError, match="nothing of oldpool/t is in elsewhere/t"):
        check_ready(_read("zfs-fuse-get-src.txt"), {}, "oldpool/t", "elsewhere/t")


def test_processes_holding_a_mountpoint_by_cwd_and_open_file() -> None:
    holders = parse_holders((DATA / "ls-proc.txt").read_text())
    assert {(h.pid, h.how, h.path) for h in holders if h.pid == 4242} >= {
        (4242, "cwd", "/oldpool/t/a"), (4242, "fd", "/oldpool/t/a/files/a"),
        (4242, "fd", "/tmp/#9978181")}
    busy = holding(holders, ["/oldpool/t/a", "/oldpool/t", "/oldpool/other"])
    assert set(busy) == {"/oldpool/t/a"}  # each under its deepest mountpoint
    assert {h.how for h in busy["/oldpool/t/a"]} == {"cwd", "fd"}
    assert holding(holders, ["/oldpool/t/ab", "none"]) == {}  # a prefix is not a folder
