"""A pool move into a pool too small for it, on OpenZFS 2.3: three thick volumes (a Proxmox
VM's disks: 100 MiB each, reserved whole, 4 MiB written) into a pool with about 120 MiB free.

The data fits, the reservations do not: zfs receive took every volume and left out the
refreservation of those it had no room for ("cannot receive refreservation property on ...: size
is greater than available space", exit 0). The plan says before anything moves that the copy
will likely not fit; the run fails naming zfs's reason, with the fix that works (-x
refreservation), which then arrives verified with thin volumes. A catch-up bigger than what
is left there is said by its dry run too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import send, send_ok, two_hosts_config
from .vm import Vm

pytestmark = pytest.mark.openzfs


def test_thick_volumes_into_a_small_pool_are_said_first_and_go_thin_with_the_fix(
        vm: Vm, tmp_path: Path, small_pool: str, tree: str) -> None:
    root = f"srcpool/{tree}"
    vm.ssh(f"zfs create {root} && for i in 1 2 3; do zfs create -V 100M {root}/vm-10$i-disk-0; "
           f"done; udevadm settle; for i in 1 2 3; do dd if=/dev/urandom "
           f"of=/dev/zvol/{root}/vm-10$i-disk-0 bs=1M count=4 status=none; done; "
           f"zfs snapshot -r {root}@s1")
    config = two_hosts_config(vm, tmp_path)
    args = ("-r", f"openzfs-vm:{root}@s1", f"openzfs-dst:{small_pool}/t")
    planned = send_ok(vm, config, *args, "--dry-run")
    room = planned[-1]["room"]
    assert room["short"] and room["where"] == small_pool, room
    r = send(vm, config, *args)
    errors = r.of("error")
    assert r.returncode != 0 and errors, r.stderr + r.stdout[-2000:]
    assert "refreservation (zfs receive said refreservation: size is greater than available " \
        "space)" in errors[-1]["message"], errors[-1]
    assert "-x refreservation" in errors[-1]["fix"] and "data arrived" in errors[-1]["fix"]
    assert "run the same command again" not in errors[-1]["fix"]
    vm.ssh(f"zfs destroy -r {small_pool}/t")
    thin = send_ok(vm, config, *args, "-x", "refreservation", "--dry-run")
    assert not thin[-1]["room"]["short"], thin[-1]["room"]
    send_ok(vm, config, *args, "-x", "refreservation")
    refres = vm.ssh(f"zfs get -H -r -t volume -o value refreservation {small_pool}/t").stdout
    assert refres.split() == ["none"] * 3
    # A catch-up that will not fit either: 60 MiB more written into each volume (180 MiB),
    # against what the small pool has left. Said by the dry run, before anything moves.
    vm.ssh(f"for i in 1 2 3; do dd if=/dev/urandom of=/dev/zvol/{root}/vm-10$i-disk-0 bs=1M "
           f"seek=4 count=60 status=none; done; sync; zfs snapshot -r {root}@s2")
    catch_up = send_ok(vm, config, "-r", f"openzfs-vm:{root}@s2", f"openzfs-dst:{small_pool}/t",
                       "-x", "refreservation", "--dry-run")
    room = catch_up[-1]["room"]
    assert room["short"] and room["needed"] == 0, room
    assert 170 * 2**20 < room["changes"] < 200 * 2**20, room
