"""End to end on the lab: an existing destination dataset without snapshots is replaced only when
it is proven empty, or with --force after the plan named what it holds (issue 30 item 1).

Real zfs-fuse pools, real sshd, the CLI as a user runs it; a real non-root user with the sudoers
line of docs/permissions.md for the sudo case.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab.sshd import Lab, LabHost
from lab.sudo_user import SudoUser
from lab.util import dataset_exists, snapshot_guid, write_random_files, zfs
from lab.zfsfuse import Pool, PoolFactory, ZfsDaemon

pytestmark = pytest.mark.lab
NOTES = "my only copy of these notes\n"


def _source(pool: Pool) -> str:
    ds = f"{pool.name}/data"
    zfs("create", ds)
    write_random_files(pool.mountpoint / "data", 2, files=3)
    zfs("snapshot", f"{ds}@s")
    return f"{ds}@s"


def _holding_notes(pool: Pool, name: str = "data") -> tuple[str, Path]:
    """A dataset created on the destination holding one small file, notes.txt."""
    target = f"{pool.name}/{name}"
    zfs("create", target)
    notes = Path(zfs("get", "-H", "-o", "value", "mountpoint", target).strip()) / "notes.txt"
    notes.write_text(NOTES)
    return target, notes


def test_a_dataset_holding_a_file_is_refused_mounted_or_not_and_force_says_what_it_replaces(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    src, dst = pools
    snapshot = _source(src)
    target, notes = _holding_notes(dst)
    zfs("unmount", target)
    # Unmounted: nothing can be listed, and ZFS's figure is above a fresh dataset's.
    r = lab.zmigrate("send", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode != 0, r.stdout + r.stderr
    assert f"the destination {target} already exists: it holds" in r.stderr, r.stderr
    assert "more than a fresh dataset (it is not mounted" in r.stderr, r.stderr
    assert f"mount it (zfs mount {target})" in r.stderr
    assert f"--force to replace the whole content of {target}" in r.stderr
    zfs("mount", target)
    assert notes.read_text() == NOTES
    # Mounted: its directory is listed, and the refusal names the file.
    r = lab.zmigrate("send", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode != 0
    assert "it holds 1 file(s) or folder(s) (notes.txt)" in r.stderr, r.stderr
    assert notes.read_text() == NOTES
    # --force: the dry run (and its --json) say by name what is replaced, before anything runs.
    r = lab.zmigrate("send", "--dry-run", "--force", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode == 0, r.stderr
    assert (f"warning: --force replaces the WHOLE content of {target} with the copy, without "
            "a snapshot of it; lost: 1 file or folder: notes.txt;") in r.stdout, r.stdout
    assert f"The whole content of {target} is replaced by the copy (--force)" in r.stdout
    r = lab.zmigrate("send", "--dry-run", "--json", "--force", f"lab-src:{snapshot}",
                     f"lab-dst:{target}")
    plan = r.events[0]
    assert plan["replaces"]["entries"] == ["notes.txt"] and plan["replaces"]["empty"] is False
    assert notes.read_text() == NOTES
    r = lab.zmigrate("send", "--force", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode == 0, r.stderr + r.stdout
    assert f"warning: --force replaces the WHOLE content of {target}" in r.stderr, r.stderr
    assert snapshot_guid(snapshot) == snapshot_guid(f"{target}@s")
    mounted = Path(zfs("get", "-H", "-o", "value", "mountpoint", target).strip())
    assert not (mounted / "notes.txt").exists()


def test_a_fresh_unmounted_dataset_is_proven_empty_by_its_figure(
        lab: Lab, pools: tuple[Pool, Pool]) -> None:
    """Created and never written: it references exactly what a fresh dataset does, so it takes
    the copy as itself without --force (the one case ZFS's figures prove)."""
    src, dst = pools
    snapshot = _source(src)
    target = f"{dst.name}/fresh"
    zfs("create", target)
    zfs("unmount", target)
    r = lab.zmigrate("send", "--dry-run", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode == 0, r.stderr
    assert (f"{target} is empty (no snapshots, no children, not mounted, 112 KiB "
            "referenced: what a fresh dataset references)") in r.stdout, r.stdout
    r = lab.zmigrate("send", f"lab-src:{snapshot}", f"lab-dst:{target}")
    assert r.returncode == 0, r.stderr
    assert snapshot_guid(snapshot) == snapshot_guid(f"{target}@s")


@pytest.fixture
def open_pool(zfs_daemon: ZfsDaemon) -> Iterator[Pool]:
    """A destination pool mounted under a directory every user may enter (pytest's own
    temporary directories are root's alone), so the sudo user's listing is a real one."""
    root = Path(tempfile.mkdtemp(prefix="zmigrate-open-"))
    os.chmod(root, 0o755)
    factory = PoolFactory(root / "pools")
    try:
        factory.root.mkdir(mode=0o755)
        (factory.root / "mnt").mkdir(mode=0o755)
        yield factory("open")
    finally:
        factory.cleanup()
        for d in (factory.root / "mnt", factory.root, root):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()


def test_a_sudo_user_with_the_documented_sudoers_gets_the_same_refusal(
        lab: Lab, sudo_host: tuple[LabHost, SudoUser], make_pool: PoolFactory,
        open_pool: Pool) -> None:
    """`sudo -n ls` is refused by the documented line (zfs, pkill, pgrep): the directory is
    listed by the user itself, and a failed listing would count as "not empty" anyway."""
    host, user = sudo_host
    assert "/usr/sbin/zfs, /usr/bin/pkill, /usr/bin/pgrep" in user.line
    denied = subprocess.run(["sudo", "-n", "-u", user.name, "sudo", "-n", "ls", "/"],
                            capture_output=True, text=True, check=False)
    assert denied.returncode != 0  # the documented sudoers has no ls
    src = make_pool("src")
    snapshot = _source(src)
    target, notes = _holding_notes(open_pool)
    r = lab.zmigrate("send", "--sudo-destination", f"lab-src:{snapshot}",
                     f"{host.alias}:{target}")
    assert r.returncode != 0, r.stdout + r.stderr
    assert "it holds 1 file(s) or folder(s) (notes.txt)" in r.stderr, r.stderr
    assert notes.read_text() == NOTES
    zfs("unmount", target)
    r = lab.zmigrate("send", "--sudo-destination", f"lab-src:{snapshot}",
                     f"{host.alias}:{target}")
    assert r.returncode != 0
    assert "more than a fresh dataset (it is not mounted" in r.stderr, r.stderr
    zfs("mount", target)
    assert notes.read_text() == NOTES
    assert dataset_exists(target) and "@" not in zfs("list", "-H", "-o", "name", "-t",
                                                     "snapshot", "-r", target)


def test_a_folder_the_sudo_login_cannot_list_is_not_mounted_over(
        lab: Lab, sudo_host: tuple[LabHost, SudoUser], make_pool: PoolFactory,
        open_pool: Pool) -> None:
    """A new copy would mount on a folder of root's, mode 0700, that holds a file: the sudo
    login cannot list it (the documented sudoers has no ls), so it may hold files. The send is
    refused, naming the folder and why, before anything runs; with --force the plan names it
    as hidden. (Before, a folder the login could not list counted as free.)"""
    host, _user = sudo_host
    src = make_pool("src")
    snapshot = _source(src)
    target = f"{open_pool.name}/copy"
    folder = open_pool.mountpoint / "copy"
    folder.mkdir(mode=0o700)
    (folder / "notes.txt").write_text(NOTES)
    r = lab.zmigrate("send", "--sudo-destination", f"lab-src:{snapshot}",
                     f"{host.alias}:{target}")
    assert r.returncode != 0, r.stdout + r.stderr
    assert (f"{target} would mount on {folder} (a folder the login cannot list (it may hold "
            "files))") in r.stderr, r.stderr
    assert not dataset_exists(target)
    r = lab.zmigrate("send", "--dry-run", "--force", "--sudo-destination", f"lab-src:{snapshot}",
                     f"{host.alias}:{target}")
    assert r.returncode == 0, r.stderr
    assert f"{folder}" in r.stdout and "hidden while" in r.stdout, r.stdout
    assert (folder / "notes.txt").read_text() == NOTES
    assert not dataset_exists(target)
