"""Go live and go back on the lab: old pool -> new pool on one host, after a final sync."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from lab.losses import LossWatch, shown_in_json
from lab.sshd import Lab
from lab.util import wait_until, write_random_files, zfs, zmigrate
from lab.zfsfuse import Pool

pytestmark = pytest.mark.lab


def _get(ds: str, prop: str) -> str:
    return zfs("get", "-H", "-o", "value", prop, ds).strip()


@pytest.fixture
def cut_over(lab: Lab, pools: tuple[Pool, Pool],
             tmp_path: Path) -> tuple[Pool, Pool, dict[str, str]]:
    """OLD/t (with t/a) copied to NEW/t by a final sync: the source read-only, the copy
    verified, unmounted."""
    old, new = pools
    zfs("create", f"{old.name}/t")
    zfs("create", f"{old.name}/t/a")
    write_random_files(old.mountpoint / "t" / "a" / "files", 1, files=2)
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "-r",
                 "--snapshot", "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    return old, new, env


def _sides(shown: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [(x["host_side"], x["kind"], x["name"]) for x in shown]


def test_go_live_then_back_on_one_host(lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]],
                                       loss_watch: type[LossWatch]) -> None:
    old, new, env = cut_over
    watches = [loss_watch(old.name), loss_watch(new.name)]  # both: one host, two pools
    path = old.mountpoint / "t" / "a"
    with pytest.raises(OSError, match="Read-only file system"):  # the source, cut over
        (path / "probe").write_text("x")
    names = sorted(os.listdir(path / "files"))
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert f"zfs unmount {old.name}/t/a" in r.stdout and f"zfs mount {new.name}/t" in r.stdout
    # What it hides, by name: the source's datasets it unmounts (nothing is destroyed).
    assert (f"Will be hidden on lab-src:\n  - dataset {old.name}/t/a unmounted (no longer "
            f"served at {path}; its files stay in it (going back mounts it again))") \
        in r.stdout, r.stdout
    assert "Will be destroyed" not in r.stdout
    assert _get(f"{new.name}/t", "mounted") == "no"  # a dry run changes nothing
    for w in watches:
        w.start()
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--yes",
                 "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    assert _sides(shown_in_json(r.stdout)) == [("source", "unmounted", f"{old.name}/t/a"),
                                               ("source", "unmounted", f"{old.name}/t")]
    for w in watches:
        w.check_json(r.stdout)
    with pytest.raises(AssertionError, match=f"unmounted {old.name}/t/a"):  # it has teeth
        watches[0].check([])
    # The same path now shows the new pool's copy, writable; the source is out of the way.
    assert _get(f"{new.name}/t/a", "mountpoint") == str(path)
    assert sorted(os.listdir(path / "files")) == names
    assert _get(f"{new.name}/t/a", "mounted") == "yes" and _get(f"{new.name}/t/a",
                                                                 "readonly") == "off"
    assert _get(f"{old.name}/t/a", "mounted") == "no"
    assert _get(f"{old.name}/t/a", "canmount") == "noauto"
    (path / "written-after-go-live").write_text("new\n")  # the source could not take it
    listed = zmigrate(env, "history").stdout  # what ran is in the history, live
    assert f"lab-src:{new.name}/t" in listed.split("gone live:")[1] and listed.rstrip(
    ).endswith("live"), listed
    dry = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--back",
                   "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    shown = shown_in_json(dry.stdout)  # going back hides the live copy, carried back first
    assert _sides(shown) == [("destination", "unmounted", f"{new.name}/t/a"),
                             ("destination", "unmounted", f"{new.name}/t")]
    assert "carried back to the source first" in shown[0]["detail"]
    for w in watches:
        w.start()
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--back",
                 "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    assert f"Will be hidden on lab-src:\n  - dataset {new.name}/t/a unmounted (the live copy" \
        in r.stdout, r.stdout
    for w in watches:  # on both pools: the source mounted again, the copy out of service
        w.check(shown)
    # The old pool again, writable as before the final sync, with what was written to the
    # copy while it was live carried back.
    assert "written to the copy since it went live" in r.stdout, r.stdout
    assert "carried back: " in r.stderr and f"{new.name}/t/a" in r.stderr, r.stderr
    assert (path / "written-after-go-live").read_text() == "new\n"
    assert _get(f"{old.name}/t/a", "mounted") == "yes"
    (path / "probe").write_text("x")
    assert _get(f"{old.name}/t/a", "readonly") == "off"
    assert _get(f"{new.name}/t/a", "mounted") == "no" and _get(f"{new.name}/t/a",
                                                               "readonly") == "on"
    assert _get(f"{old.name}/t/a", "canmount") == "on"
    assert " back " in zmigrate(env, "history").stdout.split("gone live:")[1]
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--back",
                 "--yes")
    assert r.returncode != 0 and "no go-live of" in r.stderr  # undone once, not twice


@pytest.mark.parametrize(("where", "how"), [("t/a", "cwd"), ("t", "cwd"), ("t/a", "open file")])
def test_a_busy_source_stops_go_live_before_anything_changed(
        lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]], where: str, how: str) -> None:
    # t: the parent is busy, its child t/a is not - the child must not be unmounted either.
    # A process is in the folder, or (elsewhere) holds a file of it open.
    old, new, env = cut_over
    if how == "cwd":
        busy = subprocess.Popen(["sleep", "60"], cwd=old.mountpoint / where)
    else:
        held = next(p for p in (old.mountpoint / where).rglob("*") if p.is_file())
        busy = subprocess.Popen(["sh", "-c", 'exec 3<"$1"; exec sleep 60', "sh", str(held)],
                                cwd="/")
        assert wait_until(lambda: any(os.path.realpath(f"/proc/{busy.pid}/fd/{fd}") == str(held)
                                      for fd in os.listdir(f"/proc/{busy.pid}/fd")), 5)
    try:
        r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t",
                     "--yes")
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode != 0
    said = f"{old.mountpoint / where} is in use by PID {busy.pid} (sleep); nothing was changed"
    assert said in r.stderr, r.stderr
    assert "unmount" not in r.stderr.split("error")[0], r.stderr  # no step ran
    assert _get(f"{old.name}/t", "mounted") == "yes" and _get(f"{old.name}/t/a",
                                                              "mounted") == "yes"
    assert _get(f"{new.name}/t", "mounted") == "no"
    assert _get(f"{old.name}/t", "canmount") == "on"


def test_go_live_between_two_hosts_under_a_chosen_root(lab: Lab, pools: tuple[Pool, Pool],
                                                       tmp_path: Path,
                                                       loss_watch: type[LossWatch]) -> None:
    # Two sessions (lab-src, lab-dst) on the one lab machine: the source keeps its mounts, the
    # copy goes live under a root of its own (its source's paths are still mounted here).
    old, new = pools
    zfs("create", f"{old.name}/t")
    zfs("create", f"{old.name}/t/a")
    write_random_files(old.mountpoint / "t" / "a" / "files", 1, files=2)
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-dst:{new.name}/t",
                 "--snapshot", "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    live = tmp_path / "live"
    args = ("go-live", f"lab-src:{old.name}/t", f"lab-dst:{new.name}/t", "--mount-root",
            str(live))
    r = zmigrate(env, *args, "--dry-run")
    # The source stays mounted: its only step keeps it read-only (going back restores it).
    assert r.returncode == 0 and "# on the source: unmount" not in r.stdout, r.stdout
    assert f"\nzfs set readonly=on {old.name}/t\n" in r.stdout, r.stdout
    # Both hosts watched (the source pool, the destination's and the chosen root's folder):
    # nothing hidden or destroyed, and nothing on the list.
    watches = [loss_watch(old.name), loss_watch(new.name, folders=[live])]
    for w in watches:
        w.start()
    r = zmigrate(env, *args, "--yes", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    assert shown_in_json(r.stdout) == []
    for w in watches:
        w.check_json(r.stdout)
    names = sorted(os.listdir(old.mountpoint / "t" / "a" / "files"))
    assert sorted(os.listdir(live / "a" / "files")) == names
    (live / "a" / "written-live").write_text("new\n")  # in service: writable
    assert _get(f"{old.name}/t/a", "mounted") == "yes"  # the source untouched
    # Going back: the copy (on the destination) unmounted, its writes carried back to the
    # source (copy -> source): the source loses nothing either.
    for w in watches:
        w.start()
    r = zmigrate(env, *args[:3], "--back", "--yes", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    shown = shown_in_json(r.stdout)
    assert _sides(shown) == [("destination", "unmounted", f"{new.name}/t/a"),
                             ("destination", "unmounted", f"{new.name}/t")]
    for w in watches:
        w.check(shown)
    assert _get(f"{new.name}/t/a", "mounted") == "no" and _get(f"{new.name}/t",
                                                               "readonly") == "on"
    assert _get(f"{new.name}/t", "mountpoint") != str(live)
    # What was written while live is on the source (sent back from the other host), and the
    # source is writable again as before the final sync.
    assert (old.mountpoint / "t" / "a" / "written-live").read_text() == "new\n"
    assert _get(f"{old.name}/t/a", "readonly") in ("off", "off\ttemporary")
    (old.mountpoint / "t" / "a" / "probe").write_text("x")


def test_go_live_refuses_a_copy_that_is_not_a_final_sync(lab: Lab, pools: tuple[Pool, Pool],
                                                         tmp_path: Path) -> None:
    old, new = pools
    zfs("create", f"{old.name}/t")
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t",
                 "--snapshot", "--buffer", "16M")  # not --final: the source stays writable
    assert r.returncode == 0, r.stderr + r.stdout
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t", "--yes")
    assert r.returncode != 0
    assert f"{old.name}/t is not read-only" in r.stderr and "--final" in r.stderr, r.stderr
    assert _get(f"{old.name}/t", "mounted") == "yes" and _get(f"{new.name}/t",
                                                              "mounted") == "no"


def test_a_busy_live_copy_stops_going_back_before_anything_changed(
        lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]]) -> None:
    # A shell in the live copy: going back would fail to unmount it halfway; it stops first,
    # naming it, the copy still in service; once the shell is gone, --back goes back.
    old, new, env = cut_over
    args = ("go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t")
    r = zmigrate(env, *args, "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    path = old.mountpoint / "t" / "a"
    busy = subprocess.Popen(["sleep", "120"], cwd=path)
    try:
        r = zmigrate(env, *args, "--back", "--yes")
    finally:
        busy.kill()
        busy.wait()
    assert r.returncode != 0
    said = f"going back unmounts the live copy here, and a process is using it: {path} is in " \
        f"use by PID {busy.pid} (sleep); nothing was changed"
    assert said in r.stderr, r.stderr
    assert _get(f"{new.name}/t/a", "mounted") == "yes" and _get(f"{old.name}/t/a",
                                                                "mounted") == "no"
    r = zmigrate(env, *args, "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    assert _get(f"{old.name}/t/a", "mounted") == "yes" and _get(f"{new.name}/t/a",
                                                                "mounted") == "no"


def test_leave_writes_keeps_them_on_the_copy_under_a_named_snapshot(
        lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]],
        loss_watch: type[LossWatch]) -> None:
    old, new, env = cut_over
    args = ("go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t")
    r = zmigrate(env, *args, "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    path = old.mountpoint / "t" / "a"
    (path / "written-live").write_bytes(b"y" * 200_000)
    r = zmigrate(env, *args, "--back", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "written to the copy since it went live" in r.stdout and f"{new.name}/t/a (" in \
        r.stdout and "going back carries them back" in r.stdout, r.stdout
    dry = zmigrate(env, *args, "--back", "--leave-writes", "--dry-run", "--json")
    shown = shown_in_json(dry.stdout)
    assert _sides(shown) == [("destination", "unmounted", f"{new.name}/t/a"),
                             ("destination", "unmounted", f"{new.name}/t")]
    assert "stays on it only, under a snapshot @zmigrate-left-" in shown[0]["detail"]
    watches = [loss_watch(old.name), loss_watch(new.name)]
    for w in watches:
        w.start()
    r = zmigrate(env, *args, "--back", "--leave-writes", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    for w in watches:  # the copy's writes hidden with it, as the list said; nothing else
        w.check(shown)
    assert "--leave-writes: they stay on the copy only" in r.stdout, r.stdout
    said = r.stderr.split("left on the copy: ")[1]
    snapshot = said.split("kept under the snapshot ")[1].split(";")[0]
    assert snapshot.startswith(f"{new.name}/t@zmigrate-left-"), said
    assert f"{new.name}/t/a" in said and "the source does not have it" in said
    assert not (path / "written-live").exists()  # the source, served again, without it
    short = snapshot.split("@")[1]
    listed = zfs("list", "-H", "-t", "snapshot", "-o", "name", "-r", f"{new.name}/t")
    assert f"{new.name}/t/a@{short}" in listed.split()
    clone = f"{new.name}/look"
    zfs("clone", f"{new.name}/t/a@{short}", clone)  # the write, kept in that snapshot
    assert (new.mountpoint / "look" / "written-live").read_bytes() == b"y" * 200_000


def test_a_retried_final_sync_keeps_the_readonly_from_before_the_first(
        lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]]) -> None:
    # The final sync again (a retry): the source is read-only by now, but "before" is what it
    # was before the first one, so the copy goes live writable and going back restores it.
    # (Unmounted meanwhile: zfs-fuse shows a mounted dataset's readonly as "off temporary",
    # an unmounted one's as the "on local" the first final sync set, as OpenZFS always does.)
    old, new, env = cut_over
    zfs("unmount", f"{old.name}/t/a")
    zfs("unmount", f"{old.name}/t")
    assert zfs("get", "-H", "-o", "value,source", "readonly", f"{old.name}/t/a").split() == [
        "on", "local"]
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t",
                 "--snapshot", "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    zfs("mount", f"{old.name}/t")
    zfs("mount", f"{old.name}/t/a")
    args = ("go-live", f"lab-src:{old.name}/t", f"lab-src:{new.name}/t")
    r = zmigrate(env, *args, "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    path = old.mountpoint / "t" / "a"
    assert _get(f"{new.name}/t/a", "readonly") == "off"
    (path / "live-write").write_text("ok\n")  # the copy is writable
    r = zmigrate(env, *args, "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    (path / "after-back").write_text("ok\n")  # and so is the source again
    assert zfs("get", "-H", "-o", "source", "readonly", f"{old.name}/t/a").strip() != "local"


def test_a_copy_destroyed_while_live_is_named_and_the_source_comes_back_without_it(
        lab: Lab, cut_over: tuple[Pool, Pool, dict[str, str]]) -> None:
    """The live copy was destroyed by hand: going back stops before any change, naming it and
    the ways out (rename it back, or --without-copy), instead of failing on its first step
    for ever; --without-copy undoes the source's steps alone, says what is lost, closes the
    record, and is refused while the copy exists."""
    old, new, env = cut_over
    pair = (f"lab-src:{old.name}/t", f"lab-src:{new.name}/t")
    r = zmigrate(env, "go-live", *pair, "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    r = zmigrate(env, "go-live", *pair, "--back", "--without-copy", "--dry-run")
    assert r.returncode != 0
    assert f"the copy {new.name}/t exists on lab-src" in r.stderr, r.stderr
    assert wait_until(lambda: subprocess.run(["zfs", "destroy", "-r", "-f", f"{new.name}/t"],
                                             capture_output=True).returncode == 0, 20, 0.5)
    r = zmigrate(env, "go-live", *pair, "--back", "--yes")
    assert r.returncode != 0
    assert (f"the copy {new.name}/t no longer exists on lab-src (destroyed or renamed since "
            "it went live)") in r.stderr, r.stderr
    assert "go back with --without-copy" in r.stderr and "rename it back" in r.stderr
    assert _get(f"{old.name}/t/a", "mounted") == "no"  # nothing was changed
    r = zmigrate(env, "go-live", *pair, "--back", "--without-copy", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "only the source's steps are undone" in r.stdout, r.stdout
    assert f"zfs mount {old.name}/t/a" in r.stdout and f"{new.name}/t" not in \
        r.stdout.split("lost with it", 1)[1], r.stdout
    path = old.mountpoint / "t" / "a"
    assert _get(f"{old.name}/t/a", "mounted") == "yes"
    assert _get(f"{old.name}/t/a", "canmount") == "on"
    assert _get(f"{old.name}/t/a", "readonly") == "off"
    (path / "probe").write_text("x")  # served, writable, as before the final sync
    assert f"the copy {new.name}/t was gone from lab-src" in r.stderr, r.stderr
    r = zmigrate(env, "go-live", *pair, "--back", "--yes")
    assert r.returncode != 0 and "no go-live of" in r.stderr  # the record is closed
