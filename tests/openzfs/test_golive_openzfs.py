"""Go live and back on a real OpenZFS 2.3 host, two pools as two hosts: after a final sync the
copy goes live under a chosen root, an encrypted child whose key is not loaded is named with
its `zfs load-key` (not skipped silently), and going back undoes it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lab.losses import shown_in_json
from lab.util import Run

from .cli import cli, send_ok, two_hosts_config
from .losses import GuestLossWatch
from .vm import Vm

# A final sync, go-live and going back on the emulated (TCG) guest: 600 s ran out going back
# on a loaded machine (the first two steps had taken 500 s).
pytestmark = [pytest.mark.openzfs, pytest.mark.timeout(1500)]


def _go_live(vm: Vm, config: Path, data: Path, *args: str) -> Run:
    return cli(vm, "go-live", *args, config=config, data=data, timeout=600)


def _get(vm: Vm, ds: str, prop: str) -> str:
    return vm.ssh(f"zfs get -H -o value {prop} {ds}").stdout.strip()


@pytest.fixture
def tree(vm: Vm, tag: str) -> Iterator[str]:
    """srcpool/TAG: home (a file) and enc (passphrase from a key file) with a child."""
    root, key = f"srcpool/{tag}", f"/root/{tag}.pass"
    vm.ssh(f"""set -e
