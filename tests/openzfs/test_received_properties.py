"""A property `zfs receive` leaves out is said, not verified over (OpenZFS 2.3, as root).

A pool kept compatible with GRUB (`compatibility=grub2`, as Ubuntu's boot pool is) cannot hold
compression=zstd: zfs receive takes the data, prints "cannot receive compression property on
DS: pool and or dataset must be upgraded ..." and exits 0, whether the property was given with
`-o` or carried by a `-R` stream. zmigrate reads the copy back, fails the job naming the property,
zfs's reason (its line, which may follow the receiving mbuffer's last status line on the same
line) and the `zfs set` line, and keeps the copy (its guid is the source's); into a pool that
has the feature the same send is verified.

Blocks sent as stored (-c) from a pool where zstd is active need the feature to be received
at all ("pool must be upgraded to receive this stream"), so zmigrate reads both pools' features
and leaves -c out into this one, saying so (destination/pool_features.py); the data then goes
as plain records and only the property is left out.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import send, send_ok, two_hosts_config
from .test_openzfs import _data, _guid, _prop
from .vm import Vm

pytestmark = pytest.mark.openzfs
UPGRADE = "pool and or dataset must be upgraded"


def _failure(vm: Vm, config: Path, *args: str) -> dict[str, object]:
    r = send(vm, config, *args)
    assert r.returncode != 0, r.stdout[-2000:]
    errors = r.of("error")
    assert errors, r.stderr + r.stdout[-2000:]
    print(f"\nFAILED AS: {errors[-1]}")
    return errors[-1]


def test_a_carried_property_the_pool_cannot_hold_fails_the_job_and_keeps_the_copy(
        vm: Vm, tmp_path: Path, grub_pool: str, tag: str) -> None:
    src = f"srcpool/{tag}"
    _data(vm, src, 2, snap=None)
    _data(vm, f"{src}/child", 1, snap=None)
    vm.ssh(f"zfs set compression=zstd {src} && zfs set user:note=kept {src} && "
           f"zfs snapshot -r {src}@s1")
    # Made after the snapshot, so not in the stream: its property is not looked for.
    vm.ssh(f"zfs create -o user:late=1 {src}/late")
    config = two_hosts_config(vm, tmp_path)
    # -c is left out (test_pool_features.py): the data arrives, the property does not.
    error = _failure(vm, config, "-R", f"openzfs-vm:{src}@s1", f"openzfs-dst:{grub_pool}/c")
    message, fix = str(error["message"]), str(error["fix"])
    assert f"did not set compression on {grub_pool}/c ({UPGRADE}" in message, error
    assert f"{grub_pool}/c/child" not in message, error  # it inherits: nothing was lost
    assert "late" not in message, error
    assert "zfs get -s local,received compression" in fix, error
    # Kept as it arrived: both datasets, guids equal, the property zfs could set set.
    for ds in ("", "/child"):
        assert _guid(vm, f"{grub_pool}/c{ds}@s1") == _guid(vm, f"{src}{ds}@s1")
    assert _prop(vm, f"{grub_pool}/c", "user:note") == "kept"
    # Where the pool has the feature, the same send is verified.
    send_ok(vm, config, "-R", f"openzfs-vm:{src}@s1", f"openzfs-dst:dstpool/{tag}")
    assert _prop(vm, f"dstpool/{tag}", "compression") == "zstd"


def test_a_given_property_the_pool_cannot_hold_fails_the_job_with_its_zfs_set_line(
        vm: Vm, tmp_path: Path, grub_pool: str, tag: str) -> None:
    src = f"srcpool/{tag}"
    _data(vm, src, 2)
    config = two_hosts_config(vm, tmp_path)
    error = _failure(vm, config, f"openzfs-vm:{src}@s1", f"openzfs-dst:{grub_pool}/o",
                     "-o", "compression=zstd", "-o", "user:note=given")
    message, fix = str(error["message"]), str(error["fix"])
    assert f"did not set compression=zstd on {grub_pool}/o ({UPGRADE}" in message, error
    assert "user:note" not in message, error  # set: only what zfs left out is named
    assert f"zfs set compression=zstd {grub_pool}/o" in fix, error
    assert _guid(vm, f"{grub_pool}/o@s1") == _guid(vm, f"{src}@s1")
    assert _prop(vm, f"{grub_pool}/o", "user:note") == "given"
    send_ok(vm, config, f"openzfs-vm:{src}@s1", f"openzfs-dst:dstpool/{tag}",
            "-o", "compression=zstd")
    assert _prop(vm, f"dstpool/{tag}", "compression") == "zstd"
