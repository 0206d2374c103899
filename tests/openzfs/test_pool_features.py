"""A stream the destination's pool can receive, chosen from both pools' features (OpenZFS 2.3).

srcpool has zstd active (its datasets are made with compression=zstd here); a pool kept
compatible with GRUB has no zstd. Blocks sent as stored (-c) from such a dataset made zfs
receive refuse the whole stream ("pool must be upgraded to receive this stream"): zmigrate now
leaves -c out into that pool and says so, and the tree arrives, verified (its `-x compression`
leaves the pool's own: the tree's check no longer counts a property the receive decides, `-o` or
`-x`, as differing). An encrypted dataset into it (no feature@encryption) is refused before
anything runs, with nothing created there, as a tree and alone; so is one whose blocks are
zstd-compressed into a pool that has encryption but no zstd (a raw stream carries them as
stored: zfs receive refused it, "pool must be upgraded"), and --decrypt then takes it there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli import send, send_ok, two_hosts_config
from .test_openzfs import _data, _guid
from .vm import Vm

pytestmark = pytest.mark.openzfs


def test_a_tree_goes_into_a_pool_without_zstd_as_plain_records(
        vm: Vm, tmp_path: Path, grub_pool: str, tree: str) -> None:
    root = f"srcpool/{tree}"
    _data(vm, root, 2, snap=None, extra="-o compression=zstd")
    _data(vm, f"{root}/child", 1, snap=None)
    vm.ssh(f"zfs snapshot -r {root}@s1")
    # The copy's compression is the pool's own: zstd, which it cannot hold, is left out.
    events = send_ok(vm, two_hosts_config(vm, tmp_path), "-r", f"openzfs-vm:{root}@s1",
                     f"openzfs-dst:{grub_pool}/t", "-x", "compression")
    plans = [e for e in events if e.get("event") == "plan"]
    assert plans and all("-c" not in p["send_flags"] for p in plans), plans
    said = [str(e["detail"]) for e in events if e.get("event") == "stage"]
    assert any(f"pool {grub_pool} lacks feature@zstd_compress, so zfs send -c is left out"
               in d for d in said), said
    for ds in ("", "/child"):
        assert _guid(vm, f"{grub_pool}/t{ds}@s1") == _guid(vm, f"{root}{ds}@s1")


def _encrypted_refused(vm: Vm, config: Path, tree: str, pool: str, extra: str,
                       said: tuple[str, ...], feature: str) -> str:
    """srcpool/TREE with an encrypted child (its passphrase in a key file that `tree` removes;
    `extra`: its other properties), snapshotted; sent as a tree and alone into `pool`: each
    refused before anything runs, saying `said` and the `zpool set` of `feature`, with nothing
    made there. The tree's root."""
    root = f"srcpool/{tree}"
    vm.ssh(f"umask 077; printf %s lane-{tree}-pass > /root/{tree}.pass")
    _data(vm, root, 1, snap=None)
    _data(vm, f"{root}/secret", 2, snap=None, extra="-o encryption=on -o keyformat=passphrase "
          f"-o keylocation=file:///root/{tree}.pass {extra}")
    vm.ssh(f"zfs snapshot -r {root}@s1")
    for args in (("-r", f"openzfs-vm:{root}@s1"), (f"openzfs-vm:{root}/secret@s1",)):
        r = send(vm, config, *args, f"openzfs-dst:{pool}/e")
        errors = r.of("error")
        assert r.returncode != 0 and errors, r.stderr + r.stdout[-2000:]
        assert all(words in errors[-1]["message"] for words in said), errors[-1]
        assert f"zpool set feature@{feature}=enabled {pool}" in errors[-1]["fix"]
        assert vm.ssh(f"zfs list -H -o name -r {pool}").stdout.split() == [pool]
    return root


def test_an_encrypted_dataset_into_a_pool_without_encryption_is_refused_before_anything(
        vm: Vm, tmp_path: Path, grub_pool: str, tree: str) -> None:
    _encrypted_refused(vm, two_hosts_config(vm, tmp_path), tree, grub_pool, "",
                       (f"pool {grub_pool} cannot hold encrypted datasets",), "encryption")


def test_an_encrypted_zstd_dataset_raw_into_a_pool_without_zstd_is_refused_then_decrypted(
        vm: Vm, tmp_path: Path, encrypting_pool: str, tree: str) -> None:
    config = two_hosts_config(vm, tmp_path)
    root = _encrypted_refused(
        vm, config, tree, encrypting_pool, "-o compression=zstd",
        (f"pool {encrypting_pool} lacks feature@zstd_compress, and ",
         "so they cannot go decompressed"), "zstd_compress")
    # The fix it names: decrypted, its blocks go as plain records and arrive, verified.
    send_ok(vm, config, f"openzfs-vm:{root}/secret@s1", f"openzfs-dst:{encrypting_pool}/d",
            "--decrypt")
    assert _guid(vm, f"{encrypting_pool}/d@s1") == _guid(vm, f"{root}/secret@s1")
    assert vm.ssh(f"zfs get -H -o value encryption {encrypting_pool}/d").stdout.strip() == "off"
