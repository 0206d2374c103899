"""End to end on the lab: a copy never mounts over a path the destination already uses (issue
30 item 5): a single dataset's `send -R` carrying its own mountpoint, and a two-host go-live.

The lab's two "hosts" are one machine: the source's own mounts are paths the destination uses.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lab.sshd import Lab
from lab.util import dataset_exists, write_random_files, zfs, zmigrate
from lab.zfsfuse import Pool

pytestmark = pytest.mark.lab


def test_a_single_replicate_send_refuses_to_mount_over_a_path_in_use(
        lab: Lab, pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    src, dst = pools
    in_use = tmp_path / "home"  # the source's own mountpoint: mounted, holding files
    ds = f"{src.name}/home"
    zfs("create", "-o", f"mountpoint={in_use}", ds)
    write_random_files(in_use / "alice", 1, files=2)
    zfs("snapshot", "-r", f"{ds}@s")
    before = sorted(os.listdir(in_use / "alice"))
    r = lab.zmigrate("send", "-R", "--json", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/home")
    assert r.returncode != 0, r.stdout + r.stderr
    error = r.events[-1]
    assert error["reason"] == "mount_collision", error
    assert (f"{dst.name}/home would mount on {in_use} (where {ds} is mounted)"
            in error["message"]), error
    assert "pick a destination whose copy mounts on a free path" in error["fix"]
    assert not dataset_exists(f"{dst.name}/home")
    assert sorted(os.listdir(in_use / "alice")) == before
    # A folder holding files, no dataset mounted there: refused as well, the folder named.
    zfs("set", f"mountpoint={tmp_path / 'srv'}", ds)
    zfs("snapshot", f"{ds}@t")
    zfs("unmount", ds)
    (tmp_path / "srv").mkdir(exist_ok=True)
    (tmp_path / "srv" / "index.html").write_text("the destination's own site\n")
    r = lab.zmigrate("send", "-R", f"lab-src:{ds}@t", f"lab-dst:{dst.name}/home")
    assert r.returncode != 0
    assert (f"would mount on {tmp_path / 'srv'} (a folder that holds files)"
            in r.stderr), r.stderr
    assert (tmp_path / "srv" / "index.html").read_text() == "the destination's own site\n"
    assert not dataset_exists(f"{dst.name}/home")
    # Inherited mountpoints: the copy mounts under its new parent, a free path: it goes.
    zfs("inherit", "mountpoint", ds)
    zfs("create", f"{ds}/bob")
    zfs("snapshot", "-r", f"{ds}@u")
    r = lab.zmigrate("send", "-R", f"lab-src:{ds}@u", f"lab-dst:{dst.name}/home")
    assert r.returncode == 0, r.stderr + r.stdout
    assert zfs("get", "-H", "-o", "value", "mountpoint", f"{dst.name}/home/bob").strip() \
        == str(dst.mountpoint / "home" / "bob")
    # The next -R is incremental: a child new on the source since then, with a mountpoint of
    # its own the destination uses, would arrive mounted there. Refused, as a full one is.
    www = tmp_path / "www"
    zfs("create", "-o", f"mountpoint={www}", f"{ds}/www")
    (www / "index.html").write_text("the source's site\n")
    zfs("snapshot", "-r", f"{ds}@v")
    r = lab.zmigrate("send", "-R", f"lab-src:{ds}@v", f"lab-dst:{dst.name}/home")
    assert r.returncode != 0, r.stdout + r.stderr
    assert (f"{dst.name}/home/www would mount on {www} (where {ds}/www is mounted)"
            in r.stderr), r.stderr
    assert not dataset_exists(f"{dst.name}/home/www")
    assert "@v" not in zfs("list", "-H", "-t", "snapshot", "-o", "name", "-r",
                           f"{dst.name}/home")
    assert (www / "index.html").read_text() == "the source's site\n"


def test_a_two_host_go_live_refuses_paths_in_use_on_the_destination(
        lab: Lab, pools: tuple[Pool, Pool], tmp_path: Path) -> None:
    """Without a mount root, the copy would take the source's paths - which the destination
    (this same machine) has mounted: refused before anything changes, the path named, and
    since both names reach one machine (its probe's boot), how to swap the copy in place."""
    old, new = pools
    zfs("create", f"{old.name}/t")
    zfs("create", f"{old.name}/t/a")
    write_random_files(old.mountpoint / "t" / "a" / "files", 1, files=2)
    env = {**lab.env(), "ZMIGRATE_DATA_DIR": str(tmp_path / "data")}
    r = zmigrate(env, "send", "-r", f"lab-src:{old.name}/t", f"lab-dst:{new.name}/t",
                 "--snapshot", "--buffer", "16M", "--final")
    assert r.returncode == 0, r.stderr + r.stdout
    before = {p: zfs("get", "-H", "-o", "value", p, f"{new.name}/t").strip()
              for p in ("mountpoint", "readonly", "mounted")}
    r = zmigrate(env, "go-live", f"lab-src:{old.name}/t", f"lab-dst:{new.name}/t", "--yes")
    assert r.returncode != 0, r.stdout + r.stderr
    assert (f"going live would mount over what the destination already uses: {new.name}/t "
            f"would mount on {old.mountpoint / 't'} (where {old.name}/t is mounted)"
            in r.stderr), r.stderr
    assert "--mount-root PATH" in r.stderr
    assert "lab-src and lab-dst are one machine (the same boot, as probed)" in r.stderr
    assert f"name the source lab-dst:{old.name}/t so going live swaps the copy in place" \
        in r.stderr
    assert {p: zfs("get", "-H", "-o", "value", p, f"{new.name}/t").strip()
            for p in before} == before
    assert zfs("get", "-H", "-o", "value", "mounted", f"{old.name}/t/a").strip() == "yes"


def test_a_plain_send_over_a_folder_holding_files_is_refused_or_lists_it_as_hidden(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """A new dataset received mounted takes its parent's mountpoint and its own name: a
    folder of that name holding files would be hidden under it. Refused without --force
    (the folder named, left as it is); with --force the plan lists it as hidden."""
    src, dst = pools
    ds = f"{src.name}/home"
    zfs("create", ds)
    write_random_files(src.mountpoint / "home", 1, files=1)
    zfs("snapshot", f"{ds}@s")
    folder = dst.mountpoint / "home"
    folder.mkdir()
    (folder / "mine.txt").write_text("the destination's own\n")
    r = lab.zmigrate("send", "--json", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/home")
    assert r.returncode != 0, r.stdout + r.stderr
    error = r.events[-1]
    assert error["reason"] == "mount_collision", error
    assert (f"{dst.name}/home would mount on {folder} (a folder that holds files)"
            in error["message"]), error
    assert "or pass --force to mount it there anyway" in error["fix"], error
    assert not dataset_exists(f"{dst.name}/home")
    assert (folder / "mine.txt").read_text() == "the destination's own\n"
    args = ("send", "--force", "--dry-run", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/home")
    dry = lab.zmigrate(*args)
    assert dry.returncode == 0, dry.stderr
    assert (f"Will be hidden on lab-dst:\n  - the files in the folder {folder} (hidden while "
            f"{dst.name}/home is mounted over it (--force))") in dry.stdout, dry.stdout
    dry = lab.zmigrate(*args, "--json")
    plan = dry.of("plan")[0]
    assert [(x["kind"], x["name"]) for x in plan["destroys"]] == [("hidden", str(folder))]
    # A free folder (or none): nothing to list, one command more at most.
    r = lab.zmigrate("send", "--json", f"lab-src:{ds}@s", f"lab-dst:{dst.name}/other")
    assert r.returncode == 0, r.stderr
    done = r.of("done")[0]
    # Over private, the step's keys take one more (tcp: 7 today).
    keys = 1 if r.of("plan")[0]["transport"] == "private" else 0
    assert done["remote_commands"]["destination"] <= 8 + keys, done["remote_commands"]