umask 077; printf %s 'lane-{tag}-pass' > {key}; umask 022
zfs create {root}
zfs create {root}/home
zfs create -o encryption=on -o keyformat=passphrase -o keylocation=file://{key} {root}/enc
zfs create {root}/enc/child
head -c 1M /dev/urandom > /{root}/home/f1
echo secret > /{root}/enc/child/s
""", timeout=300)
    yield root
    vm.ssh(f"rm -f {key}; rmdir /mnt/{tag}/home /mnt/{tag} 2>/dev/null; true", check=False)


def test_go_live_names_the_key_to_load_and_goes_back(vm: Vm, tag: str, tree: str,
                                                     tmp_path: Path) -> None:
    root, copy, mount_root = tree, f"dstpool/{tag}", f"/mnt/{tag}"
    config = two_hosts_config(vm, tmp_path)
    data = tmp_path / "data"
    send_ok(vm, config, "-r", f"openzfs-vm:{root}", f"openzfs-dst:{copy}", "--snapshot",
            "--final", timeout=900)
    assert _get(vm, f"{copy}/enc", "keystatus") == "unavailable"
    args = (f"openzfs-vm:{root}", f"openzfs-dst:{copy}", "--mount-root", mount_root)
    r = _go_live(vm, config, data, *args, "--yes", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    plan: dict[str, Any] = r.of("go_live_plan")[0]
    # Two hosts: the source is kept as it is, only read-only while live.
    assert all(s["side"] == "destination" or s["command"].startswith("zfs set readonly=on ")
               for s in plan["steps"])
    assert any(f"zfs load-key {copy}/enc`" in n for n in plan["notes"]), plan["notes"]
    assert _get(vm, f"{copy}/home", "mounted") == "yes"
    assert _get(vm, f"{copy}/home", "mountpoint") == f"{mount_root}/home"
    assert _get(vm, f"{copy}/home", "readonly") == "off"
    assert _get(vm, f"{copy}/enc", "mounted") == "no"  # its key is the user's to load
    vm.ssh(f"cmp /{root}/home/f1 {mount_root}/home/f1 && touch {mount_root}/home/written")
    assert _get(vm, f"{root}/home", "mounted") == "yes"  # another host's: left as it is
    r = _go_live(vm, config, data, *args[:2], "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    assert _get(vm, f"{copy}/home", "mounted") == "no"
    assert _get(vm, f"{copy}/home", "readonly") == "on"
    assert _get(vm, copy, "mountpoint") != mount_root
    assert "carried back: " in r.stderr, r.stderr  # the write, sent back to the source
    vm.ssh(f"test -e /{root}/home/written")


def _source_of(vm: Vm, path: str) -> str:
    """The dataset mounted at `path` in the guest."""
    return vm.ssh(f"findmnt -n -o SOURCE --mountpoint {path}; true").stdout.strip()


def test_old_pool_to_new_pool_on_one_host_busy_then_live_then_back(
        vm: Vm, tag: str, tree: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, copy = tree, f"dstpool/{tag}"
    config = two_hosts_config(vm, tmp_path)
    data = tmp_path / "data"
    # The final sync is recorded where going live and back read it (one history, as one
    # user's zmigrate has): the source's readonly before it, put back when going back.
    monkeypatch.setenv("ZMIGRATE_DATA_DIR", str(data))
    send_ok(vm, config, "-r", f"openzfs-vm:{root}", f"openzfs-vm:{copy}", "--snapshot",
            "--final", timeout=900, history=True)
    # Held until it goes live: what a reboot's `zfs mount -a` does mounts none of the copy.
    assert _get(vm, copy, "canmount") == _get(vm, f"{copy}/home", "canmount") == "noauto"
    vm.ssh("zfs mount -a", check=False)  # (the copy's encrypted child has no key loaded)
    assert _get(vm, copy, "mounted") == _get(vm, f"{copy}/home", "mounted") == "no"
    home = f"/{root}/home"
    args = (f"openzfs-vm:{root}", f"openzfs-vm:{copy}")
    # A process in the source's folder (a guest shell's working directory): refused first.
    pid = vm.ssh(f"cd {home} && {{ sleep 300 >/dev/null 2>&1 </dev/null & echo $!; }}"
                 ).stdout.strip()
    try:
        r = _go_live(vm, config, data, *args, "--yes")
    finally:
        vm.ssh(f"kill {pid}", check=False)
    assert r.returncode != 0
    assert f"{home} is in use by PID {pid} (sleep); nothing was changed" in r.stdout + r.stderr
    assert _source_of(vm, home) == f"{root}/home"
    assert _get(vm, f"{root}/home", "canmount") == "on"
    # Nothing lost unseen on either pool (the invariant, read in the guest): going live
    # hides the source's mounted datasets (its list names each), going back the copy's.
    watches = [GuestLossWatch(vm, root), GuestLossWatch(vm, copy)]
    for w in watches:
        w.start()
    r = _go_live(vm, config, data, *args, "--yes", "--json")
    assert r.returncode == 0, r.stderr + r.stdout
    shown = shown_in_json(r.stdout)
    assert {(x["kind"], x["name"]) for x in shown} >= {("unmounted", f"{root}/home"),
                                                       ("unmounted", f"{root}/enc/child")}
    for w in watches:
        w.check(shown)
    assert _source_of(vm, home) == f"{copy}/home"  # the same path, the new pool
    vm.ssh(f"touch {home}/written")  # writable: the copy, in service
    assert _get(vm, f"{copy}/home", "canmount") == "on"  # as on the source
    assert _get(vm, f"{root}/home", "canmount") == "noauto"
    assert _get(vm, f"{root}/enc/child", "mounted") == "no"  # out of the way too
    shown = shown_in_json(_go_live(vm, config, data, *args, "--back", "--dry-run",
                                   "--json").stdout)
    assert ("unmounted", f"{copy}/home") in {(x["kind"], x["name"]) for x in shown}, shown
    for w in watches:
        w.start()
    r = _go_live(vm, config, data, *args, "--back", "--yes")
    assert r.returncode == 0, r.stderr + r.stdout
    for w in watches:
        w.check(shown)
    # The old pool again, with what was written while live carried back, writable as it
    # was before the final sync.
    assert _source_of(vm, home) == f"{root}/home"
    ro = vm.ssh(f"zfs get -r -H -o name,value,source,received readonly {root}").stdout
    assert vm.ssh(f"test -e {home}/written && touch {home}/x", check=False).returncode == 0, \
        ro + r.stderr
    assert _get(vm, f"{root}/home", "canmount") == "on"
    assert _get(vm, f"{copy}/home", "mounted") == "no" and _get(vm, copy, "mounted") == "no"
    assert _get(vm, f"{copy}/home", "canmount") == "noauto"  # held again
